"""Shortcut probes of the ``bbq`` design (docs/audit.md): can a row's gold be reached without reading
what the disambiguating context says about whom?

Every directional rule is tried as a fixed rule ("the longer option") and by question polarity
("negative → the longer option, non-negative → the shorter", and the mirror rule): a template writer's
habit can follow the question asked as easily as it can follow the person.

- ``mention-order``: whose first mention comes earlier, or whose last mention comes later, in the
  context — fixed or per question polarity;
- ``mention-order-disambiguating``: the same rules within the disambiguating sentences alone;
- ``mention-count``: the person the context names more (or less) often;
- ``lexical-overlap``: the person whose own words in the context share more (or fewer) character
  bigrams with the question — much of it is how a reader finds the answer, so it is reported, not
  judged, by default (``judged = False``);
- ``option-position``: the gold's position among the options, fixed or per question polarity;
- ``option-length``: the longer (or shorter) of the two persons' options;
- ``stereotyped-person``: always the person of the stereotyped group (or always the other one), or the
  biased answer (negative → that person, non-negative → the other) or the counter-biased one — a model
  drawn to the marked group gains when the disambiguated golds lean to one side;
- ``context-free``: a model that sees the question and the two persons' options, not the context;
- ``attribute-confound``: rows whose two persons differ in an attribute the category does not test
  (gender in an Age template), read with the markers of ``rules/attributes.yaml``.

The person rules and the model answer the disambiguated rows (their gold is one of the two persons, so
chance is 1/2), the position probe every row (chance 1/3). A person is found in the context by its option
text, or by the longest part of it that the context contains and the other person's option does not
("the grandfather" in "…their grandfather…"); a rule that finds neither person, or both at one place,
counts as a fair guess.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...audit.attributes import AttributeReader
from ...audit.generic import OptionPosition
from ...audit.model import Pairs, PairwiseModelProbe
from ...audit.probe import (
    Batch,
    Probe,
    ProbeInputs,
    Scored,
    TemplateKey,
    bigram_shares,
    compare_picks,
    distinct,
    option_codes,
    other_options,
    pick_hits,
    polarity_names,
    polarity_picks,
)
from ...audit.unknown import UnknownGold

ROW_COLUMNS = (
    "context",
    "ans0",
    "ans1",
    "ans2",
    "label",
    "unknown_label",
    "context_condition",
    "question_polarity",
)
HALF = "1/2: a guess between the two persons"
POLARITY = "question_polarity"
# where a sentence ends: the disambiguating sentences follow the ambiguous context at one of these
_SENTENCE_END = re.compile(r"[。！？!?．.]+[」』）)\"']*\s*")


def probes(inputs: ProbeInputs) -> list[Probe]:
    return [
        MentionOrder(),
        MentionOrderDisambiguating(),
        MentionCount(),
        LexicalOverlap(),
        OptionPosition(3, polarity=POLARITY),
        OptionLength(),
        StereotypedPerson(),
        ContextFree(),
        UnknownGold(3),
        AttributeConfound(AttributeReader(inputs.attributes)),
    ]


@dataclass(frozen=True)
class _Persons:
    """Per row: the option indexes of its two persons (the options other than unknown), the codes of
    their texts (into ``texts``), and whether the row has them (one unknown option among three)."""

    first: np.ndarray
    second: np.ndarray
    first_code: np.ndarray
    second_code: np.ndarray
    texts: list[str]
    valid: np.ndarray


def _persons(batch: Batch) -> _Persons:
    unknown = batch.ints("unknown_label")
    first, second = other_options(unknown)
    valid = (unknown >= 0) & (unknown <= 2)
    first_code, texts = option_codes(batch, first, 3)
    second_code, _ = option_codes(batch, second, 3)
    return _Persons(first, second, first_code, second_code, texts, valid)


def _disambiguated(batch: Batch) -> np.ndarray:
    """Disambiguated rows whose gold is one of the two persons."""
    persons = batch.shared(_persons)
    label = batch.ints("label")
    gold_is_person = (label == persons.first) | (label == persons.second)
    return persons.valid & gold_is_person & batch.equals("context_condition", "disambig")


@lru_cache(maxsize=4096)
def _candidates(option: str, other: str) -> tuple[str, ...]:
    """The parts of an option text that may name its person in a context, longest first: the whole
    text, then its substrings of two characters or more that the other person's option does not hold."""
    option, other = option.casefold().strip(), other.casefold().strip()
    if not option or option in other:
        return ()
    found = [option]
    for size in range(len(option) - 1, 1, -1):
        for start in range(len(option) - size + 1):
            part = option[start : start + size]
            if part == part.strip() and part not in other:
                found.append(part)
    return tuple(dict.fromkeys(found))


