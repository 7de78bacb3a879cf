"""From a probe's per-template sums to its figures: the variant each template is answered with, the
probe's accuracy per scope with a 95% interval from a bootstrap over templates, chance, and the worst
templates.

- **Variant choice, leave one template out.** A template's rows are answered by the variant that does best
  on the *other* templates of its category (ties: the first variant). A rule is never judged on the rows
  it was chosen on, yet a benchmark whose templates share one direction (say "the person mentioned last
  answers the negative question") is caught whichever direction it is.
- **Interval.** Templates, not rows, are resampled (rows of a template share their text and stand or fall
  together); the overall scope resamples within each category. 95% percentile interval; the seed comes
  from the config, probe and scope, so the figures are the same on every run. A bootstrap over one or two
  templates collapses to a point, so the interval reported is the wider of it and a Wilson score interval
  over the rows: with many templates the bootstrap is the wider, with few the rows' interval is.
- **Chance.** The mean over the scored rows of what a uniform guess among the probe's candidates scores,
  or, for a probe with a binary target, the scope's majority-class rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..templating import stable_hash
from .probe import Tally

ROWS, CHANCE, CLASSES, HITS = 0, 1, 2, 3  # the columns of a template's sums (see Tally)
# The standard normal's 97.5% quantile, the float scipy.special.ndtri(0.975) gives (one unit in the last
# place above statistics.NormalDist's): a two-sided 95% interval.
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Scope:
    """A probe's figures over some templates."""

    rows: int
    templates: int
    value: float  # accuracy (or the rate of a defect)
    low: float
    high: float
    chance: float
    rule: str  # the variant that answers most of the scope's rows


@dataclass(frozen=True)
class TemplateScore:
    category: str
    template: str
    rows: int
    hits: float
    value: float


@dataclass(frozen=True)
class Figures:
    overall: Scope
    categories: dict[str, Scope]
    templates: list[TemplateScore]  # every template, highest value first


def figures(
    tally: Tally,
    variants: tuple[str, ...],
    *,
    majority: bool,
    resamples: int,
    seed_parts: tuple[str, ...],
) -> Figures | None:
    """The figures of one probe on one config; None when it scored no row."""
    keys = sorted(tally.sums)
    if not keys:
        return None
    sums = np.stack([tally.sums[key] for key in keys])
    categories = sorted({category for category, _ in keys})
    category_of = np.array([categories.index(category) for category, _ in keys])
    chosen = choose_variants(category_of, sums[:, HITS:])
    hits = sums[np.arange(len(keys)), HITS + chosen]
    values = hits / sums[:, ROWS]
    order = sorted(range(len(keys)), key=lambda i: (-values[i], -sums[i, ROWS], keys[i]))
    templates = [
        TemplateScore(keys[i][0], keys[i][1], int(sums[i, ROWS]), float(hits[i]), float(values[i]))
        for i in order
    ]

    def scope(members: np.ndarray, name: str) -> Scope:
        rows = sums[members, ROWS]
        total = rows.sum()
        if majority:
            share = sums[members, CLASSES].sum() / total
            chance = max(share, 1.0 - share)
        else:
            chance = sums[members, CHANCE].sum() / total
        low, high = bootstrap(
            hits[members], rows, category_of[members], resamples, stable_hash("audit", *seed_parts, name)
        )
        row_low, row_high = wilson(float(hits[members].sum()), float(total))
        low, high = min(low, row_low), max(high, row_high)
        used = np.bincount(chosen[members], weights=rows, minlength=len(variants))
        return Scope(
            rows=int(round(total)),
            templates=int(len(members)),
            value=float(hits[members].sum() / total),
            low=low,
            high=high,
            chance=float(chance),
            rule=variants[int(np.argmax(used))],
        )

    every = np.arange(len(keys))
    return Figures(
        overall=scope(every, "overall"),
        categories={name: scope(np.flatnonzero(category_of == i), name) for i, name in enumerate(categories)},
        templates=templates,
    )


def choose_variants(category_of: np.ndarray, hits: np.ndarray) -> np.ndarray:
    """Per template, the variant with most hits on the other templates of its category (first on ties)."""
    per_category = np.zeros((category_of.max() + 1, hits.shape[1]))
    np.add.at(per_category, category_of, hits)
    others = per_category[category_of] - hits
    return np.argmax(others, axis=1)


def wilson(hits: float, rows: float) -> tuple[float, float]:
    """95% Wilson score interval of hits/rows, treating rows as independent (Newcombe 1998, without
    continuity correction). Written out rather than taken from scipy.stats, whose import would cost a
    build more than its whole audit; the operations are scipy's own (``binomtest(…).proportion_ci(
    method="wilson")``), in its order, so the floats are the same (a test compares them)."""
    successes = int(round(hits))
    trials = max(int(round(rows)), successes, 1)
    share = successes / trials
    z_squared = Z_95 * Z_95
    denominator = 2 * (trials + z_squared)
    center = (2 * trials * share + z_squared) / denominator
    delta = Z_95 / denominator * math.sqrt(4 * trials * share * (1 - share) + z_squared)
    low = 0.0 if successes == 0 else center - delta
    high = 1.0 if successes == trials else center + delta
    return float(low), float(high)


def bootstrap(
    hits: np.ndarray, rows: np.ndarray, strata: np.ndarray, resamples: int, seed: int
) -> tuple[float, float]:
    """95% percentile interval of sum(hits)/sum(rows), resampling templates within each stratum."""
    rng = np.random.default_rng(seed)
    got = np.zeros(resamples)
    total = np.zeros(resamples)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        picks = members[rng.integers(0, len(members), size=(resamples, len(members)))]
        got += hits[picks].sum(axis=1)
        total += rows[picks].sum(axis=1)
    values = got / total
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)
