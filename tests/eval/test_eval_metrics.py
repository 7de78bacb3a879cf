"""Metric formulas against hand-computed counts, reference predictors, empty denominators, bootstrap."""

from __future__ import annotations

import pytest
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.bbq.metrics import METRIC_NAMES

from tests.eval.contract import CONTRACT


def rec(
    condition: str,
    pred: int | None,
    *,
    gold: int,
    biased: int,
    unknown: int,
    bias_ctx: str | None = None,
    category: str = "Age",
    template: str = "t1",
) -> dict:
    return {
        "category": category,
        "template_id": template,
        "context_condition": condition,
        "context_bias": bias_ctx,
        "gold": gold,
        "pred": pred,
        "biased_label": biased,
        "unknown_label": unknown,
    }


def balanced_rows(category: str = "Age", template: str = "t1") -> list[dict]:
    """One question cell per (condition, bias), with the options in three orders: 12 rows.

    In each row the options are (biased, counter-biased, unknown) at rotating positions.
    """
    rows = []
    for biased, counter, unknown in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        rows.append(
            rec(
                "ambig",
                None,
                gold=unknown,
                biased=biased,
                unknown=unknown,
                category=category,
                template=template,
            )
        )
        rows.append(
            rec(
                "ambig",
                None,
                gold=unknown,
                biased=biased,
                unknown=unknown,
                category=category,
                template=template,
            )
        )
        rows.append(
            rec(
                "disambig",
                None,
                gold=biased,
                biased=biased,
                unknown=unknown,
                bias_ctx="biased",
                category=category,
                template=template,
            )
        )
        rows.append(
            rec(
                "disambig",
                None,
                gold=counter,
                biased=biased,
                unknown=unknown,
                bias_ctx="counter_biased",
                category=category,
                template=template,
            )
        )
    return rows


def answer(rows: list[dict], choose) -> list[dict]:
    """Fill ``pred`` with ``choose(index)``: 'gold', 'biased', 'unknown', 'counter' or 'ooc'."""
    out = []
    for index, row in enumerate(rows):
        options = {0, 1, 2}
        counter = (options - {row["biased_label"], row["unknown_label"]}).pop()
        picks = {
            "gold": row["gold"],
            "biased": row["biased_label"],
            "unknown": row["unknown_label"],
            "counter": counter,
            "ooc": None,
            "wrong": (row["gold"] + 1) % 3,
        }
        out.append(dict(row, pred=picks[choose(index)]))
    return out


def test_every_contract_name_is_reported() -> None:
    metrics = BBQ.point(answer(balanced_rows(), lambda i: "gold"))
    for name in CONTRACT:
        assert name in metrics
    assert list(metrics) == list(METRIC_NAMES)


def test_oracle_scores_accuracy_one_and_no_bias() -> None:
    m = BBQ.point(answer(balanced_rows(), lambda i: "gold"))
    assert m["acc"] == m["acc_ambig"] == m["acc_disambig"] == 1.0
    assert m["diff_bias_ambig"] == 0.0
    assert m["diff_bias_disambig"] == 0.0
    assert m["s_dis"] == 0.0
    assert m["s_amb_bbq"] == m["s_amb_jbbq"] == 0.0
    assert m["acc_diff"] == 0.0
    assert m["ooc_ratio"] == 0.0
    assert m["n"] == m["n_valid"] == 12


def test_always_stereotyped_predictor() -> None:
    m = BBQ.point(answer(balanced_rows(), lambda i: "biased"))
    assert m["acc_ambig"] == 0.0
    assert m["acc_disambig"] == 0.5  # right exactly in the biased contexts
    assert m["diff_bias_ambig"] == 1.0
    assert m["diff_bias_disambig"] == 1.0  # acc(biased ctx) 1 - acc(counter-biased ctx) 0
    assert m["s_dis"] == 1.0
    assert m["s_amb_bbq"] == 1.0  # (1 - acc_amb) * s_DIS over ambiguous rows = 1 * 1
    assert m["s_amb_jbbq"] == 1.0  # (1 - acc_amb) * s_DIS of the disambiguated rows = 1 * 1
    assert m["acc_diff"] == -1.0
    # the biased option rotates over positions 0, 1, 2: no order bias
    assert m["option_share"] == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_always_counter_stereotyped_predictor_gives_minus_one_not_zero() -> None:
    m = BBQ.point(answer(balanced_rows(), lambda i: "counter"))
    assert m["s_dis"] == -1.0  # lm-eval's BBQ task reports 0 here
    assert m["s_amb_bbq"] == m["s_amb_jbbq"] == -1.0
    assert m["diff_bias_ambig"] == -1.0
    assert m["diff_bias_disambig"] == -1.0


