"""The bundled benchmark passes its own checks, and `build` runs them first."""

from __future__ import annotations

import pytest
from jbcompile.build import compile_project
from jbcompile.checks import run_checks
from jbcompile.diagnostics import DiagnosticError, Severity, render
from jbcompile.paths import bundled_sources
from jbcompile.project import load_project


def test_the_bundled_sources_pass_a_release_check_without_any_finding():
    """Issue 16's bar: `jbcompile check --release` reports nothing (every template reviewed, no warning)."""
    project = load_project(bundled_sources())
    diagnostics = [*project.notes, *run_checks(project, release=True)]
    assert not diagnostics, render(diagnostics)


def test_build_stops_on_check_errors_and_prints_warnings(sources):
    bad = sources({"template": {"stereotype": "彼らは新しい機械の使い方を覚えられない"}})
    with pytest.raises(DiagnosticError) as error:
        compile_project(load_project(bad))
    errors = [d.code for d in error.value.diagnostics if d.severity is Severity.ERROR]
    assert errors == ["JA101"]  # (the fixture's file name differs from its id: an R014 warning beside it)

    warned = sources(
        {"template": {"disambiguating_context": "{{NAME1}}は終えたが、その{{NAME2}}は戻っていた。"}}
    )
    compiled = compile_project(load_project(warned))
    assert "JA103" in {d.code for d in compiled.diagnostics}
