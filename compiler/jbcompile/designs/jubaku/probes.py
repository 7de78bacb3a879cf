"""Shortcut probes of the ``jubaku`` design (docs/audit.md): can the neutral response be told from the
biased one without judging what each reason rests on?

Both responses end in the same conclusion, so the probes read their *reasons*: what is left of each
response once the text the two share at the start and at the end is cut off.

- ``context-overlap``: the response whose reason shares more character bigrams with the dialogue (a
  neutral reason that paraphrases the situation gives itself away);
- ``option-length``: the longer (or shorter) response;
- ``connectives``: the response that gives a cause (ので, から, ため) rather than a concession (が、,
  けれど, のに) — a biased reason written as a concession does not support the conclusion;
- ``option-position``: response A or B;
- ``reason-edges``: a model of the words that open and close each reason, cross-validated by case: a
  neutral reason that always opens with 「実際、」 and a biased one with 「やはり」 gives itself away to
  it, and to no fixed rule above.

Every row is scored; chance is 1/2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...audit.generic import OptionPosition
from ...audit.model import Pairs, PairwiseModelProbe
from ...audit.probe import (
    Batch,
    Probe,
    ProbeInputs,
    Scored,
    compare_picks,
    differing_parts,
    pick_hits,
    shared_share,
)

COLUMNS = ("context", "ans0", "ans1", "label")
HALF = "1/2: a guess between the two responses"
KEPT_JOINT = 3
EDGE = 3  # characters of a reason's opening and closing that reason-edges reads
CAUSE = ("ので", "から", "ため", "だから", "なので")
CONCESSION = ("が、", "けれど", "けど", "のに", "ものの", "にもかかわらず", "とはいえ", "しかし")


def probes(inputs: ProbeInputs) -> list[Probe]:
    return [ContextOverlap(), ResponseLength(), Connectives(), OptionPosition(2), ReasonEdges()]


@dataclass(frozen=True)
class _Reasons:
    first: list[str]
    second: list[str]
    rows: np.ndarray  # rows with two responses and a gold among them


def _reasons(batch: Batch) -> _Reasons:
    found: dict[tuple[str, str], tuple[str, str]] = {}
    firsts, seconds = [], []
    for pair in zip(batch.texts("ans0"), batch.texts("ans1"), strict=True):
        if pair not in found:
            found[pair] = reasons(*pair)
        firsts.append(found[pair][0])
        seconds.append(found[pair][1])
    label = batch.ints("label")
    return _Reasons(firsts, seconds, (label == 0) | (label == 1))


def reasons(first: str, second: str) -> tuple[str, str]:
    """Each response without the text both share at their start and at their end — but the first
    ``KEPT_JOINT`` characters of the shared end stay, so that a connective that leads into the shared
    conclusion (「…が、」 against 「…ので、」) is still seen."""
    return differing_parts(first, second, keep=KEPT_JOINT)


class _TwoResponses(Probe):
    """A rule that gives each response a number and answers the one with the larger (variant 0) or the
    smaller (variant 1)."""

    scores = "rows"
    chance = HALF
    columns = COLUMNS

    def measure_pair(self, batch: Batch, reasons: _Reasons) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def score(self, batch: Batch) -> Scored:
        found = batch.shared(_reasons)
        first, second = self.measure_pair(batch, found)
        zero, one = np.zeros(len(batch), dtype=np.int64), np.ones(len(batch), dtype=np.int64)
        label = batch.ints("label")
        picks = (compare_picks(first, second, zero, one), compare_picks(-first, -second, zero, one))
        hits = np.stack([pick_hits(pick, label) for pick in picks], axis=1)
        return Scored(found.rows, hits, chance=np.full(len(batch), 0.5))


class ContextOverlap(_TwoResponses):
    name = "context-overlap"
    title = "answers the response whose reason shares more character bigrams with the dialogue"
    variants = ("more shared with the dialogue", "less shared with the dialogue")

    def measure_pair(self, batch: Batch, reasons: _Reasons) -> tuple[np.ndarray, np.ndarray]:
        contexts = batch.texts("context")
        first = np.array([shared_share(r, c) for r, c in zip(reasons.first, contexts, strict=True)])
        second = np.array([shared_share(r, c) for r, c in zip(reasons.second, contexts, strict=True)])
        return first, second


class ResponseLength(_TwoResponses):
    name = "option-length"
    title = "answers the longer (or shorter) response"
    variants = ("the longer response", "the shorter response")

    def measure_pair(self, batch: Batch, reasons: _Reasons) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.array([len(text) for text in batch.texts("ans0")]),
            np.array([len(text) for text in batch.texts("ans1")]),
        )


class Connectives(_TwoResponses):
    name = "connectives"
    title = (
        "answers the response whose reason gives a cause (ので, から) rather than a concession (が、, けれど)"
    )
    variants = ("cause over concession", "concession over cause")

    def measure_pair(self, batch: Batch, reasons: _Reasons) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.array([_connective(text) for text in reasons.first]),
            np.array([_connective(text) for text in reasons.second]),
        )


def _connective(reason: str) -> int:
    """+1 for a reason that gives a cause, -1 for one that concedes, 0 for both or neither."""
    return int(any(word in reason for word in CAUSE)) - int(any(word in reason for word in CONCESSION))


class ReasonEdges(PairwiseModelProbe):
    """The model of :mod:`jbcompile.audit.model` on the words that open and close each reason (its first
    and last ``EDGE`` characters; the close holds the connective into the shared conclusion), learnt on
    the other cases. Only the edges: what a reason says in between is what the benchmark asks a model to
    judge (a reason that rests on a group's trait is the biased one), so a model of its every word would
    score that reading, not a shortcut; a neutral reason that always opens with 「実際、」 and a biased
    one with 「やはり」 is one."""

    name = "reason-edges"
    title = "a model of the words that open and close each reason, fitted on the other categories"
    scores = "rows"
    chance = HALF
    columns = COLUMNS
    held_out_by_category = True

    def pairs(self, batch: Batch) -> Pairs:
        found = batch.shared(_reasons)
        edges: dict[str, int] = {"": 0}
        codes = np.array(
            [
                [0, edges.setdefault(_edges(first), len(edges)), edges.setdefault(_edges(second), len(edges))]
                for first, second in zip(found.first, found.second, strict=True)
            ],
            dtype=np.int64,
        ).reshape(-1, 3)
        texts = list(edges)
        return Pairs(
            rows=found.rows,
            first=np.zeros(len(batch), dtype=np.int64),
            second=np.ones(len(batch), dtype=np.int64),
            codes=codes,
            texts=(texts, texts, texts),
        )


def _edges(reason: str) -> str:
    """A reason's opening and closing words: its first and last ``EDGE`` characters."""
    return f"{reason[:EDGE]}…{reason[-EDGE:]}"
