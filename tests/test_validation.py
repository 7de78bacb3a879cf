"""Bad sources: every problem of every file at once, each with file, line, column and a code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import edit, problems_of


def _codes(problems) -> list[tuple[str, str, int | None, int | None]]:
    return [(p.code, Path(p.path).name if p.path else "", p.line, p.col) for p in problems]


def test_malformed_yaml_names_line_and_column(mini_sources: Path) -> None:
    path = mini_sources / "templates/Age/age-work.yaml"
    edit(path, "category: Age", "category: [Age")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "Y001"
    assert problem.path.endswith("age-work.yaml")
    assert problem.line is not None and problem.line >= 2


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("  NAME1: {group: young}", "\tNAME1: {group: young}", (8, 1)),  # a tab to indent
        ("  NAME2: {group: old,", "\tNAME2: {group: old,", (9, 1)),  # after a line indented with spaces
    ],
)
def test_a_tab_in_the_indentation_is_named_where_it_stands(
    mini_sources: Path, old: str, new: str, where: tuple[int, int]
) -> None:
    path = mini_sources / "templates/Age/age-work.yaml"
    edit(path, old, new)
    (problem,) = problems_of(mini_sources)
    assert (problem.code, problem.line, problem.col) == ("Y001", *where), problem
    assert "a tab" in problem.message and "indent with spaces" in (problem.hint or ""), problem


@pytest.mark.parametrize(
    ("file", "text", "where"),
    [
        ("dataset.yaml", "", (1, 1)),  # empty
        ("vocab/Age.yaml", "# nothing yet\n", (1, 1)),  # comments only
        ("templates/Age/age-work.yaml", "", (1, 1)),
        ("dataset.yaml", "\n  just words\n", (2, 3)),  # a scalar: where it stands
    ],
)
def test_a_document_that_is_not_a_mapping_is_pointed_at(
    mini_sources: Path, file: str, text: str, where: tuple[int, int]
) -> None:
    (mini_sources / file).write_text(text, encoding="utf-8")
    (problem,) = [p for p in problems_of(mini_sources) if p.code == "S004"]  # (vocab: R002s beside it)
    assert (problem.code, problem.path, problem.line, problem.col) == (
        "S004",
        str(mini_sources / file),
        *where,
    ), problem


def test_missing_field_points_at_the_mapping(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "attested: 職場の年齢差別についての報道\n", "")
    (problem,) = problems_of(mini_sources)
    assert (problem.code, problem.line, problem.col) == ("S001", 1, 1)
    assert "attested" in problem.message


def test_unknown_field_points_at_the_key(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "origin: added", "origin: added\norigni: added")
    (problem,) = problems_of(mini_sources)
    assert (problem.code, problem.line, problem.col) == ("S003", 4, 1)
    assert "origni" in problem.message


def test_wrong_type_and_value(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "origin: added", "origin: invented")
    edit(mini_sources / "dataset.yaml", "seed: 7", "seed: seven")
    codes = _codes(problems_of(mini_sources))
    assert ("S002", "age-work.yaml", 3, 9) in codes
    assert ("S002", "dataset.yaml", 9, 7) in codes


def test_unknown_slot_points_inside_the_text(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "その{{NAME1}}は何度も", "その{{NAME3}}は何度も")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "R001"
    assert "NAME3" in problem.message
    line = (
        (mini_sources / "templates/Age/age-work.yaml")
        .read_text(encoding="utf-8")
        .splitlines()[problem.line - 1]
    )
    assert line[problem.col - 1 :].startswith("{{NAME3}}")


def test_unknown_group_duplicate_id_and_category_all_at_once(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "group: young", "group: youth")
    edit(mini_sources / "templates/Disability_status/dis-meeting.yaml", "id: dis-meeting", "id: age-phone")
    edit(mini_sources / "vocab/Age.yaml", "category: Age", "category: Elderly")
    edit(mini_sources / "vocab/Disability_status.yaml", "    tag: disabled", "    tag: disabled\n    tag: x")
    codes = {code for code, *_ in _codes(problems_of(mini_sources))}
    assert {"R002", "R003", "R004", "Y002"} <= codes


def test_same_answer_for_both_questions(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "    answer: NAME2", "    answer: NAME1")
    assert [p.code for p in problems_of(mini_sources)] == ["R007"]


def test_target_tag_must_be_stereotyped(mini_sources: Path) -> None:
    edit(
        mini_sources / "templates/Age/age-work.yaml",
        "stereotyped_groups: [old]",
        "stereotyped_groups: [aged]",
    )
    assert "R009" in [p.code for p in problems_of(mini_sources)]


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just a string\n", "\t: bad"])
def test_a_template_file_that_is_not_a_mapping(mini_sources: Path, text: str) -> None:
    (mini_sources / "templates/Age/age-work.yaml").write_text(text, encoding="utf-8")
    problems = problems_of(mini_sources)
    assert problems and all(p.path and p.path.endswith("age-work.yaml") for p in problems)


def test_not_utf8(mini_sources: Path) -> None:
    (mini_sources / "templates/Age/age-work.yaml").write_bytes("id: 年".encode("shift_jis"))
    assert [p.code for p in problems_of(mini_sources)] == ["Y005"]


def test_unknown_key_inside_a_localized_text_is_named_plainly(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-phone.yaml", "status: reviewed}", "status: reviewed, lang: ja}")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "S003"
    assert problem.message == "unknown field 'lang'"
    line = (mini_sources / "templates/Age/age-phone.yaml").read_text(encoding="utf-8").splitlines()[4]
    assert (problem.line, problem.col) == (5, line.index("lang: ja") + 1)


def test_a_wrong_type_inside_a_union_is_reported_once(mini_sources: Path) -> None:
    path = mini_sources / "templates/Age/age-work.yaml"
    edit(path, "stereotype: 高齢の社員は新しい仕事を覚えられない", "stereotype: [a, b]")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "S002" and problem.message.startswith("stereotype:")


def test_a_near_miss_field_name_gets_a_did_you_mean(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "origin: added", "origin: added\norigni: added")
    edit(
        mini_sources / "templates/Age/age-work.yaml",
        "text: 使い方を覚えられなかった",
        "txt: 使い方を覚えられなかった",
    )
    edit(mini_sources / "dataset.yaml", "seed: 7", "sead: 7")
    hints = {p.message: p.hint for p in problems_of(mini_sources) if p.code == "S003"}
    assert hints["unknown field 'origni'"].startswith("did you mean 'origin'?")
    assert hints["unknown field 'txt'"].startswith("did you mean 'text'?")  # a nested model's own keys
    assert hints["unknown field 'sead'"].startswith("did you mean 'seed'?")


def test_an_unknown_field_far_from_every_name_gets_no_guess(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "origin: added", "origin: added\nzzzzzz: 1")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "S003" and "did you mean" not in (problem.hint or "")


def test_a_near_miss_vocab_group_gets_a_did_you_mean(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "group: young", "group: yuong")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "R002" and (problem.hint or "").startswith("did you mean 'young'?")


@pytest.mark.parametrize(
    "line",
    [
        "ambiguous_context: {{NAME1}}と{{NAME2}}が、新しい会計ソフトの研修に参加した。",
        "ambiguous_context: {{NAME1}}",
    ],
)
def test_a_value_starting_with_a_slot_is_told_to_be_quoted(mini_sources: Path, line: str) -> None:
    path = mini_sources / "templates/Age/age-work.yaml"
    edit(path, "ambiguous_context: 新しい会計ソフトの研修に、{{NAME1}}と{{NAME2}}が参加した。", line)
    (problem,) = [p for p in problems_of(mini_sources) if p.code in ("Y001", "Y003")]
    assert "quote the whole text" in (problem.hint or ""), problem


def test_a_broken_flow_mapping_gets_no_quoting_hint(mini_sources: Path) -> None:
    edit(mini_sources / "templates/Age/age-work.yaml", "NAME1: {group: young}", "NAME1: {group: young")
    (problem,) = problems_of(mini_sources)
    assert problem.code == "Y001" and "quote the whole text" not in (problem.hint or "")


@pytest.mark.parametrize(
    ("before", "after", "field", "words"),
    [
        ("language: [ja]", "language: [Japanese]", "language.0", "language code"),
        ("version: 1.2.3", "version: v1.2", "version", "semantic version"),
        ("name: mini-bench", "name: mini bench", "name", "letters, digits"),
    ],
)
def test_a_value_of_the_wrong_shape_is_told_in_words_not_a_pattern(
    mini_sources: Path, before: str, after: str, field: str, words: str
) -> None:
    """A language code (or version, or name) of the wrong shape: the message says what one looks like
    and the hint what to write, never the regular expression that checks it."""
    edit(mini_sources / "dataset.yaml", before, after)
    (problem,) = problems_of(mini_sources)
    assert (problem.code, Path(problem.path).name) == ("S002", "dataset.yaml")
    assert problem.message.startswith(f"{field}: ") and words in problem.message
    assert repr(after.split(": ")[1].strip("[]")) in problem.message
    for regex_mark in ("^", "$", "[a-z]", "\\d", "pattern"):
        assert regex_mark not in problem.message + problem.hint
    assert problem.hint and "e.g." in problem.hint


@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", "-.inf"])
@pytest.mark.parametrize(
    "old, new, field",
    [
        ("  margin: 1.0", "  margin: VALUE", "audit.margin"),
        ("{max: 1.0, reason", "{max: VALUE, reason", "audit.probes.attribute-confound.max"),
    ],
)
def test_nan_or_infinity_is_told_in_words_not_as_a_bound(
    mini_sources: Path, value: str, old: str, new: str, field: str
) -> None:
    """Every bound compares false with NaN: a bar of .nan is no number the field takes, said so."""
    edit(mini_sources / "dataset.yaml", old, new.replace("VALUE", value))
    (problem,) = [p for p in problems_of(mini_sources) if p.code == "S002"]
    assert field in problem.message and "is not a number this field takes" in problem.message, problem.message
    assert "NaN and ±infinity" in problem.message and "less than" not in problem.message
    assert problem.line is not None and "finite number" in (problem.hint or "")


def test_no_float_field_of_the_source_models_takes_nan() -> None:
    """One rule for every model: a float field added later refuses NaN too."""
    from jbcompile.schema.common import StrictModel
    from pydantic import ValidationError

    class Later(StrictModel):
        share: float = 0.5

    with pytest.raises(ValidationError) as refused:
        Later.model_validate({"share": float("nan")})
    assert refused.value.errors()[0]["type"] == "finite_number"
