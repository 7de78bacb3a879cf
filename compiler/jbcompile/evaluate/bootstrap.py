"""Count-based metrics and their cluster-bootstrap confidence intervals, for any kind.

A kind describes its metrics in two pure functions: ``count(record) -> {name: number}`` (what one row
adds to each counter) and ``formulas(counts) -> {metric: value}`` written with numpy so the same code
runs on one set of counts (the point estimate) and on a vector of resampled counts (the bootstrap).
Empty denominators are NaN inside, and ``None`` (JSON null) outside — never 0.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

Counts = Mapping[str, Any]  # counter name -> number or numpy array of replicates
R = TypeVar("R", bound=Mapping[str, Any])  # a record, as the kind's own functions take it
CountFn = Callable[[R], Mapping[str, float]]
FormulaFn = Callable[[Counts], dict[str, Any]]
MIN_CLUSTERS = 2  # a bootstrap over one template (case) repeats it: no interval, no p-value


def ratio(numerator: Any, denominator: Any) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def to_json_value(value: Any) -> Any:
    """A 0-d metric (or a list of them) as a JSON number, or None where it is undefined."""
    if isinstance(value, list | tuple):  # a list metric keeps its length: [null, null, null] when undefined
        return [to_json_value(v) for v in value]
    number = float(np.asarray(value))
    return None if np.isnan(number) else number + 0.0  # + 0.0: a zero is written 0.0, never -0.0


def count_records(records: Iterable[R], count: CountFn[R], names: Sequence[str]) -> dict[str, float]:
    totals = dict.fromkeys(names, 0.0)
    for record in records:
        for name, value in count(record).items():
            totals[name] += value
    return totals


def point_metrics(
    records: Sequence[R], count: CountFn[R], names: Sequence[str], formulas: FormulaFn
) -> dict[str, Any]:
    counts = count_records(records, count, names)
    return {name: to_json_value(value) for name, value in formulas(counts).items()}


def stable_seed(seed: int, scope: str) -> list[int]:
    """A numpy seed sequence keyed by the run seed and a scope name (``overall``, a category …)."""
    digest = hashlib.sha256(scope.encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "little")]


def cluster_bootstrap(
    records: Sequence[R],
    *,
    cluster: Callable[[R], str],
    count: CountFn[R],
    names: Sequence[str],
    formulas: FormulaFn,
    resamples: int,
    seed: int,
    scope: str,
    confidence: float = 0.95,
    no_interval: Iterable[str] = (),
) -> dict[str, Any]:
    """Percentile intervals of every metric, resampling whole clusters (templates) with replacement.

    Rows of one template share wording, so they are not independent; resampling templates keeps that
    dependence inside each replicate. A metric undefined in some replicates is summarized over the
    replicates where it is defined; undefined everywhere gives None. Fewer than two clusters give no
    interval: every replicate would be the one cluster again, a zero-width interval that says nothing.
    """
    skip = set(no_interval)
    point = formulas(count_records(records, count, names))
    keys = sorted({cluster(record) for record in records})
    if len(keys) < MIN_CLUSTERS or resamples <= 0:  # no interval; a list metric keeps its shape
        return {name: [None] * len(v) if isinstance(v, list | tuple) else None for name, v in point.items()}
    matrix = _cluster_matrix(records, keys, cluster, count, names)
    replicated = _weights(len(keys), resamples, seed, scope) @ matrix  # resamples x counters
    results = formulas({name: replicated[:, j] for j, name in enumerate(names)})
    alpha = (1.0 - confidence) / 2.0
    intervals: dict[str, Any] = {}
    for name, values in results.items():
        if name in skip:
            intervals[name] = None
        elif isinstance(values, list | tuple):
            intervals[name] = [_interval(v, alpha) for v in values]
        else:
            intervals[name] = _interval(values, alpha)
    return intervals


def _weights(clusters: int, resamples: int, seed: int, scope: str) -> np.ndarray:
    """How often each cluster is drawn in each replicate (resamples x clusters), seeded by scope."""
    rng = np.random.default_rng(stable_seed(seed, scope))
    draws = rng.integers(0, clusters, size=(resamples, clusters))
    weights = np.zeros((resamples, clusters))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1.0)
    return weights


def _cluster_matrix(
    records: Sequence[R],
    keys: Sequence[str],
    cluster: Callable[[R], str],
    count: CountFn[R],
    names: Sequence[str],
) -> np.ndarray:
    """Counters summed per cluster: one row per key, one column per counter name."""
    index = {key: i for i, key in enumerate(keys)}
    column = {name: j for j, name in enumerate(names)}
    matrix = np.zeros((len(keys), len(names)))
    for record in records:
        for name, value in count(record).items():
            matrix[index[cluster(record)], column[name]] += value
    return matrix


def paired_cluster_bootstrap(
    first: Sequence[R],
    second: Sequence[R],
    *,
    metrics: Sequence[str],
    cluster: Callable[[R], str],
    count: CountFn[R],
    names: Sequence[str],
    formulas: FormulaFn,
    resamples: int,
    seed: int,
    scope: str,
    confidence: float = 0.95,
) -> dict[str, dict[str, Any]]:
    """Second minus first for each metric, with a paired bootstrap over clusters (templates).

    Both runs are resampled with the same draw of templates in every replicate, so what the templates
    share (wording, difficulty) cancels in the difference. The p-value is two-sided: twice the smaller
    tail of replicates at or beyond 0, counted with the observed difference, (k + 1) / (R + 1), capped at
    1 — never 0 from a finite number of replicates; R counts the replicates where the difference is
    defined. With fewer than two clusters the difference is given without interval or p-value: every
    replicate would repeat it, and p would read 2 / (R + 1) whatever the runs did.
    """
    keys = sorted({cluster(record) for record in [*first, *second]})
    point_a = formulas(count_records(first, count, names))
    point_b = formulas(count_records(second, count, names))
    out: dict[str, dict[str, Any]] = {}
    if len(keys) < MIN_CLUSTERS or resamples <= 0:
        return {
            m: {"diff": _difference(point_a, point_b, m) if keys else None, "ci": None, "p_value": None}
            for m in metrics
        }
    matrix_a = _cluster_matrix(first, keys, cluster, count, names)
    matrix_b = _cluster_matrix(second, keys, cluster, count, names)
    weights = _weights(len(keys), resamples, seed, scope)
    replicated_a, replicated_b = weights @ matrix_a, weights @ matrix_b
    values_a = formulas({name: replicated_a[:, j] for j, name in enumerate(names)})
    values_b = formulas({name: replicated_b[:, j] for j, name in enumerate(names)})
    alpha = (1.0 - confidence) / 2.0
    for metric in metrics:
        diff = _difference(point_a, point_b, metric)
        replicates = np.asarray(values_b[metric], dtype=float) - np.asarray(values_a[metric], dtype=float)
        finite = replicates[~np.isnan(replicates)]
        p_value = None
        if diff is not None and finite.size:
            tail = min(int(np.sum(finite <= 0)), int(np.sum(finite >= 0)))
            p_value = float(min(1.0, 2 * (tail + 1) / (finite.size + 1)))
        out[metric] = {"diff": diff, "ci": _interval(replicates, alpha), "p_value": p_value}
    return out


def _difference(point_a: Mapping[str, Any], point_b: Mapping[str, Any], metric: str) -> Any:
    return to_json_value(np.asarray(point_b[metric]) - np.asarray(point_a[metric]))


def _interval(values: Any, alpha: float) -> list[float] | None:
    array = np.asarray(values, dtype=float)
    finite = array[~np.isnan(array)]
    if finite.size == 0:
        return None
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return [to_json_value(low), to_json_value(high)]