def _named_as(context: str, option: str, other: str) -> str | None:
    """How ``context`` (case-folded) names the person of ``option``, or None when it does not."""
    return next((part for part in _candidates(option, other) if part in context), None)


@dataclass(frozen=True)
class _Mentions:
    """The distinct (context, first person, second person, template) of the scored rows, each with its
    context (case-folded) and how the context names each person; ``inverse`` maps rows to them."""

    contexts: list[str]
    templates: list[TemplateKey]
    first: list[str | None]
    second: list[str | None]
    inverse: np.ndarray  # per row, its distinct combination (-1 for a row not scored)


def _mentions(batch: Batch) -> _Mentions:
    persons = batch.shared(_persons)
    rows = np.flatnonzero(batch.shared(_disambiguated))
    context_codes, contexts = batch.codes("context")
    codes, keys = batch.templates()
    unique, inverse = distinct(
        context_codes[rows, 0], persons.first_code[rows], persons.second_code[rows], codes[rows]
    )
    mentions = _Mentions([], [], [], [], np.full(len(batch), -1))
    mentions.inverse[rows] = inverse
    folded: dict[int, str] = {}
    for context_code, first_code, second_code, template in unique.tolist():
        context = folded.setdefault(context_code, contexts[context_code].casefold())
        first, second = persons.texts[first_code], persons.texts[second_code]
        mentions.contexts.append(context)
        mentions.templates.append(keys[template])
        mentions.first.append(_named_as(context, first, second))
        mentions.second.append(_named_as(context, second, first))
    return mentions


def _positions(mentions: _Mentions, starts: Sequence[int] | None) -> tuple[np.ndarray, ...]:
    """Per row: first and last position of each person from ``starts`` (per distinct combination) on,
    inf / -inf where it is not mentioned there."""
    n = len(mentions.contexts)
    first_at = np.full((2, n + 1), np.inf)  # the last column stands for the rows not scored
    last_at = np.full((2, n + 1), -np.inf)
    for index, context in enumerate(mentions.contexts):
        start = starts[index] if starts is not None else 0
        for person, part in enumerate((mentions.first[index], mentions.second[index])):
            if part is None:
                continue
            at = context.find(part, start)
            if at >= 0:
                first_at[person, index] = at
                last_at[person, index] = context.rfind(part, start)
    spread = np.where(mentions.inverse >= 0, mentions.inverse, n)
    return first_at[0, spread], last_at[0, spread], first_at[1, spread], last_at[1, spread]


def _between_two(rows: np.ndarray, picks: Sequence[np.ndarray], label: np.ndarray) -> Scored:
    """The scores of a probe whose variants each pick one of the two persons (chance: one half)."""
    hits = np.stack([pick_hits(pick, label) for pick in picks], axis=1)
    return Scored(rows, hits, chance=np.full(len(label), 0.5))


