"""The code registry holds the source and the docs together: every code the tool reports is declared once
(jbcompile.codes, the lint rules, a design's spec), used, and documented in the doc section it names;
README.md's table of codes is generated from it; `check --explain` answers for every code."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.codes import (
    AREAS,
    TABLE_END,
    TABLE_START,
    Code,
    all_codes,
    codes_table,
    declarations,
    doc_text,
    explain,
    similar_codes,
)
from jbcompile.designs import all_designs
from jbcompile.diagnostics import Diagnostic, DiagnosticError
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "compiler" / "jbcompile"
CODE = r"[A-Z]{1,2}\d{3}"
LITERAL = re.compile(rf"(?<![\w])([\"'])({CODE})\1")  # "EV023" as a Python string: a code reported
MENTION = re.compile(rf"(?<![\w])({CODE})(?![\w])")  # EV023 anywhere: in a hint, a docstring, a doc
NOQA = re.compile(r"#\s*noqa:.*$")  # ruff's codes (F401) are not ours


def _occurrences(pattern: re.Pattern[str], files: list[Path], group: int) -> dict[str, list[str]]:
    """code → the places (``path:line``) where it occurs."""
    found: dict[str, list[str]] = {}
    for file in files:
        for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
            for match in pattern.finditer(NOQA.sub("", line)):
                found.setdefault(match.group(group), []).append(f"{file.relative_to(REPO)}:{number}")
    return found


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _reporting_sources() -> list[Path]:
    """The sources less the declarations (jbcompile/codes.py, the designs' spec modules)."""
    declaring = {PACKAGE / "codes.py", *(Path(inspect.getfile(type(d))).resolve() for d in all_designs())}
    return [file for file in _sources() if file.resolve() not in declaring]


def _docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(PACKAGE.rglob("*.md"))]


def _builtin() -> list[Code]:
    return declarations(builtin_only=True)


def _where_to_declare(code: str) -> str:
    """Which table a new code joins: the one of its nearest declared neighbour with the same prefix."""
    prefix, number = re.sub(r"\d", "", code), int(re.sub(r"\D", "", code))
    siblings = [c for c in _builtin() if re.sub(r"\d", "", c.code) == prefix]
    if not siblings:
        return (
            "a new family: add a table to CODES in compiler/jbcompile/codes.py (and its area to AREAS), "
            "or, for a code only one design reports, to that design's `codes` (designs/<name>/__init__.py)"
        )
    near = min(siblings, key=lambda c: (abs(int(re.sub(r"\D", "", c.code)) - number), c.code))
    return (
        f'add `"{code}": "<one-line title>",` next to {near.code} in {near.declared_in} '
        f"(area {near.area}), and document it in {near.doc}: a row `| {code} | what it means — what to do |`"
    )


def test_every_code_in_the_source_is_declared() -> None:
    declared = set(all_codes())
    used = _occurrences(MENTION, _sources(), 1)
    missing = sorted(set(used) - declared)
    assert not missing, "codes used in compiler/ but declared nowhere:\n" + "\n".join(
        f"- {code} ({', '.join(used[code][:3])}): {_where_to_declare(code)}" for code in missing
    )


def test_every_declared_code_is_reported_somewhere() -> None:
    reported = _occurrences(LITERAL, _reporting_sources(), 2)
    unused = [code for code in _builtin() if code.code not in reported]
    assert not unused, "declared codes that no file of compiler/jbcompile reports:\n" + "\n".join(
        f"- {code.code}: remove its line in {code.declared_in} and its row in {code.doc}" for code in unused
    )


def test_a_designs_own_codes_are_reported_by_that_design_alone() -> None:
    reported = _occurrences(LITERAL, _reporting_sources(), 2)
    problems = []
    for design in all_designs():
        if not design.folder.is_relative_to(PACKAGE):
            continue
        inside = f"{design.folder.relative_to(REPO)}/"
        for code in design.codes:
            outside = [where for where in reported.get(code.code, []) if not where.startswith(inside)]
            if outside:
                problems.append(
                    f"- {code.code} is declared by the {design.name} design but reported outside it "
                    f"({', '.join(outside[:3])}): move its line to compiler/jbcompile/codes.py"
                )
    assert not problems, "\n".join(problems)


