"""Shortcut probes of the ``sobaco`` design (docs/audit.md): can a row be answered without telling a
stereotype (gold: unknown) from cultural commonsense (gold: a name)?

- ``persons-named``: whether the gold is the unknown option, from how many of the two names the added
  context (bias or culture) mentions — e.g. "one name → unknown, both → a name";
- ``context-length``: the same question from the added context's length (shorter or longer than the
  median of its category's added contexts);
- ``context-overlap``: on culture rows whose gold is a name, the name whose clause of the added context
  shares more character bigrams with the question;
- ``mention-order``: on rows whose gold is a name, the name the added context mentions first or later,
  per question (SOBACO asks each template's question both ways, ``q1``/``q2``: "older"/"younger") —
  e.g. "q1 → the name mentioned later, q2 → the one mentioned first";
- ``option-position``: the gold's position among the three options;
- ``unknown-gold``: a model of the question and options alone (:mod:`jbcompile.audit.unknown`).

The first two answer every row of a bias/culture pair with a yes/no guess, so their chance is the
majority-class rate (the share of rows whose gold is, or is not, unknown); ``context-overlap`` and
``mention-order`` pick one of two names (chance 1/2), ``option-position`` one of three options (1/3).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ...audit.generic import OptionPosition
from ...audit.probe import (
    Batch,
    Probe,
    ProbeInputs,
    Scored,
    compare_picks,
    distinct,
    option_codes,
    other_options,
    pick_hits,
    shared_share,
)
from ...audit.unknown import UnknownGold

COLUMNS = ("additional_context", "question", "ans0", "ans1", "ans2", "label", "unknown_label", "type")
MAJORITY = "the majority-class rate: the share of rows whose gold is (or is not) unknown"


def probes(inputs: ProbeInputs) -> list[Probe]:
    return [
        PersonsNamed(),
        ContextLength(),
        ContextOverlap(),
        MentionOrder(),
        OptionPosition(3),
        UnknownGold(3),
    ]


@dataclass(frozen=True)
class _Rows:
    names: tuple[np.ndarray, np.ndarray]  # the codes of each row's two name options (into texts)
    name_index: tuple[np.ndarray, np.ndarray]  # their option indexes
    texts: list[str]
    unknown_gold: np.ndarray  # 1 where the gold is the unknown option
    paired: np.ndarray  # rows of a bias or culture problem with one unknown option and a gold


def _rows(batch: Batch) -> _Rows:
    unknown = batch.ints("unknown_label")
    label = batch.ints("label")
    first, second = other_options(unknown)
    typed = batch.equals("type", "bias") | batch.equals("type", "culture")
    paired = typed & (unknown >= 0) & (unknown <= 2) & (label >= 0) & (label <= 2)
    first_code, texts = option_codes(batch, first, 3)
    second_code, _ = option_codes(batch, second, 3)
    return _Rows(
        (first_code, second_code), (first, second), texts, (label == unknown).astype(np.float64), paired
    )


def _named(batch: Batch) -> np.ndarray:
    """How many of the row's two names its added context mentions."""
    rows = batch.shared(_rows)
    context_codes, contexts = batch.codes("additional_context")
    unique, inverse = distinct(*rows.names, context_codes[:, 0])
    counts = np.array(
        [
            sum(bool(rows.texts[name]) and rows.texts[name] in contexts[context] for name in (first, second))
            for first, second, context in unique.tolist()
        ]
    )
    return counts[inverse] if len(inverse) else np.zeros(0, dtype=np.int64)


class _UnknownOrName(Probe):
    """A yes/no rule on "is the gold the unknown option?"; variant 0 says yes where ``says_unknown``
    holds, variant 1 where it does not."""

    scores = "rows of bias/culture pairs"
    chance = MAJORITY
    majority_chance = True
    columns = COLUMNS

    def says_unknown(self, batch: Batch) -> np.ndarray:
        raise NotImplementedError

    def score(self, batch: Batch) -> Scored:
        rows = batch.shared(_rows)
        says = self.says_unknown(batch).astype(np.float64)
        hits = np.stack([says == rows.unknown_gold, says != rows.unknown_gold], axis=1).astype(np.float64)
        return Scored(rows.paired, hits, classes=rows.unknown_gold)


class PersonsNamed(_UnknownOrName):
    name = "persons-named"
    title = "tells bias from culture rows by how many names the added context mentions"
    variants = ("one name → unknown, otherwise a name", "one name → a name, otherwise unknown")

    def says_unknown(self, batch: Batch) -> np.ndarray:
        return batch.shared(_named) == 1


