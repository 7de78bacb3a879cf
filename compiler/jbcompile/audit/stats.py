"""From a probe's per-template sums to its figures: the variant each scope is answered with, the probe's
accuracy per scope with a 95% interval from a bootstrap over templates, chance, and the worst templates.

- **Variant choice, per scope.** A scope's rows (a category's, or the whole config's) are all answered by
  one variant: the fixed direction that does best on that scope (ties: the first variant), and the report
  names it. That is the figure of a rule a model could adopt — "the person mentioned last answers the
  negative question" — whichever way a benchmark leans. Choosing each template's direction on the *other*
  templates instead would be anti-correlated with the template wherever templates disagree: one 100-row
  template one way and three 20-row templates the other make the fixed rule right on 62.5% of rows and
  that choice on none. The only in-sample step is the pick among a probe's few directions (two to nine,
  complementary in pairs), which moves a one-sided test to a two-sided one and, with more pairs, lifts a
  figure on rows without a cue (docs/audit.md quantifies it); the model probe, which fits many
  parameters, stays cross-validated by template (:mod:`.model`).
- **Interval.** Templates, not rows, are resampled (rows of a template share their text and stand or fall
  together); the overall scope resamples within each category. 95% percentile interval of the scope's
  chosen variant, made simultaneous over the pick: with k complementary pairs of directions each tail is
  2.5%/k (Bonferroni, :func:`pick_tail`), so a scope without a cue clears its bar no more often with
  nine directions than with two; the seed comes from the config, probe and scope, so the figures are
  the same on every run. A bootstrap over one or two templates collapses to a point, so the interval
  reported is the wider of it and a Wilson score interval over the rows: with many templates the
  bootstrap is the wider, with few the rows' interval is.
- **Chance.** The mean over the scored rows of what a uniform guess among the probe's candidates scores,
  or, for a probe with a binary target, the scope's majority-class rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..templating import stable_hash
from .probe import Tally

ROWS, CHANCE, CLASSES, HITS = 0, 1, 2, 3  # the columns of a template's sums (see Tally)


@dataclass(frozen=True)
class Scope:
    """A probe's figures over some templates."""

    rows: int
    templates: int
    value: float  # accuracy (or the rate of a defect)
    low: float
    high: float
    chance: float
    rule: str  # the variant that answers the scope's rows: the one that does best on them
    ranked: list[TemplateScore]  # the scope's templates under that variant, highest value first


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
    tail = pick_tail(len(variants))
    sums = np.stack([tally.sums[key] for key in keys])
    categories = sorted({category for category, _ in keys})
    category_of = np.array([categories.index(category) for category, _ in keys])

    def scope(members: np.ndarray, name: str) -> Scope:
        rows = sums[members, ROWS]
        total = rows.sum()
        if majority:
            share = sums[members, CLASSES].sum() / total
            chance = max(share, 1.0 - share)
        else:
            chance = sums[members, CHANCE].sum() / total
        chosen = choose_variant(sums[members, HITS:])
        hits = sums[members, HITS + chosen]
        low, high = bootstrap(
            hits, rows, category_of[members], resamples, stable_hash("audit", *seed_parts, name), tail
        )
        row_low, row_high = wilson(float(hits.sum()), float(total), tail)
        low, high = min(low, row_low), max(high, row_high)
        values = hits / rows
        order = sorted(range(len(members)), key=lambda i: (-values[i], -rows[i], keys[members[i]]))
        ranked = [
            TemplateScore(
                keys[members[i]][0], keys[members[i]][1], int(rows[i]), float(hits[i]), float(values[i])
            )
            for i in order
        ]
        return Scope(
            rows=int(round(total)),
            templates=int(len(members)),
            value=float(hits.sum() / total),
            low=low,
            high=high,
            chance=float(chance),
            rule=variants[chosen],
            ranked=ranked,
        )

    every = np.arange(len(keys))
    return Figures(
        overall=scope(every, "overall"),
        categories={name: scope(np.flatnonzero(category_of == i), name) for i, name in enumerate(categories)},
    )


def pick_tail(variants: int) -> float:
    """Each tail of the interval of the direction a scope picks among ``variants``: 2.5% for one pair,
    2.5%/k for k pairs (Bonferroni). Reporting the best of k pairs is k two-sided tests at once; without
    the correction a scope without a cue clears its bar three times as often with four pairs as with
    one (benchmarks/audit_pick_null.py), and a release would be refused for noise."""
    return 0.025 / max(1, math.ceil(variants / 2))


def choose_variant(hits: np.ndarray) -> int:
    """The variant with most hits over these templates' rows (the first on ties; sums are rounded so
    that float noise does not break a tie)."""
    return int(np.argmax(np.round(hits.sum(axis=0), 6)))


# The standard normal's 97.5% quantile, as scipy.special.ndtri(0.975) gives it (a test holds them equal).
Z_975 = 1.959963984540054


def wilson(hits: float, rows: float, tail: float = 0.025) -> tuple[float, float]:
    """Wilson score interval of hits/rows (95% by default: ``tail`` on each side), treating rows as
    independent: scipy's ``binomtest(…).proportion_ci(method="wilson")`` to the last bit (a test holds
    them equal), written out because importing scipy.stats costs a build half a second on its critical
    path (the audit's model, which imports it, loads in a side process)."""
    z = Z_975 if tail == 0.025 else NormalDist().inv_cdf(1 - tail)
    successes = int(round(hits))
    trials = max(int(round(rows)), successes, 1)
    share = successes / trials
    denominator = 2 * (trials + z**2)
    centre = (2 * trials * share + z**2) / denominator
    half = z / denominator * math.sqrt(4 * trials * share * (1 - share) + z**2)
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == trials else centre + half
    return low, high


def bootstrap(
    hits: np.ndarray, rows: np.ndarray, strata: np.ndarray, resamples: int, seed: int, tail: float = 0.025
) -> tuple[float, float]:
    """Percentile interval of sum(hits)/sum(rows) (95% by default: ``tail`` on each side), resampling
    templates within each stratum."""
    rng = np.random.default_rng(seed)
    got = np.zeros(resamples)
    total = np.zeros(resamples)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        picks = members[rng.integers(0, len(members), size=(resamples, len(members)))]
        got += hits[picks].sum(axis=1)
        total += rows[picks].sum(axis=1)
    values = got / total
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)
