"""Identical rows: two rows of a config that show the same texts and options in the same order.

An identical row weighs its item twice in every metric, so the build emits each such row once (the first
in build order) and reports the templates whose rows it left out (AU010, a note). What a row *shows* is
its design's row contract (``Kind.shown_columns``). A stable config (``lite``) is filtered per template,
so that a template's rows still depend on that template alone (see :class:`IdenticalRows`).

The filter keeps a 16-byte hash per kept row, in sorted numpy arrays, so memory grows by 16 bytes per
row, not by the rows themselves. A 128-bit hash makes it practically impossible for two different rows to
be taken for identical.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..designs import ConfigSpec, Row
    from ..diagnostics import Diagnostic

_NONE = "\x01"  # a missing value, told apart from an empty text
_SEPARATOR = "\x00"


def shown_digests(rows: Sequence[Row], columns: Sequence[str]) -> np.ndarray:
    """A (rows, 2) uint64 array: the 128-bit hash of each row's shown columns."""
    blake2b, join = hashlib.blake2b, _SEPARATOR.join
    try:  # every row has every column, all texts: the common case, taken in one go
        values = map(itemgetter(*columns), rows) if len(columns) > 1 else ((row[columns[0]],) for row in rows)
        texts = [join(shown) for shown in values]
    except (KeyError, TypeError):
        texts = [join([_NONE if (v := row.get(c)) is None else str(v) for c in columns]) for row in rows]
    digests = b"".join(blake2b(text.encode("utf-8"), digest_size=16).digest() for text in texts)
    return np.frombuffer(digests, dtype=np.uint64).reshape(-1, 2)


class _Digests:
    """A growing set of 128-bit digests: sorted runs of (high, low) words, merged like a log-structured
    tree (each new run merges with the runs no larger than it); a lookup is a binary search per run."""

    def __init__(self) -> None:
        self._runs: list[tuple[np.ndarray, np.ndarray]] = []

    def first(self, digests: np.ndarray) -> np.ndarray:
        """Per digest: True when it was not seen before (nor earlier in ``digests``); remembers them."""
        keep = np.zeros(len(digests), dtype=bool)
        if not len(digests):
            return keep
        keys = np.ascontiguousarray(digests).view(np.dtype((np.void, 16))).ravel()
        _, first = np.unique(keys, return_index=True)
        keep[first] = True
        candidates = np.flatnonzero(keep)
        keep[candidates[self._seen(digests[candidates, 0], digests[candidates, 1])]] = False
        self._remember(digests[keep])
        return keep

    def _seen(self, high: np.ndarray, low: np.ndarray) -> np.ndarray:
        found = np.zeros(len(high), dtype=bool)
        for run_high, run_low in self._runs:
            start = np.searchsorted(run_high, high, side="left")
            stop = np.searchsorted(run_high, high, side="right")
            for index in np.flatnonzero(stop > start):
                found[index] |= bool(np.any(run_low[start[index] : stop[index]] == low[index]))
        return found

    def _remember(self, digests: np.ndarray) -> None:
        if not len(digests):
            return
        run = (digests[:, 0].copy(), digests[:, 1].copy())
        while self._runs and len(self._runs[-1][0]) <= len(run[0]):
            high, low = self._runs.pop()
            run = (np.concatenate([high, run[0]]), np.concatenate([low, run[1]]))
        order = np.lexsort((run[1], run[0]))
        self._runs.append((run[0][order], run[1][order]))


class IdenticalRows:
    """The identical-row filter of one config: which rows to emit, and how many each template lost.

    In a *stable* config (``ConfigSpec.stable``: a template's rows depend on that template alone, like
    ``lite``) only a row identical to another row of its own template is left out; one identical to an
    earlier template's row is kept and counted, for a warning (AU011): dropping it would let one template
    change another's rows.
    """

    def __init__(self, config: str, columns: Sequence[str], stable: bool = False) -> None:
        self.config, self.columns, self.stable = config, tuple(columns), stable
        self._seen = _Digests()
        self._local = _Digests()
        self.dropped = 0  # rows of the current template left out
        self.repeated = 0  # rows of the current template kept although an earlier template has them

    @classmethod
    def of(cls, kind: str, spec: ConfigSpec) -> IdenticalRows:
        from ..designs import get_kind

        shown = get_kind(kind).shown_columns
        if shown is None:
            shown = tuple(name for name in spec.schema.names if name != "example_id")
        return cls(spec.name, shown, spec.stable)

    def start(self, template: Any) -> None:
        """The rows of a new template follow."""
        self._local = _Digests()

    def fresh(self, rows: Sequence[Row]) -> list[Row]:
        """The rows to emit, in order; the others are counted in ``dropped``."""
        if not rows:
            return []
        digests = shown_digests(rows, self.columns)
        if self.stable:
            keep = self._local.first(digests)
            self.repeated += int((~self._seen.first(digests[keep])).sum())
        else:
            keep = self._seen.first(digests)
        self.dropped += len(rows) - int(keep.sum())
        return [row for row, kept in zip(rows, keep.tolist(), strict=True) if kept]

    def take_counts(self) -> tuple[int, int]:
        """(dropped, repeated) of the template just built, and start counting afresh."""
        counts = (self.dropped, self.repeated)
        self.dropped = self.repeated = 0
        return counts


def identical_notes(template: Any, filters: Iterable[IdenticalRows]) -> list[Diagnostic]:
    """AU010 (a note) when identical rows of ``template`` were left out, AU011 (a warning) when rows of a
    stable config repeat an earlier template's; the counters of ``filters`` start afresh."""
    from ..diagnostics import Severity

    counts: tuple[dict[str, int], dict[str, int]] = ({}, {})  # left out, kept although repeated
    for rows in filters:
        for found, n in zip(counts, rows.take_counts(), strict=True):
            if n:
                found[rows.config] = n
    kinds = (
        (
            "AU010",
            Severity.INFO,
            "identical to an earlier row in every shown text and option order were emitted once "
            "(left out: {})",
            "make the fillers or wordings differ, or drop a template that repeats another",
        ),
        (
            "AU011",
            Severity.WARNING,
            "repeat rows of an earlier template in every shown text and option order ({}); they "
            "stay, so that a template's rows in these configs depend on it alone",
            "make the two templates differ, or drop the one that repeats the other",
        ),
    )
    return [
        template.diagnostic(
            ("id",),
            code,
            f"rows of {template.id} "
            + message.format(", ".join(f"{c}: {n:,} row{'' if n == 1 else 's'}" for c, n in found.items())),
            severity=severity,
            hint=hint,
        )
        for found, (code, severity, message, hint) in zip(counts, kinds, strict=True)
        if found
    ]