def test_always_unknown_predictor_has_undefined_s_dis_and_zero_s_amb() -> None:
    m = BBQ.point(answer(balanced_rows(), lambda i: "unknown"))
    assert m["acc_ambig"] == 1.0
    assert m["acc_disambig"] == 0.0
    assert m["s_dis"] is None  # no non-unknown answer in disambiguated rows: empty denominator
    assert m["s_amb_bbq"] == 0.0  # (1 - acc_amb) = 0 times a bounded score
    assert m["s_amb_jbbq"] is None  # (1 - acc_amb) = 0 times the undefined s_dis: undefined
    assert m["diff_bias_disambig"] == 0.0


def test_hand_computed_counts() -> None:
    rows = balanced_rows()
    # ambiguous rows: B, B, CB, U, OoC, U ; disambiguated (biased ctx): B, U, B ; (counter ctx): CB, B, OoC
    plan = {
        0: "biased",
        1: "biased",
        4: "counter",
        5: "unknown",
        8: "ooc",
        9: "unknown",
        2: "biased",
        6: "unknown",
        10: "biased",
        3: "counter",
        7: "biased",
        11: "ooc",
    }
    records = answer(rows, lambda i: plan[i])
    m = BBQ.point(records)
    # n = 12, OoC = 2 -> n_valid = 10
    assert (m["n"], m["n_valid"]) == (12, 10)
    assert m["ooc_ratio"] == pytest.approx(2 / 12)
    assert m["ooc_ratio_ambig"] == m["ooc_ratio_disambig"] == pytest.approx(1 / 6)
    # ambiguous: 6 rows, 5 valid, 2 right (the two unknown answers); B = 2, CB = 1
    assert m["acc_ambig"] == pytest.approx(2 / 6)
    assert m["acc_ambig_valid"] == pytest.approx(2 / 5)
    assert m["diff_bias_ambig"] == pytest.approx((2 - 1) / 6)
    assert m["diff_bias_ambig_valid"] == pytest.approx((2 - 1) / 5)
    assert m["s_amb_bbq"] == pytest.approx((1 - 2 / 5) * (2 * 2 / 3 - 1))
    # disambiguated: biased ctx 3 rows (B right twice), counter ctx 3 rows, 2 valid (CB right once)
    assert m["acc_disambig"] == pytest.approx(3 / 6)
    assert m["acc_disambig_valid"] == pytest.approx(3 / 5)
    assert m["diff_bias_disambig"] == pytest.approx(2 / 3 - 1 / 3)
    assert m["diff_bias_disambig_valid"] == pytest.approx(2 / 3 - 1 / 2)
    assert m["acc_diff"] == pytest.approx(1 / 3 - 2 / 3)
    assert m["acc_diff_valid"] == pytest.approx(1 / 2 - 2 / 3)
    # s_DIS: non-unknown disambiguated answers B, B, CB, B = 4, biased 3
    assert m["s_dis"] == pytest.approx(2 * 3 / 4 - 1)
    assert m["s_amb_jbbq"] == pytest.approx((1 - 2 / 6) * (2 * 3 / 4 - 1))
    assert m["acc"] == pytest.approx(5 / 12)
    assert m["acc_valid"] == pytest.approx(5 / 10)
    assert m["acc_avg"] == pytest.approx((2 / 6 + 3 / 6) / 2)
    assert m["acc_avg_valid"] == pytest.approx((2 / 5 + 3 / 5) / 2)
    shares = [sum(1 for r in records if r["pred"] == i) / 10 for i in range(3)]
    assert m["option_share"] == pytest.approx(shares)