class MentionOrder(Probe):
    """Two readings of "mentioned first / last": by each person's first mention (whose first mention
    comes earlier) and by each person's last mention (whose last mention comes later), each fixed and
    per question polarity. A rule reads one of them throughout, so that each variant has its mirror
    (the two add up to every decided row) and a cue placed in the ambiguous context's order, which
    only first mentions see, is read as cleanly as one in the disambiguating sentences."""

    name = "mention-order"
    title = "answers by where each person is first or last mentioned in the context"
    scores = "disambiguated rows"
    chance = HALF
    variants = (
        *polarity_names("the later last mention", "the earlier last mention"),
        *polarity_names("the earlier first mention", "the later first mention"),
    )
    columns = ROW_COLUMNS

    def starts(self, batch: Batch) -> Sequence[int] | None:
        """Where each distinct context of :func:`_mentions` is read from (None: its beginning)."""
        return None

    def score(self, batch: Batch) -> Scored:
        rows = batch.shared(_disambiguated)
        persons = batch.shared(_persons)
        first_a, last_a, first_b, last_b = _positions(batch.shared(_mentions), self.starts(batch))
        earlier_first = compare_picks(-first_a, -first_b, persons.first, persons.second)
        later_first = compare_picks(first_a, first_b, persons.first, persons.second)
        later_last = compare_picks(last_a, last_b, persons.first, persons.second)
        earlier_last = compare_picks(-last_a, -last_b, persons.first, persons.second)
        picks = (
            *polarity_picks(batch, POLARITY, later_last, earlier_last),
            *polarity_picks(batch, POLARITY, earlier_first, later_first),
        )
        return _between_two(rows, picks, batch.ints("label"))


class MentionOrderDisambiguating(MentionOrder):
    """The mention-order rules in the disambiguating sentences: the part of a disambiguated context after
    its ambiguous context — the ambiguous row of its template that it starts with, or else (a config
    that holds only some ambiguous rows, like ``lite``) as many sentences as the template's ambiguous
    contexts mostly have."""

    name = "mention-order-disambiguating"
    title = "the mention-order rules within the disambiguating sentences alone"
    prepare_columns = ("context", "context_condition")

    def __init__(self) -> None:
        self._ambiguous: dict[TemplateKey, set[str]] = defaultdict(set)
        self._sentences: dict[TemplateKey, Counter[int]] = defaultdict(Counter)

    def prepare(self, batch: Batch) -> None:
        codes, keys = batch.templates()
        context_codes, contexts = batch.codes("context")
        ambiguous = np.flatnonzero(batch.equals("context_condition", "ambig"))
        for template, context in distinct(codes[ambiguous], context_codes[ambiguous, 0])[0].tolist():
            text = contexts[context].casefold().strip()
            self._ambiguous[keys[template]].add(text)
            self._sentences[keys[template]][len(_SENTENCE_END.findall(text))] += 1

    def starts(self, batch: Batch) -> Sequence[int] | None:
        mentions = batch.shared(_mentions)
        found: dict[tuple[TemplateKey, str], int] = {}
        starts = []
        for context, template in zip(mentions.contexts, mentions.templates, strict=True):
            key = (template, context)
            if key not in found:
                sentences = self._sentences.get(template)
                usual = sentences.most_common(1)[0][0] if sentences else None
                found[key] = _disambiguating_start(context, self._ambiguous.get(template, set()), usual)
            starts.append(found[key])
        return starts


def _disambiguating_start(context: str, ambiguous: set[str], sentences: int | None) -> int:
    """Where the disambiguating sentences of ``context`` begin: after the longest ambiguous context of
    its template that it starts with; else after its first ``sentences`` sentences; else at its last."""
    ends = [match.end() for match in _SENTENCE_END.finditer(context) if match.end() < len(context.rstrip())]
    for end in reversed(ends):
        if context[:end].strip() in ambiguous:
            return end
    if sentences and sentences <= len(ends):
        return ends[sentences - 1]
    return ends[-1] if ends else 0


