"""The jubaku kind: 8 rows per case, balanced A/B gold, validation and verification."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from jbcompile.designs.jubaku import compiler as jubaku
from jbcompile.diagnostics import Diagnostic

from tests.helpers import compile_folder, edit, problems_of

CASE = "templates/jubaku/religion-lunch.yaml"


def _rows(root: Path) -> list[dict]:
    return compile_folder(root).configs["jubaku"].rows


def _only(problems: list[Diagnostic], code: str) -> Diagnostic:
    found = [p for p in problems if p.code == code]
    assert len(found) == 1, problems
    return found[0]


def test_each_case_gives_8_rows_4_instructions_by_2_orders(kinds_sources: Path) -> None:
    rows = _rows(kinds_sources)
    assert Counter(r["template_id"] for r in rows) == {"religion-lunch": 8, "region-emcee": 8}
    for case in ("religion-lunch", "region-emcee"):
        variants = {(r["instruction_id"], r["order"]) for r in rows if r["template_id"] == case}
        assert variants == {(i, o) for i in range(4) for o in ("neutral_first", "biased_first")}
    assert len({r["instruction"] for r in rows}) == 4


def test_release_columns_follow_the_order_and_default_to_our_names(kinds_sources: Path) -> None:
    for row in _rows(kinds_sources):
        neutral_first = row["order"] == "neutral_first"
        assert row["correct_answer"] == ("a" if neutral_first else "b")
        assert row["correct_answer"] == "ab"[row["label"]]
        assert row["is_swapped"] is neutral_first  # JUBAKU-v2's fwd shows the biased response first
        assert row["viewpoint"] == row["category"] and row["original_id"] == row["template_id"]
        assert row["input"] == ""
        assert row["example_id"] == f"{row['template_id']}-{row['instruction_id']}-{row['order']}"


def test_gold_is_the_neutral_response_and_balanced_between_a_and_b(kinds_sources: Path) -> None:
    rows = _rows(kinds_sources)
    for case in ("religion-lunch", "region-emcee"):
        case_rows = [r for r in rows if r["template_id"] == case]
        assert Counter(r["label"] for r in case_rows) == {0: 4, 1: 4}
    for row in rows:
        options = [row["ans0"], row["ans1"]]
        neutral, biased = options[row["label"]], options[row["biased_label"]]
        assert row["label"] == (0 if row["order"] == "neutral_first" else 1)
        assert "好み" in neutral or "申し出" in neutral
        assert "イスラム教徒の人" in biased or "大阪出身の人" in biased
        assert neutral.endswith(row["conclusion"]) and biased.endswith(row["conclusion"])


def test_expansion_is_deterministic(kinds_sources: Path) -> None:
    assert _rows(kinds_sources) == _rows(kinds_sources)


def test_a_response_without_the_conclusion_is_reported_at_it(kinds_sources: Path) -> None:
    path = kinds_sources / CASE
    edit(path, "ので、料理を一品ずつ選べるお店にする", "ので、大きなお店にする")
    problem = _only(problems_of(kinds_sources), "JU102")
    line = next(
        i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "大きなお店" in text
    )
    assert problem.line == line and problem.path.endswith("religion-lunch.yaml")


def test_a_missing_response_and_a_bad_bias_form_are_schema_errors(kinds_sources: Path) -> None:
    path = kinds_sources / CASE
    text = path.read_text(encoding="utf-8")
    path.write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("neutral_response"))
        + "\nbias_form: prejudice\n",
        encoding="utf-8",
    )
    problems = problems_of(kinds_sources)
    assert "neutral_response" in _only(problems, "S001").message
    bad = _only(problems, "S002")
    assert "bias_form" in bad.message and bad.line == len(text.splitlines())


def test_a_slot_in_a_case_is_rejected(kinds_sources: Path) -> None:
    edit(kinds_sources / CASE, "新しい同僚は", "新しい同僚の{{NAME1}}さんは")
    problem = _only(problems_of(kinds_sources), "JU101")
    assert problem.col == len('context: "歓迎ランチのお店を選んでいます。新しい同僚の') + 1


def test_the_verifier_rejects_a_case_with_missing_variants(
    kinds_sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = jubaku.JubakuKind.expand
    monkeypatch.setattr(jubaku.JubakuKind, "expand", lambda self, t, p: real(self, t, p)[:7])
    problems = [p for p in problems_of(kinds_sources) if p.code == "JU202"]
    assert len(problems) == 2 and all("7 rows" in p.message for p in problems)
    assert {Path(p.path).name for p in problems} == {"religion-lunch.yaml", "region-emcee.yaml"}


def test_the_verifier_rejects_unbalanced_gold(kinds_sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = jubaku.JubakuKind.expand

    def always_a(self, template, project):
        rows = real(self, template, project)
        for row in rows:
            row["label"], row["biased_label"] = 0, 1
        return rows

    monkeypatch.setattr(jubaku.JubakuKind, "expand", always_a)
    assert Counter(p.code for p in problems_of(kinds_sources)) == {"JU204": 2}


def test_duplicate_ids_are_rejected(kinds_sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    same_name = jubaku.JubakuPrompt.model_construct(
        wordings=["-"],
        layout=None,
        orders={"neutral_first": "x", "biased_first": "x"},
        example_id="{case}-{wording}-{order}",
    )
    monkeypatch.setattr(jubaku, "DEFAULT_PROMPT", same_name)
    codes = Counter(p.code for p in problems_of(kinds_sources))
    assert codes["JU201"] == 8
