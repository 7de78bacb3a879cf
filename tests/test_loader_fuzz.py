"""Property tests: whatever bytes a source file holds, the tool answers with diagnostics, never a crash."""

from __future__ import annotations

import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jbcompile.diagnostics import DiagnosticError
from jbcompile.loader import parse_yaml
from jbcompile.project import load_project

from tests.conftest import FIXTURES

yaml_ish = st.text(alphabet=st.sampled_from(list("ab:-[]{}\"'#&*!|>%@`\n\t ,?0123456789年「」")), max_size=80)


@settings(max_examples=300, deadline=None)
@given(yaml_ish)
def test_parse_yaml_never_crashes(text: str) -> None:
    try:
        doc = parse_yaml(text, "x.yaml")
    except DiagnosticError as error:
        assert error.diagnostics
        assert all(d.code.startswith("Y") and d.path == "x.yaml" for d in error.diagnostics)
    else:
        assert doc.path == "x.yaml"


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)

FIELDS = [
    "id",
    "category",
    "origin",
    "persons",
    "words",
    "ambiguous_context",
    "disambiguating_context",
    "questions",
    "stereotyped_groups",
    "kind",
    "rationale",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FIELDS), values)
def test_any_field_value_gives_a_diagnostic_or_a_project(tmp_path_factory, field: str, value) -> None:
    import yaml

    root = tmp_path_factory.mktemp("fuzz") / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    path = root / "templates/Age/age-work.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data[field] = value
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    try:
        project = load_project(root)
    except DiagnosticError as error:
        assert error.diagnostics
        assert all(d.path and d.code and d.message for d in error.diagnostics)
    else:
        assert len(project.templates) == 3
