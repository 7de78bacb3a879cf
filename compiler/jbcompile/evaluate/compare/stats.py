"""The paired tests between runs, on the rows both answered: McNemar's exact test of the kind's
accuracy, a paired bootstrap over templates of its bias scores, and — for kinds that name one — a
chi-square test of right / wrong counts. p-values are per comparison, not adjusted."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from ..bootstrap import paired_cluster_bootstrap
from ..kind import EvalKind
from .runs import Run


def mcnemar(first: Sequence[bool], second: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test of paired right/wrong outcomes: a two-sided binomial test on the rows where
    exactly one run is right (p = 1 when there are none; None when the runs share no row)."""
    from scipy.stats import binomtest

    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    discordant = only_first + only_second
    if not first:
        p_value = None
    elif discordant == 0:
        p_value = 1.0
    else:
        p_value = float(binomtest(min(only_first, only_second), discordant, 0.5).pvalue)
    return {"only_first_right": only_first, "only_second_right": only_second, "p_value": p_value}


def chi_square(table: Sequence[Sequence[int]]) -> dict[str, Any]:
    """Pearson's chi-square test of homogeneity (no continuity correction) of a runs × (right, wrong)
    table; None where a row or column is empty."""
    from scipy.stats import chi2_contingency

    if any(sum(row) == 0 for row in table) or any(sum(col) == 0 for col in zip(*table, strict=True)):
        return {"table": [list(row) for row in table], "chi2": None, "dof": None, "p_value": None}
    statistic, p_value, dof, _ = chi2_contingency(table, correction=False)
    return {
        "table": [list(row) for row in table],
        "chi2": float(statistic),
        "dof": int(dof),
        "p_value": float(p_value),
    }


def paired_tests(
    kind: EvalKind, runs: Sequence[Run], names: Sequence[str], resamples: int, seed: int
) -> dict[str, Any]:
    """Every pair of runs with predictions, on the rows both answered."""
    out: dict[str, Any] = {
        "mcnemar": [],
        "bootstrap": [],
        "chi_square": [],
        "chi_square_all": None,
        "skipped": [],
    }
    usable = [(name, run) for name, run in zip(names, runs, strict=True) if run.records is not None]
    out["skipped"] = [name for name, run in zip(names, runs, strict=True) if run.records is None]
    by_id = {name: {str(r["example_id"]): r for r in run.records or []} for name, run in usable}
    tested = kind.paired_metrics(runs[0].results.task if runs else None)  # the runs share their task
    for (name_a, _), (name_b, _) in combinations(usable, 2):
        shared = sorted(set(by_id[name_a]) & set(by_id[name_b]))
        rows_a = [by_id[name_a][i] for i in shared]
        rows_b = [by_id[name_b][i] for i in shared]
        pair = {"first": name_a, "second": name_b, "shared_rows": len(shared)}
        accuracy_rows = [j for j, row in enumerate(rows_a) if kind.accuracy_row(row)]
        right_a = [
            rows_a[j]["pred"] is not None and rows_a[j]["pred"] == rows_a[j]["gold"] for j in accuracy_rows
        ]
        right_b = [
            rows_b[j]["pred"] is not None and rows_b[j]["pred"] == rows_b[j]["gold"] for j in accuracy_rows
        ]
        out["mcnemar"].append(
            {
                **pair,
                "metric": kind.paired_accuracy,
                "rows": len(accuracy_rows),
                "first_acc": sum(right_a) / len(right_a) if right_a else None,
                "second_acc": sum(right_b) / len(right_b) if right_b else None,
                **mcnemar(right_a, right_b),
            }
        )
        if tested:
            diffs = paired_cluster_bootstrap(
                kind.prepare_records(rows_a),
                kind.prepare_records(rows_b),
                metrics=tested,
                cluster=kind.cluster,
                count=kind.count,
                names=kind.count_names,
                formulas=kind.formulas,
                resamples=resamples,
                seed=seed,
                scope=f"compare:{name_a}|{name_b}",
            )
            out["bootstrap"] += [{**pair, "metric": metric, **values} for metric, values in diffs.items()]
        if kind.chi_square_metric:
            table = [kind.chi_square_counts(rows_a), kind.chi_square_counts(rows_b)]
            out["chi_square"].append({**pair, "metric": kind.chi_square_metric, **chi_square(table)})
    if kind.chi_square_metric and len(usable) > 2:
        common = set.intersection(*(set(by_id[name]) for name, _ in usable))
        table = [kind.chi_square_counts([by_id[name][i] for i in sorted(common)]) for name, _ in usable]
        out["chi_square_all"] = {
            "runs": [name for name, _ in usable],
            "shared_rows": len(common),
            "metric": kind.chi_square_metric,
            **chi_square(table),
        }
    return out
