"""The metric functions against the numbers the papers print (issue 14).

Printed numbers are rounded to one decimal (per cent) or three; a relation holds for a paper's row when
the interval of values its rounded inputs allow meets the interval its rounded output allows. Where a
table gives enough to rebuild a run's counts, the counts are built and passed through our metrics.
"""

from __future__ import annotations

import itertools

import pytest
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.jubaku.evaluate import JUBAKU
from jbcompile.designs.sobaco.summary import permutation_p, spearman
from jbcompile.evaluate.compare import chi_square, mcnemar

# JBBQ Table 3 (3-shot basicP): OoC, Acc Avg/Amb/Dis, Diff-bias Avg/Amb/Dis;
# Table 12: BS Avg/Amb/Dis, Acc. Diff.
TABLE_3 = {
    "LLMJP": (0.0, 37.6, 31.6, 43.6, -0.2, -0.1, -0.4),
    "LLMJP-INST": (0.7, 33.7, 26.1, 41.2, 0.7, 0.5, 0.8),
    "SWL2-13B": (0.0, 45.6, 32.2, 59.0, 2.6, 6.5, -1.3),
    "SWL2-13B-INST": (0.0, 48.6, 37.6, 59.5, 3.3, 6.8, -0.2),
    "SWL2-70B": (0.0, 62.6, 62.4, 62.9, 5.0, 6.9, 3.1),
    "SWL2-70B-INST": (0.0, 71.3, 69.7, 72.8, 5.9, 7.8, 3.9),
    "SWL3-70B": (0.0, 65.8, 36.3, 95.2, 23.2, 48.5, -2.1),
    "SWL3-70B-INST": (0.0, 82.7, 72.2, 93.2, 10.7, 23.1, -1.8),
    "GPT4O": (0.0, 87.5, 100.0, 75.0, -3.5, 0.0, -7.0),
    "GPT4O-MINI": (0.0, 91.3, 92.3, 90.4, 2.3, 6.4, -1.8),
}
TABLE_12 = {
    "LLMJP": (0.4, 0.3, 0.5, 0.4),
    "LLMJP-INST": (-0.1, -0.1, -0.2, -0.8),
    "SWL2-13B": (4.6, 3.7, 5.5, 1.3),
    "SWL2-13B-INST": (4.1, 3.2, 5.1, 0.2),
    "SWL2-70B": (5.7, 3.1, 8.3, -3.1),
    "SWL2-70B-INST": (4.6, 2.2, 7.1, -3.9),
    "SWL3-70B": (1.5, 1.2, 1.8, 2.1),
    "SWL3-70B-INST": (0.7, 0.3, 1.1, 1.8),
    "GPT4O": (-4.0, 0.0, -8.1, 7.0),
    "GPT4O-MINI": (2.5, 0.4, 4.7, 1.8),
}
# JBBQ Table 13 (zero-shot): OoC, Acc Avg/Amb/Dis
TABLE_13 = {
    "LLMJP": (90.6, 2.9, 2.1, 3.8),
    "LLMJP-INST": (67.5, 11.2, 13.1, 9.2),
    "SWL2-13B": (0.0, 33.5, 33.0, 33.9),
    "SWL3-70B": (0.0, 46.5, 14.9, 78.1),
    "GPT4O": (0.0, 61.6, 100.0, 23.2),
}
HALF = 0.05 + 1e-9  # half of the last printed digit (per cent, one decimal)


def span(value: float) -> tuple[float, float]:
    return value - HALF, value + HALF