class MentionCount(Probe):
    """The person the context names more often (a statement that names its person twice, a closing
    remark about one of them), fixed and per question polarity; a person is found as for
    ``mention-order``."""

    name = "mention-count"
    title = "answers the person the context names more (or less) often"
    scores = "disambiguated rows"
    chance = HALF
    variants = polarity_names("named more often", "named less often")
    columns = ROW_COLUMNS

    def score(self, batch: Batch) -> Scored:
        persons = batch.shared(_persons)
        mentions = batch.shared(_mentions)
        counts = np.zeros((2, len(mentions.contexts) + 1))  # the last column stands for the rows not scored
        for index, context in enumerate(mentions.contexts):
            for person, part in enumerate((mentions.first[index], mentions.second[index])):
                counts[person, index] = context.count(part) if part else 0
        spread = np.where(mentions.inverse >= 0, mentions.inverse, len(mentions.contexts))
        first, second = counts[0, spread], counts[1, spread]
        more = compare_picks(first, second, persons.first, persons.second)
        less = compare_picks(-first, -second, persons.first, persons.second)
        picks = polarity_picks(batch, POLARITY, more, less)
        return _between_two(batch.shared(_disambiguated), picks, batch.ints("label"))


class LexicalOverlap(Probe):
    """The person whose own words share more character bigrams with the question: a person's words are
    the stretches of the context from each of its mentions to the other person's next one, its name
    left out (what is said of it, not what it is called). Matching
    the question's words to a statement is much of how a reader finds the disambiguated answer, so a
    benchmark may score high here for a good reason; the probe is reported, and judged only where
    dataset.yaml gives it a bar (docs/audit.md)."""

    name = "lexical-overlap"
    title = "answers the person whose own words in the context share more character bigrams with the question"
    scores = "disambiguated rows"
    chance = HALF
    judged = False
    variants = polarity_names("more shared with the question", "less shared with the question")
    columns = (*ROW_COLUMNS, "question")

    def score(self, batch: Batch) -> Scored:
        persons = batch.shared(_persons)
        mentions = batch.shared(_mentions)
        question_codes, questions = batch.codes("question")
        # each person stands in for its name (what is said of it counts, not what it is called): contexts
        # that differ in their persons alone, most of a template's, are then read once
        masked: dict[str, int] = {}
        found = zip(mentions.contexts, mentions.first, mentions.second, strict=True)
        masked_of = np.array(
            [masked.setdefault(_masked(context, a, b), len(masked)) for context, a, b in found] or [0]
        )
        rows = np.flatnonzero(mentions.inverse >= 0)
        unique, inverse = distinct(masked_of[mentions.inverse[rows]], question_codes[rows, 0])
        words = [text for context in masked for text in _own_words(context, _FIRST, _SECOND)]
        asked = [question.casefold() for question in questions]
        text, question = (unique[:, 0], unique[:, 1]) if len(unique) else (np.zeros(0, np.int64),) * 2
        shares = np.zeros((2, len(unique) + 1))  # the last column stands for the rows not scored
        texts = np.concatenate([2 * text, 2 * text + 1])  # the first persons' words, then the seconds'
        shares[:, :-1] = bigram_shares(words, asked, texts, np.tile(question, 2)).reshape(2, -1)
        spread = np.full(len(batch), len(unique))
        spread[rows] = inverse
        first, second = shares[0, spread], shares[1, spread]
        more = compare_picks(first, second, persons.first, persons.second)
        less = compare_picks(-first, -second, persons.first, persons.second)
        picks = polarity_picks(batch, POLARITY, more, less)
        return _between_two(batch.shared(_disambiguated), picks, batch.ints("label"))


_FIRST, _SECOND = "\x01", "\x02"  # the two persons in a masked context


def _masked(context: str, first: str | None, second: str | None) -> str:
    """``context`` with each person's name (as :func:`_named_as` found it) replaced by a mark of its own;
    a person not found has no mark, and no words."""
    if first:
        context = context.replace(first, _FIRST)
    if second:
        context = context.replace(second, _SECOND)
    return context


def _own_words(context: str, first: str | None, second: str | None) -> tuple[str, str]:
    """Each person's words in ``context``: the stretches from each of its mentions to the other person's
    next mention (or the end), joined by a line break; "" for a person not found."""
    found = []
    for person, part in enumerate((first, second)):
        at = context.find(part) if part else -1
        while at >= 0:
            found.append((at, person))
            at = context.find(part, at + len(part))  # type: ignore[arg-type]
    found.sort()
    runs: list[tuple[int, int]] = []  # where each run of one person's mentions begins
    for at, person in found:
        if not runs or runs[-1][1] != person:
            runs.append((at, person))
    words: tuple[list[str], list[str]] = ([], [])
    for index, (start, person) in enumerate(runs):
        end = runs[index + 1][0] if index + 1 < len(runs) else len(context)
        words[person].append(context[start:end])
    return "\n".join(words[0]), "\n".join(words[1])