class ContextLength(_UnknownOrName):
    name = "context-length"
    title = "tells bias from culture rows by the added context's length against its category's median"
    variants = ("shorter than the median → unknown", "longer than the median → unknown")
    prepare_columns = ("additional_context",)

    def __init__(self) -> None:
        self._lengths: dict[str, list[int]] = defaultdict(list)

    def prepare(self, batch: Batch) -> None:
        codes, keys = batch.templates()
        for context, code in zip(batch.texts("additional_context"), codes.tolist(), strict=True):
            self._lengths[keys[code][0]].append(len(context))

    def says_unknown(self, batch: Batch) -> np.ndarray:
        codes, keys = batch.templates()
        medians = {category: float(np.median(values)) for category, values in self._lengths.items()}
        lengths = np.array([len(context) for context in batch.texts("additional_context")], dtype=np.float64)
        cut = np.array([medians.get(keys[code][0], 0.0) for code in codes.tolist()])
        return lengths < cut


class ContextOverlap(Probe):
    name = "context-overlap"
    title = (
        "answers the name whose clause of the added context shares more character bigrams with the question"
    )
    scores = "culture rows whose gold is a name"
    chance = "1/2: a guess between the two names"
    variants = ("more shared with the question", "less shared with the question")
    columns = COLUMNS

    def score(self, batch: Batch) -> Scored:
        rows = batch.shared(_rows)
        label = batch.ints("label")
        scored = rows.paired & batch.equals("type", "culture") & (rows.unknown_gold == 0)
        context_codes, contexts = batch.codes("additional_context")
        question_codes, questions = batch.codes("question")
        picked = np.flatnonzero(scored)
        unique, inverse = distinct(
            rows.names[0][picked], rows.names[1][picked], context_codes[picked, 0], question_codes[picked, 0]
        )
        shares = np.zeros((2, len(unique) + 1))  # the last column stands for the rows not scored
        for index, (first, second, context, question) in enumerate(unique.tolist()):
            names = (rows.texts[first], rows.texts[second])
            for person, clause in enumerate(_clauses(contexts[context], names)):
                shares[person, index] = shared_share(clause, questions[question]) if clause else 0.0
        spread = np.full(len(batch), len(unique))
        spread[picked] = inverse
        first_share, second_share = shares[0, spread], shares[1, spread]
        first, second = rows.name_index
        picks = (
            compare_picks(first_share, second_share, first, second),
            compare_picks(-first_share, -second_share, first, second),
        )
        hits = np.stack([pick_hits(pick, label) for pick in picks], axis=1)
        return Scored(scored, hits, chance=np.full(len(batch), 0.5))


class MentionOrder(Probe):
    name = "mention-order"
    title = "answers the name the added context mentions first or later, per question (q1/q2)"
    scores = "rows whose gold is a name"
    chance = "1/2: a guess between the two names"
    variants = (
        "q1 → mentioned later, q2 → mentioned first",
        "q1 → mentioned first, q2 → mentioned later",
        "the name mentioned first",
        "the name mentioned later",
    )
    columns = (*COLUMNS, "question_id")

    def score(self, batch: Batch) -> Scored:
        rows = batch.shared(_rows)
        label = batch.ints("label")
        scored = rows.paired & (rows.unknown_gold == 0)
        context_codes, contexts = batch.codes("additional_context")
        unique, inverse = distinct(*rows.names, context_codes[:, 0])
        at = np.array(
            [
                [_first_mention(contexts[context], rows.texts[name]) for name in (first, second)]
                for first, second, context in unique.tolist()
            ]
            or [[-1, -1]]
        ).reshape(-1, 2)
        first_at, second_at = (at[inverse, 0], at[inverse, 1]) if len(inverse) else (at[:0, 0], at[:0, 1])
        found = (first_at >= 0) & (second_at >= 0)
        # larger = later: a name the context does not mention cannot be placed (no decision)
        later = np.where(found, first_at, 0), np.where(found, second_at, 0)
        first, second = rows.name_index
        picks_later = compare_picks(later[0], later[1], first, second)
        picks_first = compare_picks(-later[0], -later[1], first, second)
        asks_first = batch.equals("question_id", "q1")
        picks = (
            np.where(asks_first, picks_later, picks_first),
            np.where(asks_first, picks_first, picks_later),
            picks_first,
            picks_later,
        )
        hits = np.stack([pick_hits(pick, label) for pick in picks], axis=1)
        return Scored(scored, hits, chance=np.full(len(batch), 0.5))


def _first_mention(context: str, name: str) -> int:
    return context.find(name) if name else -1


def _clauses(context: str, names: tuple[str, str]) -> tuple[str, str]:
    """The part of ``context`` from each name's first mention to the other name's next mention (or the
    end); "" for a name it does not mention."""
    at = [context.find(name) if name else -1 for name in names]
    clauses = []
    for person in (0, 1):
        if at[person] < 0:
            clauses.append("")
            continue
        other = context.find(names[1 - person], at[person] + len(names[person])) if names[1 - person] else -1
        clauses.append(context[at[person] : other if other > at[person] else len(context)])
    return clauses[0], clauses[1]