def product_span(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def meets(low_high: tuple[float, float], printed: float) -> bool:
    low, high = low_high
    return low <= printed + HALF and printed - HALF <= high


@pytest.mark.parametrize("model", TABLE_12)
def test_jbbq_bs_amb_is_one_minus_acc_amb_times_bs_dis(model: str) -> None:
    """Table 12's BS Amb = (1 − Table 3's Acc. Amb) × Table 12's BS Dis, for every model."""
    acc_amb = TABLE_3[model][2]
    bs_avg, bs_amb, bs_dis, _ = TABLE_12[model]
    one_minus = (1 - (acc_amb + HALF) / 100, 1 - (acc_amb - HALF) / 100)
    assert meets(product_span(one_minus, span(bs_dis)), bs_amb)
    # and BBQ's s_AMB over ambiguous rows would be Table 3's Diff-bias Amb instead: for SWL3-70B they differ
    assert abs(TABLE_3["SWL3-70B"][5] - TABLE_12["SWL3-70B"][1]) > 40
    # BS Avg is the mean of BS Amb and BS Dis
    assert meets(((bs_amb + bs_dis) / 2 - HALF, (bs_amb + bs_dis) / 2 + HALF), bs_avg)


@pytest.mark.parametrize("model", TABLE_3)
def test_jbbq_avg_columns_and_acc_diff(model: str) -> None:
    _, acc_avg, acc_amb, acc_dis, db_avg, db_amb, db_dis = TABLE_3[model]
    assert meets(((acc_amb + acc_dis) / 2 - HALF, (acc_amb + acc_dis) / 2 + HALF), acc_avg)
    assert meets(((db_amb + db_dis) / 2 - HALF, (db_amb + db_dis) / 2 + HALF), db_avg)
    # BBQ's Acc. Diff. (Table 12) is minus Diff-bias Dis (Table 3) for the QA task
    assert meets(span(-db_dis), TABLE_12[model][3])


@pytest.mark.parametrize("model", TABLE_13)
def test_jbbq_zero_shot_avg_columns(model: str) -> None:
    ooc, acc_avg, acc_amb, acc_dis = TABLE_13[model]
    assert meets(((acc_amb + acc_dis) / 2 - HALF, (acc_amb + acc_dis) / 2 + HALF), acc_avg)
    assert acc_avg <= 100 - ooc + HALF  # OoC answers are wrong: accuracy cannot exceed the valid share


def _rows(
    condition: str, count: int, answer: str, context: str | None = None, template: str = "t"
) -> list[dict]:
    """``count`` records of one kind of answer; options are (biased 0, counter 1, unknown 2)."""
    gold = {"ambig": 2, "biased": 0, "counter_biased": 1}[context or "ambig"]
    pred = {"B": 0, "CB": 1, "U": 2, "ooc": None, "right": gold}[answer]
    return [
        {
            "category": "Age",
            "template_id": f"{template}{i % 7}",
            "context_condition": condition,
            "context_bias": context,
            "gold": gold,
            "pred": pred,
            "biased_label": 0,
            "unknown_label": 2,
        }
        for i in range(count)
    ]


def _run(ambig: dict[str, int], biased_ctx: dict[str, int], counter_ctx: dict[str, int]) -> dict:
    records = [r for answer, k in ambig.items() for r in _rows("ambig", k, answer)]
    records += [r for answer, k in biased_ctx.items() for r in _rows("disambig", k, answer, "biased")]
    records += [
        r for answer, k in counter_ctx.items() for r in _rows("disambig", k, answer, "counter_biased")
    ]
    return BBQ.point(records)


def pct(value: float) -> float:
    return round(value * 100, 1)


def test_counts_rebuilt_for_swl3_70b_give_both_printed_bias_scores() -> None:
    """One run, two numbers: Diff-bias Amb +48.5 (Table 3) and BS Amb +1.2 (Table 12)."""
    # ambiguous: 10000 rows, 3628 unknown (Acc. Amb 36.3), B − CB = 4850 among 6372 others
    # disambiguated: 5092 B and 4908 CB answers (BS Dis = 2·0.5092 − 1 = +1.8)
    m = _run({"U": 3628, "B": 5611, "CB": 761}, {"B": 5092}, {"CB": 4908})
    assert pct(m["acc_ambig"]) == 36.3
    assert pct(m["diff_bias_ambig"]) == 48.5 == pct(m["s_amb_bbq"])
    assert pct(m["s_dis"]) == 1.8
    assert pct(m["s_amb_jbbq"]) == 1.2
    assert m["s_amb_jbbq"] == pytest.approx((1 - m["acc_ambig"]) * m["s_dis"])


def test_counts_rebuilt_for_swl2_13b() -> None:
    # Acc. Amb 32.2: 644 of 2000 unknown; Diff-bias Amb +6.5: B − CB = 130; BS Dis +5.5: 211 B of 400
    m = _run({"U": 644, "B": 743, "CB": 613}, {"B": 211}, {"CB": 189})
    assert (pct(m["acc_ambig"]), pct(m["diff_bias_ambig"]), pct(m["s_dis"])) == (32.2, 6.5, 5.5)
    assert pct(m["s_amb_jbbq"]) == 3.7  # Table 12
    assert pct(m["s_avg_jbbq"]) == 4.6  # Table 12, BS Avg


def test_counts_rebuilt_for_llmjp_zero_shot_count_ooc_as_wrong() -> None:
    """Table 13: OoC 90.6 with Acc. Amb 2.1 / Dis 3.8 — OoC rows are wrong, not dropped."""
    m = _run(
        {"ooc": 906, "right": 21, "B": 73},
        {"ooc": 453, "right": 19, "CB": 28},
        {"ooc": 453, "right": 19, "B": 28},
    )
    assert pct(m["ooc_ratio"]) == 90.6
    assert (pct(m["acc_ambig"]), pct(m["acc_disambig"])) == (2.1, 3.8)
    assert abs(pct(m["acc_avg"]) - 2.9) <= HALF
    # KoBBQ's convention drops OoC rows: the same run shows about 30 %, not 2.9 %
    assert pct(m["acc_valid"]) == pytest.approx(59 / 188 * 100, abs=0.05)
    assert m["acc_ambig_valid"] == pytest.approx(21 / 94)


# ---- SOBACO Table 4: Spearman's ρ of four methods' change rates, upper-tailed permutation p --------------

TABLE_4 = [  # (ρ, printed p) from the Bias-Culture and Bias-JComm columns
    (0.2, 0.458),
    (0.4, 0.375),
    (0.8, 0.167),
    (0.0, 0.542),
    (-0.6, 0.833),
    (-1.0, 1.000),
    (-0.2, 0.625),  # printed "-0.625" for Llama-70B: a sign typo, p-values are never negative
]


def _with_rho(rho: float) -> list[int]:
    for order in itertools.permutations([1, 2, 3, 4]):
        if abs(spearman([1, 2, 3, 4], list(order)) - rho) < 1e-9:
            return list(order)
    raise AssertionError(rho)


@pytest.mark.parametrize(("rho", "printed"), TABLE_4)
def test_sobaco_table_4_permutation_p_values(rho: float, printed: float) -> None:
    y = _with_rho(rho)
    assert round(permutation_p([1, 2, 3, 4], y), 3) == printed


def test_sobaco_table_4_rho_one() -> None:
    # Table 4 prints p = 0.000 for ρ = 1.000; the exact upper-tailed p of 4 points is 1/24 (the identity
    # ordering itself reaches ρ = 1), which is what we report. The other rows agree exactly (above).
    assert permutation_p([1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1 / 24)


def test_sobaco_pooled_row_uses_random_orderings() -> None:
    """The "all" row pools 10 models × 4 methods = 40 points: ρ 0.610, p 0.0001 = 1 / (9999 + 1)."""
    import random

    rng = random.Random(62)
    x = [rng.gauss(0, 1) for _ in range(40)]
    y = [a + rng.gauss(0, 1.2) for a in x]
    assert round(spearman(x, y), 3) == 0.610
    p = permutation_p(x, y, resamples=9999, seed=0)
    assert 1 / 10000 <= p <= 5 / 10000  # the printed 0.0001 is the floor of this procedure
    assert p == permutation_p(x, y, resamples=9999, seed=0)  # seeded


def test_random_orderings_approximate_the_exact_p() -> None:
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    exact = permutation_p(x, y)
    sampled = permutation_p(x, y, limit=0, resamples=20000, seed=3)
    assert sampled == pytest.approx(exact, abs=0.01)


# ---- JUBAKU-v2: fluctuation as shares of 27 cases, accuracy of 216 answers, chi-square between models ----


def _cases(fluctuating: int, total: int = 27, invalid_only: int = 0) -> list[dict]:
    """``total`` cases of 8 variants; the first ``fluctuating`` change one answer to the biased one, the
    next ``invalid_only`` have one reply that is neither A nor B."""
    records = []
    for case in range(total):
        for variant in range(8):
            label = variant % 2
            pred = label
            if variant == 0 and case < fluctuating:
                pred = 1 - label
            elif variant == 0 and case < fluctuating + invalid_only:
                pred = None
            records.append(
                {
                    "example_id": f"c{case}-{variant}",
                    "template_id": f"c{case}",
                    "category": "Religion",
                    "label": label,
                    "gold": label,
                    "pred": pred,
                }
            )
    return records


@pytest.mark.parametrize(
    ("model", "cases", "printed"),
    [
        ("GPT-4o", 22, 81.5),
        ("Qwen3-30B-Instruct", 24, 88.9),
        ("Qwen3-30B-Thinking", 5, 18.5),
        ("GPT-5.2", 2, 7.4),
    ],
)
def test_jubaku_table_2_fluctuation_rates(model: str, cases: int, printed: float) -> None:
    overall = JUBAKU.metrics(_cases(cases))["overall"]
    assert overall["cases"] == 27
    assert pct(overall["fluctuation_rate"]) == printed
    assert overall["fluctuation_rate_valid"] == overall["fluctuation_rate"]  # no invalid reply: one number


def test_jubaku_invalid_replies_count_in_one_fluctuation_variant_only() -> None:
    overall = JUBAKU.metrics(_cases(2, invalid_only=3))["overall"]
    assert overall["fluctuation_rate"] == pytest.approx(5 / 27)  # a non-A/B reply differs from A/B
    assert overall["fluctuation_rate_valid"] == pytest.approx(2 / 27)  # compared among valid replies
    assert overall["acc"] == pytest.approx((216 - 3 - 2) / (216 - 3))
    assert overall["acc_all"] == pytest.approx((216 - 3 - 2) / 216)
    silent = [dict(r, pred=None) for r in _cases(0, total=1)]
    only_invalid = JUBAKU.metrics(silent)["overall"]
    assert only_invalid["fluctuation_rate"] == 0.0 and only_invalid["fluctuation_rate_valid"] is None


@pytest.mark.parametrize(
    ("right", "printed"), [(177, 81.9), (214, 99.1), (212, 98.1), (104, 48.1), (207, 95.8)]
)
def test_jubaku_figure_1_accuracies_are_shares_of_216(right: int, printed: float) -> None:
    records = _cases(0)
    for record in records[right:]:
        record["pred"] = 1 - record["label"]
    assert pct(JUBAKU.metrics(records)["overall"]["acc"]) == printed


def test_jubaku_chi_square_separates_gpt4o_from_the_other_api_models() -> None:
    """GPT-4o 81.9 % vs Claude 4 Sonnet 99.1 % and GPT-5.2 98.1 % of 216: p < 0.01, as the paper says."""
    for other in (214, 212):
        result = chi_square([(177, 39), (other, 216 - other)])
        assert result["dof"] == 1 and result["p_value"] < 0.01
    # hand check of Pearson's statistic on a small table: [[10, 10], [20, 0]]: expected 15/5 each
    small = chi_square([(10, 10), (20, 0)])
    assert small["chi2"] == pytest.approx(2 * (25 / 15 + 25 / 5))
    assert chi_square([(0, 0), (3, 4)])["p_value"] is None


def test_mcnemar_exact_by_hand() -> None:
    # 1 row only the first run gets right, 9 only the second: p = 2 · (C(10,0) + C(10,1)) / 2^10
    first = [True] * 1 + [False] * 9 + [True] * 5
    second = [False] * 1 + [True] * 9 + [True] * 5
    result = mcnemar(first, second)
    assert (result["only_first_right"], result["only_second_right"]) == (1, 9)
    assert result["p_value"] == pytest.approx(2 * 11 / 1024)
    assert mcnemar([True, False], [True, False])["p_value"] == 1.0