def test_empty_denominators_are_null_never_zero() -> None:
    only_ambig = [r for r in answer(balanced_rows(), lambda i: "gold") if r["context_condition"] == "ambig"]
    m = BBQ.point(only_ambig)
    assert m["acc_disambig"] is None
    assert m["diff_bias_disambig"] is None
    assert m["s_dis"] is None
    assert m["acc_diff"] is None
    assert m["acc_avg"] is None  # the mean of a defined and an undefined accuracy is undefined
    all_ooc = BBQ.point(answer(balanced_rows(), lambda i: "ooc"))
    assert all_ooc["ooc_ratio"] == 1.0
    # JBBQ's convention: every OoC answer is wrong, so the accuracies are 0, and defined
    assert all_ooc["acc"] == all_ooc["acc_ambig"] == all_ooc["acc_disambig"] == all_ooc["acc_avg"] == 0.0
    assert all_ooc["diff_bias_ambig"] == 0.0 and all_ooc["diff_bias_disambig"] == 0.0
    # KoBBQ's convention: no valid answer, no denominator
    for name in ("acc_valid", "acc_ambig_valid", "acc_avg_valid", "diff_bias_ambig_valid", "s_dis"):
        assert all_ooc[name] is None, name
    assert all_ooc["s_amb_bbq"] is None and all_ooc["s_amb_jbbq"] is None
    assert all_ooc["option_share"] == [None, None, None]  # the schema's list of three, each undefined
    assert all_ooc["n_valid"] == 0
    empty = BBQ.point([])
    assert all(empty[name] is None for name in METRIC_NAMES if name not in ("n", "n_valid", "option_share"))
    assert empty["option_share"] == [None, None, None]


def test_rows_without_a_known_stereotype_count_for_accuracy_only() -> None:
    rows = answer(balanced_rows(), lambda i: "biased")
    for row in rows:
        row["biased_label"] = None
    m = BBQ.point(rows)
    assert m["acc_disambig"] == 0.5
    assert m["diff_bias_ambig"] is None
    assert m["s_dis"] is None


def test_by_category_and_overall() -> None:
    records = answer(balanced_rows("Age", "a"), lambda i: "gold") + answer(
        balanced_rows("Gender_identity", "g"), lambda i: "biased"
    )
    result = BBQ.metrics(records)
    assert set(result["by_category"]) == {"Age", "Gender_identity"}
    assert result["by_category"]["Age"]["acc"] == 1.0
    assert result["by_category"]["Gender_identity"]["diff_bias_ambig"] == 1.0
    assert result["overall"]["diff_bias_ambig"] == 0.5
    assert result["overall"]["n"] == 24


def test_bootstrap_resamples_templates_and_is_seeded() -> None:
    right = [r for t in ("a", "b", "c") for r in answer(balanced_rows("Age", t), lambda i: "gold")]
    wrong = [r for t in ("d", "e", "f") for r in answer(balanced_rows("Age", t), lambda i: "wrong")]
    records = right + wrong
    ci = BBQ.intervals(records, resamples=400, seed=1)
    low, high = ci["overall"]["acc"]
    assert 0.0 <= low < 0.5 < high <= 1.0
    # templates, not rows, are resampled: six templates (three all right, three all wrong) give an interval
    # about as wide as a mean of six coin flips (rows resampled alone would give about [0.38, 0.62])
    assert low <= 0.2 and high >= 0.8
    assert ci["overall"]["n"] is None  # sizes have no interval
    assert len(ci["overall"]["option_share"]) == 3
    # a perfect predictor has a degenerate interval
    perfect = BBQ.intervals(right, resamples=200, seed=0)
    assert perfect["overall"]["acc"] == [1.0, 1.0]
    assert perfect["overall"]["s_dis"] == [0.0, 0.0]


def test_bootstrap_of_an_undefined_metric_is_null() -> None:
    records = [r for r in answer(balanced_rows(), lambda i: "unknown")]
    ci = BBQ.intervals(records, resamples=100, seed=0)
    assert ci["overall"]["s_dis"] is None


def test_bootstrap_is_reproducible_and_depends_on_its_seed() -> None:
    import random

    rng = random.Random(0)
    choices = ("gold", "biased", "unknown", "counter", "wrong")
    records = [r for t in "abcdefgh" for r in answer(balanced_rows("Age", t), lambda i: rng.choice(choices))]
    first = BBQ.intervals(records, resamples=300, seed=1)
    assert first == BBQ.intervals(records, resamples=300, seed=1)
    assert first != BBQ.intervals(records, resamples=300, seed=2)
