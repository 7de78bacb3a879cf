"""Probes that fit any multiple-choice design: the gold's position among the options."""

from __future__ import annotations

import numpy as np

from .probe import Batch, Probe, Scored


class OptionPosition(Probe):
    """Answers every row with one option position: the position that is gold most often in the scope
    reported (see :mod:`.stats`). On a benchmark that rotates the gold over the positions it scores
    chance; a benchmark whose gold sits mostly at one position gives it away."""

    name = "option-position"
    title = "answers the option at the position most often gold"
    scores = "rows"
    columns = ("label",)

    def __init__(self, options: int) -> None:
        self.options = options
        self.variants = tuple(f"option {i}" for i in range(options))  # type: ignore[misc]
        self.chance = f"1/{options}: a guess among the {options} options"  # type: ignore[misc]

    def score(self, batch: Batch) -> Scored:
        label = batch.ints("label")
        rows = (label >= 0) & (label < self.options)
        hits = np.stack([(label == i).astype(np.float64) for i in range(self.options)], axis=1)
        return Scored(rows, hits, chance=np.full(len(label), 1.0 / self.options))
