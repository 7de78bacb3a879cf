"""Probes that fit any multiple-choice design: the gold's position among the options."""

from __future__ import annotations

import numpy as np

from .probe import Batch, Probe, Scored, by_polarity, pick_hits


class OptionPosition(Probe):
    """Answers every row with one option position: the position that is gold most often in the scope
    reported (see :mod:`.stats`). On a benchmark that rotates the gold over the positions it scores
    chance; a benchmark whose gold sits mostly at one position gives it away.

    With ``polarity`` (the column of a design whose rows carry a question polarity, BBQ's
    ``question_polarity``), a position per polarity too: "negative → option 0, non-negative → option
    1" finds golds placed by the question asked while every position is gold equally often overall."""

    name = "option-position"
    title = "answers the option at the position most often gold"
    scores = "rows"

    def __init__(self, options: int, *, polarity: str | None = None) -> None:
        self.options = options
        self.polarity = polarity
        fixed = [(i, i) for i in range(options)]
        crossed = [(i, j) for i in range(options) for j in range(options) if i != j] if polarity else []
        self.pairs = fixed + crossed
        self.variants = tuple(  # type: ignore[misc]
            f"option {i}" if i == j else f"negative → option {i}, non-negative → option {j}"
            for i, j in self.pairs
        )
        self.chance = f"1/{options}: a guess among the {options} options"  # type: ignore[misc]
        self.columns = ("label",) if polarity is None else ("label", polarity)  # type: ignore[misc]

    def score(self, batch: Batch) -> Scored:
        label = batch.ints("label")
        rows = (label >= 0) & (label < self.options)
        hits = []
        for i, j in self.pairs:
            if i == j:
                hits.append((label == i).astype(np.float64))
            else:
                assert self.polarity is not None
                pick = by_polarity(batch, self.polarity, np.full(len(label), i), np.full(len(label), j))
                hits.append(pick_hits(pick, label, self.options))
        return Scored(rows, np.stack(hits, axis=1), chance=np.full(len(label), 1.0 / self.options))
