"""Which rows a run evaluates: all, the first N (``--limit``), or a stratified sample (``--sample N``).

``--limit`` takes rows in dataset order, so a small N sees one category only. ``--sample N`` draws from
every stratum — a kind's ``strata_fields``, e.g. category and context condition — in proportion to
its size, with at least one row per stratum. An N below the number of strata cannot keep that promise:
it is refused (EV031, naming the smallest N that can), never run on a sample that silently lacks whole
strata (a run without the rows of one context condition has no accuracy for it). The draw depends on the seed
alone, and the rows keep their dataset order, so a sample is the same every time and its prompts are the
full run's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError


def allocate(sizes: Mapping[Hashable, int], size: int) -> dict[Hashable, int]:
    """Rows per stratum: one each, the rest in proportion to what each stratum has left (largest
    remainders first, ties by stratum order); everything when ``size`` covers it. ``size`` is at least
    the number of strata (:func:`stratified_sample` refuses less)."""
    strata = list(sizes)
    if size >= sum(sizes.values()):
        return dict(sizes)
    if size < len(strata):
        raise ValueError(f"{size} rows cannot cover {len(strata)} strata")
    spare = {stratum: sizes[stratum] - 1 for stratum in strata}
    rest, total = size - len(strata), sum(spare.values())
    quotas = {stratum: rest * spare[stratum] / total for stratum in strata}
    counts = {stratum: 1 + math.floor(quotas[stratum]) for stratum in strata}
    leftover = size - sum(counts.values())
    by_remainder = sorted(
        strata, key=lambda s: -(quotas[s] - math.floor(quotas[s]))
    )  # stable: ties keep order
    for stratum in by_remainder[:leftover]:
        counts[stratum] += 1
    return counts


def stratified_sample(
    strata: Sequence[Hashable], size: int, seed: int, fields: Sequence[str] = ("stratum",)
) -> list[int]:
    """Indices of ``size`` rows (in their order) drawn across the strata of ``strata`` (one key a row,
    the values of ``fields``); EV031 when ``size`` is below the number of strata."""
    members: dict[Hashable, list[int]] = {}
    for index, stratum in enumerate(strata):
        members.setdefault(stratum, []).append(index)
    if size < len(members):
        raise DiagnosticError([too_small(size, len(members), fields)])
    ordered = dict(sorted(members.items(), key=lambda item: repr(item[0])))  # not the rows' order
    rng = random.Random(seed)
    counts = allocate({stratum: len(rows) for stratum, rows in ordered.items()}, size)
    chosen = [index for stratum, count in counts.items() for index in rng.sample(ordered[stratum], count)]
    return sorted(chosen)


def too_small(size: int, strata: int, fields: Sequence[str]) -> Diagnostic:
    """EV031: a ``--sample`` that cannot give every stratum a row."""
    what = " × ".join(name.replace("_", " ") for name in fields)
    return Diagnostic(
        "EV031",
        f"--sample {size} cannot cover the {strata} strata of this run ({what}): "
        f"a stratified sample has at least one row of each",
        hint=f"use --sample {strata} or more; for a quick look at the first rows, --limit {size}",
    )


def chosen_rows(
    items: Sequence[Any],
    records: Mapping[str, Mapping[str, Any]],
    fields: Sequence[str],
    limit: int | None,
    sample: int | None,
    seed: int,
) -> list[Any]:
    """The prompt items a run evaluates: the first ``limit``, a stratified ``sample`` by the record
    ``fields`` of each item's row, or all of them."""
    if sample is not None:
        strata = [tuple(records[item.example_id].get(name) for name in fields) for item in items]
        return [items[index] for index in stratified_sample(strata, sample, seed, fields)]
    return list(items[:limit] if limit is not None else items)
