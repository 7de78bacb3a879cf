"""One parametrized driver for every rule's YAML file of cases (tests/checks/cases/<CODE>.yaml).

A case edits a small clean sources folder, names the findings it expects (key path, the text the
reported line:col points at, words of the message, severity) and, for fixable findings, the texts
after `--fix`. The driver also checks that the fixed sources pass and that a second fix changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jbcompile.checks import all_rules, fix_sources, run_checks
from jbcompile.diagnostics import Diagnostic, render
from jbcompile.project import load_project

CASES = Path(__file__).parent / "cases"
FILES = {"template": "templates/Age/t.yaml", "vocab": "vocab/Age.yaml", "dataset": "dataset.yaml"}


def _cases() -> list[Any]:
    params = []
    for path in sorted(CASES.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text("utf-8"))
        for case in spec["cases"]:
            params.append(pytest.param(spec["rule"], case, id=f"{spec['rule']}: {case['name']}"))
    return params


def _points_at(diagnostic: Diagnostic, text: str) -> bool:
    assert diagnostic.path and diagnostic.line and diagnostic.col
    line = Path(diagnostic.path).read_text("utf-8").splitlines()[diagnostic.line - 1]
    return line[diagnostic.col - 1 :].startswith(text)


def _matches(diagnostic: Diagnostic, want: dict[str, Any], root: Path) -> bool:
    file = FILES.get(want.get("file", "template"), want.get("file"))
    return (
        Path(diagnostic.path or "").resolve() == (root / file).resolve()
        and list(diagnostic.key_path or ()) == want["key_path"]
        and want.get("message", "") in diagnostic.message
        and ("severity" not in want or str(diagnostic.severity) == want["severity"])
        and ("at" not in want or _points_at(diagnostic, want["at"]))
    )


def _findings(root: Path, code: str, release: bool = False) -> list[Diagnostic]:
    return [d for d in run_checks(load_project(root), only=[code], release=release) if d.code == code]


def _value(root: Path, file: str, key_path: list) -> Any:
    data = yaml.safe_load((root / FILES.get(file, file)).read_text("utf-8"))
    for key in key_path:
        data = data[key]
    return data


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.rglob("*.yaml"))}


@pytest.mark.parametrize(("code", "case"), _cases())
def test_rule_case(code: str, case: dict[str, Any], sources) -> None:
    root = sources(case.get("sources"))
    release = case.get("release", False)
    found = _findings(root, code, release)
    expected = case.get("findings", [])
    unmatched = list(found)
    for want in expected:
        match = next((d for d in unmatched if _matches(d, want, root)), None)
        assert match is not None, f"expected {want}, found:\n{render(found)}"
        unmatched.remove(match)
    assert not unmatched, f"unexpected findings:\n{render(unmatched)}"

    if "fixed" not in case:
        return
    report = fix_sources(root, only=[code], release=release)
    assert report.converged and report.edits_applied > 0
    for want in case["fixed"]:
        assert _value(root, want.get("file", "template"), want["key_path"]) == want["text"]
    assert not [d for d in _findings(root, code, release) if d.edits], "the fixed sources still have fixes"
    before = _snapshot(root)
    again = fix_sources(root, only=[code], release=release)
    assert again.edits_applied == 0 and _snapshot(root) == before


def test_every_rule_has_a_firing_and_a_passing_case() -> None:
    by_rule: dict[str, list[dict]] = {}
    for path in CASES.glob("*.yaml"):
        spec = yaml.safe_load(path.read_text("utf-8"))
        assert path.stem == spec["rule"]
        by_rule[spec["rule"]] = spec["cases"]
    for rule in all_rules():
        if not rule.code.startswith("JA1"):
            continue  # the runner's own codes are tested in test_checks_runner.py
        cases = by_rule.get(rule.code)
        assert cases, f"no case file for {rule.code}"
        assert any(c.get("findings") for c in cases), f"{rule.code} has no firing case"
        assert any(not c.get("findings") for c in cases), f"{rule.code} has no passing case"
        if rule.fixable:
            assert any("fixed" in c for c in cases), f"{rule.code} is fixable but no case checks the fix"


@pytest.mark.parametrize(
    ("option", "context", "occurs"),
    [
        ("The grandson", "I saw a grandson and their grandfather outside.", True),
        ("the retiree", "The retiree and the student waited.", True),
        ("An engineer", "a nurse and an engineer met.", True),
        ("The Catholic student", "Catholic and Buddhist students talked.", False),
        ("The man with the wheelchair", "one carrying papers, the other using a wheelchair", False),
    ],
)
def test_an_english_answer_wording_is_read_without_its_own_article(
    option: str, context: str, occurs: bool
) -> None:
    """JA111 on BBQ's templates: "The {{NAME1}}" against a context's "a grandson" was 370 of its 613
    warnings; the article aside, the words must still be the context's."""
    from jbcompile.checks.rules.ja109_options import _occurs

    assert _occurs(option, context, "en") is occurs
