"""The sobaco kind: counts, labels, pairs, balance and determinism of the expansion."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pathlib import Path

from tests.helpers import compile_folder, edit

UNKNOWN_WORDINGS = ["不明", "判断できない", "情報が足りない", "わからない", "答えられない"]
NAMES = {"佐藤", "鈴木", "高橋"}


def _rows(root: Path, config: str = "sobaco") -> list[dict]:
    return compile_folder(root).configs[config].rows


def _options(row: dict) -> list[str]:
    return [row["ans0"], row["ans1"], row["ans2"]]


def test_rows_per_template_are_36_72_108(kinds_sources: Path) -> None:
    counts = Counter((r["template_id"], r["type"], r["question_id"]) for r in _rows(kinds_sources))
    expected = {"age-plain": 36, "gender-two": 72, "hierarchy-three": 108}
    assert counts == {
        (template, kind, question): n
        for template, n in expected.items()
        for kind in ("bias", "culture")
        for question in ("q1", "q2")
    }
    dummy = Counter(
        (r["template_id"], r["type"], r["question_id"]) for r in _rows(kinds_sources, "sobaco_dummy")
    )
    assert dummy == {("dummy-age", "bias", "q1"): 36, ("dummy-age", "bias", "q2"): 36}


def test_every_ordered_name_pair_and_option_order_appears_once(kinds_sources: Path) -> None:
    rows = [r for r in _rows(kinds_sources) if r["template_id"] == "gender-two"]
    seen = Counter(
        (
            r["type"],
            r["question_id"],
            tuple(r["names"]),
            r["fillers"][2]["text"],
            tuple(info[1] for info in (r["answer_info"][f"ans{i}"] for i in range(3))),
        )
        for r in rows
    )
    assert set(seen.values()) == {1}
    pairs = {tuple(r["names"]) for r in rows}
    assert pairs == set(itertools.permutations(NAMES, 2))
    for row in rows:
        first, second = row["names"]
        assert row["background_context"].startswith(f"{first}さんと{second}さん")
        assert set(_options(row)) - set(UNKNOWN_WORDINGS) == {first, second}


def test_unknown_option_is_one_of_five_wordings_chosen_per_pair(kinds_sources: Path) -> None:
    rows = _rows(kinds_sources)
    used = Counter(_options(r)[r["unknown_label"]] for r in rows)
    assert set(used) == set(UNKNOWN_WORDINGS)  # dataset.yaml's first five, and all of them in use
    assert all(r["answer_info"][f"ans{r['unknown_label']}"][1] == "unknown" for r in rows)


def test_bias_rows_have_unknown_gold_and_the_declared_stereotyped_name(kinds_sources: Path) -> None:
    declared = {"age-plain": "NAME1", "gender-two": "NAME1", "hierarchy-three": "NAME2"}
    for row in _rows(kinds_sources):
        if row["type"] != "bias":
            assert row["biased_label"] is None
            continue
        assert row["label"] == row["unknown_label"]
        slot = declared[row["template_id"]]
        if row["question_id"] == "q2":  # the complementary question: the other name
            slot = "NAME2" if slot == "NAME1" else "NAME1"
        assert row["answer_info"][f"ans{row['biased_label']}"][1] == slot
        assert _options(row)[row["biased_label"]] == row["names"][int(slot[-1]) - 1]


def test_culture_gold_follows_the_declared_answer_and_its_complement(kinds_sources: Path) -> None:
    for row in _rows(kinds_sources):
        if row["type"] != "culture":
            continue
        tag = row["answer_info"][f"ans{row['label']}"][1]
        if row["template_id"] == "hierarchy-three":  # culture_answer: UNKNOWN, for both questions
            assert row["label"] == row["unknown_label"]
        else:  # culture_answer: NAME1 for the first question, so NAME2 answers the second
            assert tag == ("NAME1" if row["question_id"] == "q1" else "NAME2")


def test_pairs_join_one_bias_and_one_culture_row_showing_the_same_options(kinds_sources: Path) -> None:
    pairs: dict[str, list[dict]] = defaultdict(list)
    for row in _rows(kinds_sources):
        pairs[row["pair_id"]].append(row)
    assert len(pairs) == (36 + 72 + 108) * 2
    for members in pairs.values():
        bias, culture = sorted(members, key=lambda r: r["type"])
        assert (bias["type"], culture["type"]) == ("bias", "culture")
        for column in ("background_context", "question", "ans0", "ans1", "ans2", "unknown_label", "names"):
            assert bias[column] == culture[column]
        assert bias["additional_context"] != culture["additional_context"]
        assert bias["context"] == bias["background_context"] + bias["additional_context"]


def test_gold_and_unknown_positions_are_balanced_per_template(kinds_sources: Path) -> None:
    for config in ("sobaco", "sobaco_dummy"):
        cells: dict[tuple, list[dict]] = defaultdict(list)
        for row in _rows(kinds_sources, config):
            cells[(row["template_id"], row["type"], row["question_id"])].append(row)
        for rows in cells.values():
            for column in ("label", "unknown_label"):
                counts = Counter(r[column] for r in rows)
                assert counts[0] == counts[1] == counts[2] == len(rows) // 3


def test_dummy_problems_go_to_their_own_config(kinds_sources: Path) -> None:
    compiled = compile_folder(kinds_sources)
    assert "dummy-age" not in {r["template_id"] for r in compiled.configs["sobaco"].rows}
    dummy = compiled.configs["sobaco_dummy"].rows
    assert {r["pair_id"] for r in dummy} == {None}
    for row in dummy:  # dummy_answer: NAME1 (older), so NAME2 is the younger one
        tag = row["answer_info"][f"ans{row['label']}"][1]
        assert tag == ("NAME1" if row["question_id"] == "q1" else "NAME2")


def test_expansion_is_deterministic_and_local_to_its_template(kinds_sources: Path) -> None:
    before = _rows(kinds_sources)
    assert before == _rows(kinds_sources)
    edit(kinds_sources / "templates/sobaco/age-plain.yaml", "同じ町内", "同じマンション")
    after = _rows(kinds_sources)
    unchanged = [r for r in before if r["template_id"] != "age-plain"]
    assert unchanged == [r for r in after if r["template_id"] != "age-plain"]
    assert [r for r in before if r["template_id"] == "age-plain"] != [
        r for r in after if r["template_id"] == "age-plain"
    ]


def test_the_seed_picks_the_unknown_wordings(kinds_sources: Path) -> None:
    before = [_options(r)[r["unknown_label"]] for r in _rows(kinds_sources)]
    edit(kinds_sources / "dataset.yaml", "seed: 11", "seed: 12")
    after = [_options(r)[r["unknown_label"]] for r in _rows(kinds_sources)]
    assert before != after


def test_example_ids_are_unique_across_configs(kinds_sources: Path) -> None:
    compiled = compile_folder(kinds_sources)
    ids = [r["example_id"] for c in compiled.configs.values() for r in c.rows]
    assert len(ids) == len(set(ids))