class OptionLength(Probe):
    name = "option-length"
    title = "answers the person whose option is longer (or shorter)"
    scores = "disambiguated rows"
    chance = HALF
    variants = polarity_names("the longer option", "the shorter option")
    columns = ROW_COLUMNS

    def score(self, batch: Batch) -> Scored:
        persons = batch.shared(_persons)
        lengths = np.array([len(text) for text in persons.texts] or [0])
        first, second = lengths[persons.first_code], lengths[persons.second_code]
        longer = compare_picks(first, second, persons.first, persons.second)
        shorter = compare_picks(-first, -second, persons.first, persons.second)
        picks = polarity_picks(batch, POLARITY, longer, shorter)
        return _between_two(batch.shared(_disambiguated), picks, batch.ints("label"))


class StereotypedPerson(Probe):
    """Always the stereotyped group's person (or always the other), or the biased answer — negative →
    that person, non-negative → the other — (or the counter-biased one): a benchmark whose
    disambiguated golds are mostly biased (or counter-biased) rewards a model for its stereotype."""

    name = "stereotyped-person"
    title = "answers the person of the stereotyped group (or the other person)"
    scores = "disambiguated rows"
    chance = HALF
    variants = polarity_names("the stereotyped group's person", "the other person")
    columns = (*ROW_COLUMNS, "target_label")

    def score(self, batch: Batch) -> Scored:
        persons = batch.shared(_persons)
        target = batch.ints("target_label")  # -1 where a release row's tags name no stereotyped person
        known = (target == persons.first) | (target == persons.second)
        other = np.where(target == persons.first, persons.second, persons.first)
        label = batch.ints("label")
        picks = polarity_picks(batch, POLARITY, np.where(known, target, -1), np.where(known, other, -1))
        return _between_two(batch.shared(_disambiguated), picks, label)


class ContextFree(PairwiseModelProbe):
    name = "context-free"
    title = "a model that reads the question and the two persons' options, not the context"
    scores = "disambiguated rows"
    chance = HALF
    columns = (*ROW_COLUMNS, "question")

    def pairs(self, batch: Batch) -> Pairs:
        persons = batch.shared(_persons)
        question_codes, questions = batch.codes("question")
        return Pairs(
            rows=batch.shared(_disambiguated),
            first=persons.first,
            second=persons.second,
            codes=np.stack([question_codes[:, 0], persons.first_code, persons.second_code], axis=1),
            texts=(questions, persons.texts, persons.texts),
        )


class AttributeConfound(Probe):
    """Rows whose two persons differ in an attribute their category does not test: a model may then
    answer by that attribute's stereotype instead (七十代の男性 vs 三十代の女性 in an Age template)."""

    name = "attribute-confound"
    title = "the two persons differ in an attribute the category does not test"
    scores = "rows"
    chance = "0: no row should have it"
    measure = "rate"
    columns = ("category", "ans0", "ans1", "ans2", "unknown_label")

    def __init__(self, reader: AttributeReader) -> None:
        self.reader = reader

    def score(self, batch: Batch) -> Scored:
        persons = batch.shared(_persons)
        category_codes, categories = batch.codes("category")
        rows = np.flatnonzero(persons.valid)
        unique, inverse = distinct(
            persons.first_code[rows], persons.second_code[rows], category_codes[rows, 0]
        )
        differs = [
            bool(self.reader.differences(persons.texts[first], persons.texts[second], categories[category]))
            for first, second, category in unique.tolist()
        ]
        hits = np.zeros(len(batch))
        hits[rows] = np.array(differs, dtype=np.float64)[inverse] if len(rows) else 0.0
        return Scored(persons.valid, hits[:, None], chance=np.zeros(len(batch)))
