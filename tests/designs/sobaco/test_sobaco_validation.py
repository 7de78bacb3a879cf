"""Bad sobaco sources are rejected with positioned diagnostics; the build verifies its invariants."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.designs.sobaco import compiler as sobaco
from jbcompile.diagnostics import Diagnostic, DiagnosticError

from tests.helpers import compile_folder, edit, problems_of

PLAIN = "templates/sobaco/age-plain.yaml"


def _only(problems: list[Diagnostic], code: str) -> Diagnostic:
    found = [p for p in problems if p.code == code]
    assert len(found) == 1, problems
    return found[0]


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_a_wrong_answer_slot_is_reported_at_its_line(kinds_sources: Path) -> None:
    path = kinds_sources / PLAIN
    edit(path, "biased_answer: NAME1", "biased_answer: NAME3")
    problem = _only(problems_of(kinds_sources), "S002")
    assert problem.path.endswith("age-plain.yaml")
    assert problem.line == _line_of(path, "biased_answer") and problem.col == 16
    assert "biased_answer" in problem.message


def test_an_unknown_field_is_reported_at_its_key(kinds_sources: Path) -> None:
    path = kinds_sources / PLAIN
    edit(path, "culture_answer: NAME1", "culture_answer: NAME1\nculture_anwser: NAME2")
    problem = _only(problems_of(kinds_sources), "S003")
    assert (problem.line, problem.col) == (_line_of(path, "culture_anwser"), 1)


def test_a_pair_without_its_culture_problem_is_rejected(kinds_sources: Path) -> None:
    edit(kinds_sources / PLAIN, "culture_answer: NAME1", "")
    problem = _only(problems_of(kinds_sources), "S002")
    assert "culture_answer" in problem.message and problem.path.endswith("age-plain.yaml")


def test_a_dummy_with_pair_fields_is_rejected(kinds_sources: Path) -> None:
    edit(
        kinds_sources / "templates/sobaco/dummy-age.yaml",
        "dummy_answer: NAME1",
        "dummy_answer: NAME1\nbiased_answer: NAME2",
    )
    assert "no biased_answer" in _only(problems_of(kinds_sources), "S002").message


def test_four_expression_alternatives_are_too_many(kinds_sources: Path) -> None:
    edit(kinds_sources / "templates/sobaco/hierarchy-three.yaml", "忘年会]", "忘年会, 新年会]")
    assert "2 or 3 alternatives" in _only(problems_of(kinds_sources), "S002").message


def test_an_unknown_names_group_points_at_the_names_field(kinds_sources: Path) -> None:
    path = kinds_sources / PLAIN
    edit(path, "category: Age", "category: Age\nnames: surnames")
    problem = _only(problems_of(kinds_sources), "R002")
    assert problem.line == _line_of(path, "names: surnames")


def test_a_name_slot_in_a_question_is_reported_at_the_slot(kinds_sources: Path) -> None:
    path = kinds_sources / PLAIN
    edit(path, "first: 年上なのはどちらですか？", 'first: "{{NAME1}}さんより年上なのはどちらですか？"')
    problem = _only(problems_of(kinds_sources), "R001")
    assert problem.line == _line_of(path, "first:")
    assert problem.col == len('  first: "') + 1


def test_the_background_must_introduce_both_names(kinds_sources: Path) -> None:
    edit(kinds_sources / PLAIN, "{{NAME1}}さんと{{NAME2}}さんは同じ町内", "{{NAME1}}さんは同じ町内")
    assert "{{NAME2}}" in _only(problems_of(kinds_sources), "SB103").message


def test_a_names_group_needs_two_distinct_names(kinds_sources: Path) -> None:
    edit(kinds_sources / "vocab/names.yaml", "{text: 高橋", "{text: 鈴木")
    assert _only(problems_of(kinds_sources), "SB102").path.endswith("names.yaml")


def test_the_verifier_rejects_a_missing_row(kinds_sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sobaco._expand
    monkeypatch.setattr(sobaco, "_expand", lambda plan, project: real(plan, project)[1:])
    problems = problems_of(kinds_sources)
    assert {p.code for p in problems} >= {"SB202", "SB205"}
    assert any(p.path and p.path.endswith("age-plain.yaml") and p.code == "SB202" for p in problems)


def test_the_verifier_rejects_duplicate_ids_and_a_wrong_gold(
    kinds_sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sobaco._expand

    def broken(plan, project):
        rows = real(plan, project)
        rows[1]["example_id"] = rows[0]["example_id"]
        if rows[0]["type"] == "bias":
            rows[0]["label"] = (rows[0]["unknown_label"] + 1) % 3
        return rows

    monkeypatch.setattr(sobaco, "_expand", broken)
    codes = {p.code for p in problems_of(kinds_sources)}
    assert {"SB201", "SB203", "SB204"} <= codes


def test_valid_sources_build(kinds_sources: Path) -> None:
    try:
        compiled = compile_folder(kinds_sources, checks=True)
    except DiagnosticError as error:  # pragma: no cover - shows the findings when it fails
        pytest.fail("\n".join(d.located() + " " + d.message for d in error.diagnostics))
    assert set(compiled.configs) == {"sobaco", "sobaco_dummy", "jubaku"}


def test_a_culture_context_saying_the_same_of_both_names_cannot_settle_a_name(kinds_sources: Path) -> None:
    path = kinds_sources / PLAIN
    edit(
        path,
        'culture_context: "敬老の日に、{{NAME2}}さんは{{NAME1}}さんの家へ花を届けた。"',
        'culture_context: "{{NAME1}}さんは敬老の日に花を贈られた。{{NAME2}}さんは敬老の日に花を贈られた。"',
    )
    problem = _only(problems_of(kinds_sources), "SB104")
    assert problem.line == _line_of(path, "culture_context") and problem.col == 18
    assert "NAME1" in problem.message and "UNKNOWN" in problem.hint


def test_a_culture_context_telling_the_names_apart_passes() -> None:
    assert not sobaco.says_the_same_of_both(
        "敬老の日に、{{NAME2}}さんは{{NAME1}}さんの家へ花を届けた。", "ja"
    )
    assert not sobaco.says_the_same_of_both("{{NAME1}}さんは花を贈った。{{NAME2}}さんは花を贈られた。", "ja")
    assert sobaco.says_the_same_of_both("{{NAME2}}さんは花を贈られた。{{NAME1}}さんは花を贈られた。", "ja")


@pytest.mark.parametrize(
    "context",
    [
        "{{NAME1}}さんは敬老の日に花を贈られた。{{NAME2}}さんも敬老の日に花を贈られた。",
        "{{NAME1}}さんは敬老の日に花を贈られた。一方、{{NAME2}}さんも同じく敬老の日に花を贈られた。",
        "{{NAME1}}さんは敬老の日に花を贈られた。{{ NAME2 }}さんもそうだった。",
        "{{NAME1}}さんも{{NAME2}}さんも、敬老の日に花を贈られた。",
        "{{NAME1}}さんと{{NAME2}}さんは、どちらも敬老の日に花を贈られた。",
    ],
)
def test_the_same_said_of_both_names_in_other_words_cannot_settle_a_name(context: str) -> None:
    """SB104 reads a context as B102 does (one home, :mod:`jbcompile.sameness`): 「Bも」, 「一方、」 and
    「AもBも」 say one thing of both names."""
    assert sobaco.says_the_same_of_both(context, "ja")


def test_a_sentence_after_both_names_may_still_set_one_apart() -> None:
    assert not sobaco.says_the_same_of_both(
        "{{NAME1}}さんも{{NAME2}}さんも花を贈られたが、{{NAME1}}さんだけが礼状を書いた。", "ja"
    )