def test_each_code_is_declared_once_with_a_known_area_and_a_doc_section() -> None:
    every = declarations()
    twice = sorted(code for code, n in Counter(c.code for c in every).items() if n > 1)
    assert not twice, "codes declared twice: " + "; ".join(
        f"{code} in {' and '.join(c.declared_in for c in every if c.code == code)}" for code in twice
    )
    designs = {design.name for design in all_designs()}
    for code in every:
        assert re.fullmatch(CODE, code.code), code
        assert code.area in AREAS or code.area in designs, f"{code.code}: unknown area {code.area!r}"
        assert code.title and "\n" not in code.title and len(code.title) <= 100, code
        assert re.fullmatch(r"[\w./-]+\.md#[\w-]+", code.doc), (
            f"{code.code}: doc {code.doc!r} is not path#anchor"
        )


def test_every_code_is_documented_in_the_section_it_names() -> None:
    undocumented = [code for code in _builtin() if doc_text(code) is None]
    assert not undocumented, "codes their doc section does not name:\n" + "\n".join(
        f"- {code.code} ({code.area}: {code.title}): add a row `| {code.code} | what it means — what to do "
        f"|` to the section {code.doc} (or point its declaration in {code.declared_in} at the section "
        "that explains it)"
        for code in undocumented
    )


def test_the_docs_name_only_declared_codes() -> None:
    mentioned = _occurrences(MENTION, _docs(), 1)
    unknown = sorted(set(mentioned) - set(all_codes()))
    assert not unknown, "the docs name codes that are not declared (removed? mistyped?):\n" + "\n".join(
        f"- {code}: {', '.join(mentioned[code][:3])}" for code in unknown
    )


def test_readme_table_of_codes_is_generated_from_the_registry() -> None:
    text = (REPO / "README.md").read_text("utf-8")
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    assert text[start:end] + "\n" == codes_table(), (
        "README.md's table of codes is out of date: regenerate it with `python -m jbcompile.codes README.md`"
    )
    for area, what in AREAS.items():
        assert what in codes_table(), area


def test_explain_gives_title_doc_and_the_docs_own_words_for_every_code() -> None:
    for code in _builtin():
        if code.area == "lint":
            continue
        text = explain(code)
        assert text.startswith(f"{code.code} — {code.area}: {code.title}\n"), text
        assert code.doc in text and doc_text(code) in text  # type: ignore[operator]


def test_doc_text_is_the_codes_own_row() -> None:
    row = doc_text(all_codes()["P001"])
    assert row is not None and row.startswith("P001: the tag `vX.Y.Z` already exists on the Hub — bump")
    assert "P002" not in row.splitlines()[0]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("ja101", "JA101 pronoun-karera"),  # a lint rule, as before
        ("EV023", "EV023 — eval: "),  # the core
        ("SB304", "SB304 — sobaco: "),  # a design's own
        ("IM021", "IM021 — import: "),  # declared by a design, in a shared area
    ],
)
def test_check_explain_answers_every_kind_of_code(code: str, expected: str) -> None:
    result = CliRunner().invoke(app, ["check", "--explain", code])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(expected), result.output


def test_check_explain_of_an_unknown_code_suggests_close_ones() -> None:
    result = CliRunner().invoke(app, ["check", "--explain", "EV23"])
    assert result.exit_code == 2
    assert "CL001" in result.output and "did you mean EV023" in result.output, result.output
    assert similar_codes("JA1O1")[0].startswith("JA1")
    assert similar_codes("NOPE") == []


def test_check_explain_with_a_broken_design_plug_in_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import jbcompile.designs

    def broken() -> list:
        raise DiagnosticError([Diagnostic("DS001", "the design plug-in toy cannot be loaded")])

    monkeypatch.setattr(jbcompile.designs, "all_designs", broken)
    result = CliRunner().invoke(app, ["check", "--explain", "EV023"])
    assert result.exit_code == 2 and "DS001" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
