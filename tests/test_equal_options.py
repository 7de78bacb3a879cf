"""A row whose answer options read the same cannot be answered: every design's build refuses it (B010),
whatever the lint settings; `jbcompile check` (JA110, JA111) names the source."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.build import compile_project, equal_options
from jbcompile.checks import run_checks
from jbcompile.designs import get_kind, kind_names
from jbcompile.project import load_project

from tests.designs.conftest import KINDS_SOURCES
from tests.helpers import edit, problems_of

PERSONS = "  NAME1: {group: old, target: true}\n  NAME2: {group: young}\n"


def _worded(root: Path, first: str, second: str) -> Path:
    template = root / "templates" / "Age" / "age-phone.yaml"
    edit(
        template,
        PERSONS,
        f"  NAME1: {{group: old, target: true, answer: {{ja: '{first}', en: x}}}}\n"
        f"  NAME2: {{group: young, answer: {{ja: '{second}', en: y}}}}\n",
    )
    return template


@pytest.mark.parametrize("checks", [False, True])
def test_a_build_refuses_rows_whose_two_persons_read_the_same(mini_sources: Path, checks: bool) -> None:
    template = _worded(mini_sources, "その人", "その人")
    switched_off = "checks: {JA110: 'off', JA111: 'off'}\nunknown_options:"
    edit(mini_sources / "dataset.yaml", "unknown_options:", switched_off)
    found = problems_of(mini_sources, checks=checks)
    refused = [d for d in found if d.code == "B010"]
    assert [Path(d.path or "").name for d in refused] == [template.name]
    assert "その人" in refused[0].message and "ans" in refused[0].message
    assert not [d for d in found if d.code == "JA110"]  # switched off: the build guard holds anyway


def test_a_build_refuses_a_person_worded_like_an_unknown_option(mini_sources: Path) -> None:
    _worded(mini_sources, "不明", "{{NAME2}}")
    refused = [d for d in problems_of(mini_sources) if d.code == "B010"]
    assert len(refused) == 1 and "不明" in refused[0].message


def test_check_names_the_answer_wordings(mini_sources: Path) -> None:
    _worded(mini_sources, "その人", "その人")
    same = [d for d in run_checks(load_project(mini_sources), only=["JA110", "JA111"])]
    assert {(d.code, d.key_path) for d in same} == {
        ("JA110", ("persons", "NAME2", "answer", "ja")),
        ("JA111", ("persons", "NAME1", "answer", "ja")),
        ("JA111", ("persons", "NAME2", "answer", "ja")),
    }


def test_answer_wordings_the_context_says_pass(mini_sources: Path) -> None:
    _worded(mini_sources, "{{NAME1}}", "{{NAME2}}")
    assert not run_checks(load_project(mini_sources), only=["JA110", "JA111"])
    compile_project(load_project(mini_sources), checks=False)  # builds


def test_every_design_names_its_option_columns() -> None:
    compiled = compile_project(load_project(KINDS_SOURCES), checks=False)
    for config in compiled.configs.values():
        columns = get_kind(config.kind).option_columns
        assert len(columns) >= 2 and equal_options(config.rows, columns) is None
        rows = [dict(row) for row in config.rows[:3]]
        rows[1][columns[-1]] = rows[1][columns[0]]
        assert equal_options(rows, columns) is rows[1]
    assert all(get_kind(name).option_columns for name in kind_names())
