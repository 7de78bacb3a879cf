"""jubaku evaluator: reading A/B, accuracy without invalid answers, answer fluctuation per category."""

from __future__ import annotations

import pytest
from jbcompile.designs.jubaku.evaluate import JUBAKU, LETTERS
from jbcompile.evaluate.parsing import read_reply

ORDERS = ("neutral_first", "biased_first")


def _case(case: str, category: str, picks: dict[tuple[int, str], str]) -> list[dict]:
    """8 records of one case; ``picks`` overrides the default choice (neutral) per (instruction, order)."""
    records = []
    for instruction in range(4):
        for order in ORDERS:
            label = 0 if order == "neutral_first" else 1
            pick = picks.get((instruction, order), "neutral")
            pred = None if pick == "invalid" else label if pick == "neutral" else 1 - label
            records.append(
                {
                    "example_id": f"{case}-{instruction}-{order}",
                    "template_id": case,
                    "category": category,
                    "label": label,
                    "biased_label": 1 - label,
                    "gold": label,
                    "pred": pred,
                }
            )
    return records


def test_metrics_match_hand_computed_values() -> None:
    steady = _case("c1", "Region", {})
    shaky = _case("c2", "Region", {(0, "neutral_first"): "biased", (0, "biased_first"): "invalid"})
    biased = _case("c3", "Religion", {(i, o): "biased" for i in range(4) for o in ORDERS})
    metrics = JUBAKU.metrics(steady + shaky + biased)
    overall = metrics["overall"]
    assert (overall["n"], overall["n_valid"], overall["n_invalid"], overall["cases"]) == (24, 23, 1, 3)
    assert overall["acc"] == pytest.approx(14 / 23)  # 8 + 6 + 0 neutral choices among 23 valid answers
    assert overall["invalid_rate"] == pytest.approx(1 / 24)
    assert overall["a_share"] == pytest.approx(11 / 23)  # 4 (c1) + 3 (c2) + 4 (c3)
    assert overall["fluctuation_rate"] == pytest.approx(1 / 3)  # only c2 changes its choice
    region, religion = metrics["by_category"]["Region"], metrics["by_category"]["Religion"]
    assert region["fluctuation_rate"] == pytest.approx(0.5) and region["acc"] == pytest.approx(14 / 15)
    assert religion["fluctuation_rate"] == pytest.approx(0.0) and religion["acc"] == pytest.approx(0.0)


def test_choices_are_compared_by_content_not_letter() -> None:
    # always answering "A" picks the neutral response in one order and the biased one in the other
    records = _case("c1", "Region", {(i, "biased_first"): "biased" for i in range(4)})
    assert all(r["pred"] == 0 for r in records)
    overall = JUBAKU.metrics(records)["overall"]
    assert overall["fluctuation_rate"] == pytest.approx(1.0) and overall["acc"] == pytest.approx(0.5)


def test_intervals_resample_whole_cases() -> None:
    records = _case("c1", "Region", {}) + _case("c2", "Region", {(1, "biased_first"): "biased"})
    intervals = JUBAKU.intervals(records, resamples=200, seed=0)["overall"]
    low, high = intervals["fluctuation_rate"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0 and intervals["cases"] is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A", 0),
        ("Ｂ", 1),
        ("回答: A", 0),
        ("応答Bです。", 1),
        ("**A**", 0),
        ("b", 1),
        ("\n\n B\n理由…", 1),
        ("AB", None),
        ("Apple", None),
        ("どちらでもない", None),
        ("", None),
        ("C", None),
    ],
)
def test_reading_a_or_b(text: str, expected: int | None) -> None:
    assert read_reply(text, LETTERS, ()) == expected
