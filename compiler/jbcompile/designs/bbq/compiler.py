"""The ``bbq`` kind (JBBQ design): expansion, the ``full`` and ``lite`` configs, rationales, invariants.

Expansion per template: target filler × other filler × lexical alternatives × both slot assignments ×
{ambig, disambig} × {neg, nonneg} × the 6 orders of the three options. Intersectional templates (persons
with an ``attribute``) pair only the persons their ``intersections`` ask for. A template that lets the
compiler order its persons (``symmetric_mention``, per-person ``statements``) is expanded in both mention
orders as well: as written, and with the persons exchanged.

Lite: 12 rows per template — each (condition × polarity) cell in three option orders that rotate the gold
and the unknown positions over 0/1/2, with the disambiguated rows split 3/3 between biased and
counter-biased contexts, and (where the compiler orders the persons) 3/3 between the mention orders a
"last-mentioned person" rule gets right and wrong. Each template is balanced on its own, so every category
is balanced, and a template's lite rows depend on that template alone.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from ...diagnostics import Diagnostic, Severity
from ...schema import LocalizedText, as_filler, text_in
from ...templating import CompiledText, FilledText, join_contexts, stable_hash, stable_id
from ...text import did_you_mean
from ..base import (
    ConfigSpec,
    Kind,
    Row,
    TemplateRows,
    VocabPersons,
    alternative_problems,
    config_problem,
    invariant_hint,
    repeated_id_problems,
)
from . import rationale
from .schema import BbqTemplate, Intersection

if TYPE_CHECKING:
    import pyarrow as pa

    from ...checks.slots import SlotFill
    from ...loader import KeyPath
    from ...projecttypes import Project, SourceTemplate

ROLES = ("T", "O", "U")  # target person, other person, unknown option
ORDERS: tuple[tuple[str, str, str], ...] = tuple((a, b, c) for a, b, c in itertools.permutations(ROLES))
CONDITIONS = ("ambig", "disambig")
POLARITIES = ("neg", "nonneg")
_QUESTION_FIELD = {"neg": "negative", "nonneg": "non_negative"}
_ORDER_POSITIONS = tuple((order, {role: i for i, role in enumerate(order)}) for order in ORDERS)
ASSIGNMENTS = ("a", "b")  # a: target filler in the target slot; b: the two fillers swapped
LITE_ROWS_PER_CELL = 3
_LITE_BIAS = {
    "neg": ("biased", "counter_biased", "biased"),
    "nonneg": ("counter_biased", "biased", "counter_biased"),
}
_MIRRORED = {"neg": "nonneg", "nonneg": "neg"}  # the mirrored pattern: each polarity takes the other's


@cache
def row_schema() -> pa.Schema:
    import pyarrow as pa

    answer = pa.list_(pa.string())
    return pa.schema(
        [
            ("example_id", pa.string()),
            ("template_id", pa.string()),
            ("question_index", pa.string()),
            ("category", pa.string()),
            ("subcategory", pa.string()),
            ("question_polarity", pa.string()),
            ("context_condition", pa.string()),
            ("context", pa.string()),
            ("question", pa.string()),
            ("ans0", pa.string()),
            ("ans1", pa.string()),
            ("ans2", pa.string()),
            ("label", pa.int64()),
            ("answer_info", pa.struct([("ans0", answer), ("ans1", answer), ("ans2", answer)])),
            (
                "additional_metadata",
                pa.struct(
                    [
                        ("stereotyped_groups", pa.list_(pa.string())),
                        ("subcategory", pa.string()),
                        ("version", pa.string()),
                        ("source", pa.string()),
                    ]
                ),
            ),
            ("target_label", pa.int64()),
            ("unknown_label", pa.int64()),
            ("biased_label", pa.int64()),
            ("context_bias", pa.string()),
            ("is_additional", pa.bool_()),
            ("fillers", pa.list_(pa.struct([("slot", pa.string()), ("text", pa.string())]))),
            ("rationale", pa.string()),
        ]
    )


@dataclass(frozen=True)
class Person:
    text: str  # wording in the context
    option: str  # wording as an answer option
    tag: str
    attribute: str | None = None  # intersectional templates: the filler of the person's attribute slot

    @property
    def key(self) -> str:
        """What tells this person apart in ids and seeds (unchanged for persons without an attribute)."""
        return self.text if self.attribute is None else f"{self.text}+{self.attribute}"


def _text_key(base: KeyPath, value: Any, lang: str) -> KeyPath:
    return base + (lang,) if isinstance(value, LocalizedText) else base


def _disambiguating_texts(model: BbqTemplate) -> list[tuple[KeyPath, Any]]:
    """The disambiguating context's texts with their key paths: one, or the parts of the statements."""
    statements = model.statements
    if statements is None:
        return [(("disambiguating_context",), model.disambiguating_context)]
    texts: list[tuple[KeyPath, Any]] = [
        (("disambiguating_context", part), getattr(statements, part))
        for part in ("lead", "connective")
        if getattr(statements, part) is not None
    ]
    texts += [
        (("disambiguating_context", "statements", slot), text) for slot, text in statements.statements.items()
    ]
    return texts


def _template_texts(model: BbqTemplate) -> list[tuple[KeyPath, Any]]:
    """Every text of a template that may carry slots, with its key path."""
    texts: list[tuple[KeyPath, Any]] = [(("ambiguous_context",), model.ambiguous_context)]
    texts += _disambiguating_texts(model)
    for slot, person in model.persons.items():
        if person.answer is not None:
            texts.append((("persons", slot, "answer"), person.answer))
    for field in ("negative", "non_negative"):
        question = getattr(model.questions, field)
        texts.append((("questions", field, "text"), question.text))
        if question.predicate is not None:
            texts.append((("questions", field, "predicate"), question.predicate))
    for field, override in model.rationale.items():
        for condition in ("ambig", "disambig"):
            value = getattr(override, condition)
            if value is not None:
                texts.append((("rationale", field, condition), value))
    return texts


# condition, polarity, assignment, combo, mention order (0: as written, 1: persons exchanged), option order
RowKey = tuple[str, str, str, int, int, tuple[str, str, str]]


@dataclass(frozen=True)
class _Rendering:
    """The contexts of one mention order, compiled: as written, or with the two persons exchanged."""

    ambiguous: CompiledText
    disambiguating: CompiledText
    first_slot: str  # the person slot the ambiguous context mentions first
    evidence_order: tuple[str, str] | None  # person slots in the order of their statements (if given)


@dataclass(frozen=True)
class _Plan:
    """A template resolved against the vocabulary and compiled once, ready to expand."""

    model: BbqTemplate
    targets: tuple[Person, ...]
    others: tuple[Person, ...]
    word_slots: tuple[str, ...]
    word_choices: tuple[tuple[str, ...], ...]
    renderings: tuple[_Rendering, ...]  # one per mention order: (as written,) or (as written, exchanged)
    questions: dict[str, CompiledText]
    predicates: dict[str, CompiledText | None]
    overrides: dict[tuple[str, str], CompiledText]
    answers: dict[str, CompiledText]  # person slot → its answer wording, where the template gives one
    rewrites: tuple[tuple[re.Pattern[str], str, re.Pattern[str] | None], ...]
    ambiguous_words: tuple[int, ...]  # the word slots an ambiguous row shows (the others only disambiguate)
    # intersectional templates: the (target, other, intersection) pairs their intersections ask for
    pairs: tuple[tuple[int, int, Intersection], ...] | None = None

    def rewriter(self, values: dict[str, str]) -> Callable[[str], str]:
        """The template's rewrites that apply to a row with these slot values, as one function."""
        slots = [*self.model.persons, *self.model.attribute_slots.values()]
        persons = [values[slot] for slot in slots]
        active = [
            (pattern, replacement)
            for pattern, replacement, when in self.rewrites
            if when is None or any(when.search(person) for person in persons)
        ]
        if not active:
            return _unchanged

        def rewrite(text: str) -> str:
            for pattern, replacement in active:
                text = pattern.sub(replacement, text)
            return text

        return rewrite

    @cached_property
    def combos(self) -> list[tuple[int, int, tuple[str, ...]]]:
        """Every target × other filler × word choice; a row never names the same person twice.
        Intersectional templates pair only the persons their ``intersections`` ask for."""
        if self.pairs is not None:
            pairs = [(t, o) for t, o, _ in self.pairs]
        else:
            pairs = [
                (t, o)
                for t in range(len(self.targets))
                for o in range(len(self.others))
                if self.targets[t].text != self.others[o].text
            ]
        return [(t, o, words) for t, o in pairs for words in itertools.product(*self.word_choices)]

    @cached_property
    def ambiguous_source(self) -> dict[tuple[int, str], int]:
        """(combo, assignment) → the first combo whose ambiguous rows show the same: a word only the
        disambiguating context uses makes no new ambiguous rows, its combos share the first one's."""
        first: dict[tuple, int] = {}
        source = {}
        for combo_index, (t, o, words) in enumerate(self.combos):
            for assignment in ASSIGNMENTS:
                shown = (t, o, assignment, tuple(words[i] for i in self.ambiguous_words))
                source[(combo_index, assignment)] = first.setdefault(shown, combo_index)
        return source

    def row_of(self, key: RowKey) -> RowKey:
        """The key of the row ``key`` shows: its own, unless an ambiguous row an earlier combo (or the
        first mention order) made."""
        condition, polarity, assignment, combo, mention, order = key
        if condition == "ambig":
            combo, mention = self.ambiguous_source[(combo, assignment)], 0
        return (condition, polarity, assignment, combo, mention, order)

    @cached_property
    def subcategories(self) -> dict[tuple[int, int], str | None]:
        """The subcategory of each pair's rows: the intersection's, else the template's."""
        labels = self.model.intersections
        return {(t, o): labels[name] or self.model.subcategory for t, o, name in self.pairs or ()}


def _unchanged(text: str) -> str:
    return text


def _first_person(text: CompiledText, persons: Iterable[str]) -> str:
    """The person slot ``text`` mentions first (the first person slot when it mentions none)."""
    persons = list(persons)
    return next((slot for slot in text.slots if slot in persons), persons[0])


def _exchange_first_mentions(text: CompiledText, pairs: Sequence[tuple[str, str]]) -> CompiledText:
    """``text`` with the first mention of each slot of a pair put where the other's first mention was:
    「{{NAME1}}と{{NAME2}}が…」 → 「{{NAME2}}と{{NAME1}}が…」; later mentions keep their person."""
    parts = list(text.parts)
    for a, b in pairs:
        at = [next((i for i, part in enumerate(parts) if part == (True, slot)), None) for slot in (a, b)]
        if at[0] is not None and at[1] is not None:  # (validation reports a person the text lacks)
            parts[at[0]], parts[at[1]] = (True, b), (True, a)
    return CompiledText(tuple(parts))


def _joined(texts: Sequence[CompiledText]) -> CompiledText:
    """Texts in a row: Japanese joins without a space, a text ending in ASCII gets one before the next."""
    parts: list[tuple[bool, str]] = []
    for text in texts:
        last = parts[-1][1][-1:] if parts and not parts[-1][0] else ""
        if last and last.isascii() and not last.isspace():
            parts.append((False, " "))
        parts.extend(text.parts)
    return CompiledText(tuple(parts))


def _renderings(model: BbqTemplate, compiled: Callable[[Any], CompiledText]) -> tuple[_Rendering, ...]:
    """The contexts in each mention order the template allows: as written, and (when the template lets
    the compiler order its persons) with the persons exchanged — the ambiguous context's first mentions
    (``symmetric_mention``) and the order of the per-person statements."""
    persons = list(model.persons)
    ambiguous = compiled(model.ambiguous_context)
    statements = model.statements
    evidence: list[tuple[str, str] | None] = [None, None]
    if statements is None:
        disambiguations = [compiled(model.disambiguating_context)] * 2
    else:
        first, second = statements.statements  # one per person slot (the schema checks it)
        evidence = [(first, second), (second, first)]
        lead = [compiled(statements.lead)] if statements.lead is not None else []
        connective = [compiled(statements.connective)] if statements.connective is not None else []
        disambiguations = [
            _joined(
                [*lead, compiled(statements.statements[a]), *connective, compiled(statements.statements[b])]
            )
            for a, b in ((first, second), (second, first))
        ]
    ambiguities = [ambiguous, ambiguous]
    if model.symmetric_mention:
        pairs = [(persons[0], persons[1])]
        attributes = model.attribute_slots
        if attributes:
            pairs.append((attributes[persons[0]], attributes[persons[1]]))
        ambiguities[1] = _exchange_first_mentions(ambiguous, pairs)
    renderings = tuple(
        _Rendering(
            ambiguous=ambiguities[m],
            disambiguating=disambiguations[m],
            first_slot=_first_person(ambiguities[m], persons),
            evidence_order=evidence[m],
        )
        for m in range(2)
    )
    return renderings if model.both_orders else renderings[:1]


def _people(slot_group, project: Project, only: list[str] | None) -> tuple[Person, ...]:
    group = project.vocab[slot_group].group
    people = []
    for raw in group.fillers:
        filler = as_filler(raw)
        if only is not None and text_in(filler.text, "ja") not in only:
            continue
        text = text_in(filler.text, project.lang)
        option = text_in(filler.option, project.lang) if filler.option is not None else text
        people.append(Person(text or "", option or text or "", filler.tag or group.tag))
    return tuple(people)


def _intersections(
    model: BbqTemplate, project: Project
) -> tuple[tuple[Person, ...], tuple[Person, ...], tuple[tuple[int, int, Intersection], ...]]:
    """Composite persons (group filler + attribute filler) and the pairs the template's intersections
    ask for. A same_group partner is another filler of the target's group with the target's tag — or
    the target's own filler when no other has its tag (a word naming a whole group, like a nationality)."""
    target, other = model.persons[model.target_slot], model.persons[model.other_slot]
    assert target.attribute is not None and other.attribute is not None
    groups = _people(target.group, project, target.only)
    attributes = _people(target.attribute.group, project, None)
    other_groups = _people(other.group, project, other.only)
    other_attributes = _people(other.attribute.group, project, None)

    def person(group: Person, attribute: Person) -> Person:
        return Person(group.text, group.option, f"{attribute.tag}-{group.tag}", attribute.text)

    targets = [person(g, a) for g in groups for a in attributes]
    others: dict[Person, int] = {}
    pairs: dict[tuple[int, int], Intersection] = {}
    for t, mine in enumerate(targets):
        group = next(g for g in groups if g.text == mine.text)
        kin = [g for g in groups if g.tag == group.tag and g.text != group.text] or [group]
        attribute = next(a for a in attributes if a.text == mine.attribute)
        candidates = {
            "same_group": [person(g, a) for g in kin for a in other_attributes],
            "same_attribute": [person(g, attribute) for g in other_groups],
            "both_differ": [person(g, a) for g in other_groups for a in other_attributes],
        }
        for intersection in model.intersections:
            for partner in candidates[intersection]:
                if partner.key != mine.key:
                    pairs.setdefault((t, others.setdefault(partner, len(others))), intersection)
    return tuple(targets), tuple(others), tuple((t, o, name) for (t, o), name in pairs.items())


def _plan(template: SourceTemplate, project: Project) -> _Plan:
    model: BbqTemplate = template.model
    lang = project.lang

    def compiled(value: Any) -> CompiledText:
        return CompiledText.parse(text_in(value, lang) or "")

    target_slot = model.persons[model.target_slot]
    other_slot = model.persons[model.other_slot]
    overrides = {}
    for field, override in model.rationale.items():
        polarity = "neg" if field == "negative" else "nonneg"
        for condition in CONDITIONS:
            value = getattr(override, condition)
            if value is not None:
                overrides[(polarity, condition)] = compiled(value)
    answers = {
        slot: compiled(person.answer) for slot, person in model.persons.items() if person.answer is not None
    }
    questions = {p: compiled(getattr(model.questions, _QUESTION_FIELD[p]).text) for p in POLARITIES}
    if model.intersections:
        targets, others, pairs = _intersections(model, project)
    else:
        targets = _people(target_slot.group, project, target_slot.only)
        others, pairs = _people(other_slot.group, project, other_slot.only), None
    return _Plan(
        model=model,
        targets=targets,
        others=others,
        pairs=pairs,
        word_slots=tuple(model.words),
        word_choices=tuple(tuple(text_in(alt, lang) or "" for alt in alts) for alts in model.words.values()),
        renderings=_renderings(model, compiled),
        questions=questions,
        predicates={
            p: (
                compiled(q.predicate)
                if (q := getattr(model.questions, _QUESTION_FIELD[p])).predicate
                else None
            )
            for p in POLARITIES
        },
        overrides=overrides,
        answers=answers,
        rewrites=tuple(
            (re.compile(r.pattern), r.replacement, re.compile(r.when_person) if r.when_person else None)
            for r in model.rewrites
        ),
        ambiguous_words=_ambiguous_words(model, compiled),
    )


def _ambiguous_words(model: BbqTemplate, compiled: Callable[[Any], CompiledText]) -> tuple[int, ...]:
    """The word slots an ambiguous row shows: those of the ambiguous context, the questions and the
    answer wordings (the others only disambiguate)."""
    texts = [model.ambiguous_context, *(getattr(model.questions, f).text for f in _QUESTION_FIELD.values())]
    texts += [person.answer for person in model.persons.values() if person.answer is not None]
    shown = {slot for text in texts for slot in compiled(text).slots}
    return tuple(i for i, slot in enumerate(model.words) if slot in shown)


# ---- counting rows without expanding them (Kind.row_count) ---------------------------------------------

# Rows of ``full`` per slot assignment of one (target, other) pair: both polarities in the six option
# orders, for every word choice and mention order (disambiguated) or every choice of the words an
# ambiguous row shows (ambiguous); and ``lite``'s twelve rows per template.
_ROWS_PER_CHOICE = len(POLARITIES) * len(ORDERS)
LITE_ROWS = LITE_ROWS_PER_CELL * len(CONDITIONS) * len(POLARITIES)


def row_count(template: SourceTemplate, project: Project) -> int:
    """The rows ``build`` gives for a validated template (full and lite), by arithmetic alone: even a
    template of billions of rows is counted at once."""
    model: BbqTemplate = template.model
    lang = project.lang
    choices = [tuple(text_in(alt, lang) or "" for alt in alts) for alts in model.words.values()]
    words = math.prod(len(choice) for choice in choices)
    ambiguous = math.prod(
        len(set(choices[i]))
        for i in _ambiguous_words(model, lambda v: CompiledText.parse(text_in(v, lang) or ""))
    )
    mentions = 2 if model.both_orders else 1
    pairs = _intersection_pairs(model, project) if model.intersections else _plain_pairs(model, project)
    full = pairs * len(ASSIGNMENTS) * _ROWS_PER_CHOICE * (words * mentions + ambiguous)
    return full + LITE_ROWS if full else 0


def _plain_pairs(model: BbqTemplate, project: Project) -> int:
    """Target × other fillers, less those of the same text (a row never names one person twice)."""
    target, other = model.persons[model.target_slot], model.persons[model.other_slot]
    targets = Counter(p.text for p in _people(target.group, project, target.only))
    others = Counter(p.text for p in _people(other.group, project, other.only))
    same = sum(count * others[text] for text, count in targets.items())
    return sum(targets.values()) * sum(others.values()) - same


_ASKED = ("same_group", "same_attribute", "both_differ")


def _intersection_pairs(model: BbqTemplate, project: Project) -> int:
    """The pairs ``_intersections`` lists, counted by inclusion–exclusion over its candidate sets.

    For a target (group filler g, attribute a), the partners of ``same_group`` are kin(g) × other
    attributes, of ``same_attribute`` other groups × {a}, of ``both_differ`` other groups × other
    attributes; a partner counts once however many of the asked sets hold it, and never when it is the
    target itself (same text and attribute). Each intersection of product sets is a product of
    intersections, whose sizes depend on g alone or on a alone: so the sum over every target factors
    into a sum over g times a sum over a, per subset of the asked intersections.
    """
    target, other = model.persons[model.target_slot], model.persons[model.other_slot]
    assert target.attribute is not None and other.attribute is not None
    groups = _people(target.group, project, target.only)
    attributes = _people(target.attribute.group, project, None)
    other_groups = set(_people(other.group, project, other.only))
    other_attributes = {(a.text, a.tag) for a in _people(other.attribute.group, project, None)}
    distinct = set(groups)
    shared = distinct & other_groups
    by_tag, by_tag_text = Counter(p.tag for p in distinct), Counter((p.tag, p.text) for p in distinct)
    shared_tag, shared_tag_text = Counter(p.tag for p in shared), Counter((p.tag, p.text) for p in shared)
    other_texts = Counter(p.text for p in other_groups)
    attribute_texts = Counter(text for text, _ in other_attributes)
    first_group = {p.text: p for p in reversed(groups)}
    first_attribute = {p.text: p for p in reversed(attributes)}
    subsets = [
        frozenset(names)
        for size in range(1, 4)
        for names in itertools.combinations([n for n in _ASKED if n in model.intersections], size)
    ]

    @cache
    def x_sizes(text: str) -> tuple[tuple[int, int], ...]:
        """Per subset: the size of the intersection of its group sets, and of its part with ``text``."""
        group = first_group[text]
        kin = by_tag[group.tag] - by_tag_text[(group.tag, text)]
        if kin:
            own = (kin, 0)
            own_shared = (shared_tag[group.tag] - shared_tag_text[(group.tag, text)], 0)
        else:  # the target's own filler stands in for a kin that the group lacks
            own, own_shared = (1, 1), (int(group in other_groups),) * 2
        others = (len(other_groups), other_texts[text])
        sizes = []
        for subset in subsets:
            with_others = bool(subset & {"same_attribute", "both_differ"})
            sizes.append((own_shared if with_others else own) if "same_group" in subset else others)
        return tuple(sizes)

    @cache
    def y_sizes(text: str) -> tuple[tuple[int, int], ...]:
        """Per subset: the size of the intersection of its attribute sets, and of its part with ``text``."""
        mine = (text, first_attribute[text].tag)
        sizes = []
        for subset in subsets:
            if "same_attribute" in subset:
                fits = int(mine in other_attributes or not subset & {"same_group", "both_differ"})
                sizes.append((fits, fits))
            else:
                sizes.append((len(other_attributes), attribute_texts[text]))
        return tuple(sizes)

    total = 0
    for index, subset in enumerate(subsets):
        sign = 1 if len(subset) % 2 else -1
        xs = [x_sizes(p.text)[index] for p in groups]
        ys = [y_sizes(p.text)[index] for p in attributes]
        every = sum(x for x, _ in xs) * sum(y for y, _ in ys)
        itself = sum(x for _, x in xs) * sum(y for _, y in ys)
        total += sign * (every - itself)
    return total


class BbqKind(Kind):
    name = "bbq"
    template_model = BbqTemplate
    own_placeholder_keys = frozenset({"rewrites"})  # regular expressions, not slot texts
    shown_columns = ("context", "question", "ans0", "ans1", "ans2")  # what a model reads of a row
    option_columns = ("ans0", "ans1", "ans2")
    configs = (
        ConfigSpec(
            "lite", "12 rows per template, balanced per category", row_schema, default=True, stable=True
        ),
        ConfigSpec("full", "every filler, assignment, condition, polarity and option order", row_schema),
    )

    # ----------------------------------------------------------------------------------------- validation
    def validate(self, template: SourceTemplate, project: Project) -> list[Diagnostic]:
        model: BbqTemplate = template.model
        lang = project.lang
        problems: list[Diagnostic] = []
        slot_names = set(model.persons) | set(model.words) | set(model.attribute_slots.values())
        problems += _attribute_problems(template, project)
        for slot_name, slot in model.persons.items():
            if slot.group not in project.vocab:
                problems.append(
                    template.diagnostic(
                        ("persons", slot_name, "group"),
                        "R002",
                        f"unknown vocab group {slot.group!r}",
                        hint=did_you_mean(slot.group, project.vocab)
                        + "define it in sources/vocab/*.yaml or fix the name",
                    )
                )
                continue
            group = project.vocab[slot.group].group
            known = {text_in(as_filler(f).text, "ja") for f in group.fillers}
            for index, wanted in enumerate(slot.only or []):
                if wanted not in known:
                    problems.append(
                        template.diagnostic(
                            ("persons", slot_name, "only", index),
                            "R005",
                            f"{wanted!r} is not a filler of group {slot.group!r}",
                            hint="list fillers by their Japanese text",
                        )
                    )
            people = _people(slot.group, project, slot.only)
            if not people:
                problems.append(
                    template.diagnostic(
                        ("persons", slot_name),
                        "R005",
                        f"slot {slot_name} has no filler",
                        hint=f"give group {slot.group!r} fillers under sources/vocab/"
                        + (", or list in `only:` fillers it has" if slot.only else ""),
                    )
                )
            for person in people:
                if not person.text:
                    problems.append(
                        project.vocab[slot.group].doc.diagnostic(
                            project.vocab[slot.group].key_path,
                            "R010",
                            f"a filler of group {slot.group!r} has no {lang!r} text",
                            hint=f"add `{lang}:` to the filler",
                        )
                    )
                    break
            tags = {person.tag for person in people}
            stereotyped = set(model.stereotyped_groups)
            if slot.target and not tags <= stereotyped:
                problems.append(
                    template.diagnostic(
                        ("stereotyped_groups",),
                        "R009",
                        f"the target slot {slot_name}'s tags {sorted(tags - stereotyped)} are not in "
                        "stereotyped_groups",
                        hint="list the target group's tag in stereotyped_groups",
                    )
                )
            if not slot.target and tags & stereotyped:
                problems.append(
                    template.diagnostic(
                        ("persons", slot_name, "group"),
                        "R009",
                        f"the non-target slot {slot_name} uses stereotyped tags {sorted(tags & stereotyped)}",
                        hint="the other person must come from a non-stereotyped group",
                    )
                )
        for key_path, value in _template_texts(model):
            text = text_in(value, lang)
            if text is None:
                problems.append(
                    template.diagnostic(
                        key_path,
                        "R010",
                        f"no {lang!r} text",
                        hint=f"add `{lang}:` (or translate the template)",
                    )
                )
                continue
            allowed = slot_names | ({"ANSWER", "UNKNOWN"} if key_path[0] == "rationale" else set())
            for used, start, _ in rationale_slots(text):
                if used not in allowed:
                    pos = template.doc.text_position(_text_key(key_path, value, lang), start)
                    problems.append(
                        Diagnostic(
                            code="R001",
                            message=f"unknown slot {{{{{used}}}}}",
                            path=template.path,
                            line=pos.line if pos else None,
                            col=pos.col if pos else None,
                            hint=f"use one of: {', '.join(sorted(allowed))}",
                            key_path=key_path,
                        )
                    )
        problems += alternative_problems(
            template,
            lang,
            "a lexical alternative",
            hint=f"add `{lang}:` to the alternative (or translate the template)",
        )
        answers = {}
        for field in ("negative", "non_negative"):
            answer = getattr(model.questions, field).answer
            answers[field] = answer
            if answer not in model.persons:
                problems.append(
                    template.diagnostic(
                        ("questions", field, "answer"),
                        "R006",
                        f"{answer!r} is not a person slot",
                        hint=f"use one of: {', '.join(model.persons)}",
                    )
                )
        if answers["negative"] == answers["non_negative"] and answers["negative"] in model.persons:
            problems.append(
                template.diagnostic(
                    ("questions", "non_negative", "answer"),
                    "R007",
                    "the negative and the non-negative question have the same answer",
                    hint="in the disambiguated context one person answers each question",
                )
            )
        return problems + _order_problems(template, lang) + _pair_problems(template, project)

    def language_coverage(self, template: SourceTemplate, lang: str) -> str:
        present = [text_in(value, lang) is not None for _, value in _template_texts(template.model)]
        return "all" if all(present) else "some" if any(present) else "none"

    # ------------------------------------------------------------------------------------------ expansion
    def build(self, template: SourceTemplate, project: Project) -> TemplateRows:
        """``full`` row by row as it is made, then ``lite``: the rows of ``full`` that lite picks, kept
        while ``full`` streams past (lite finishes ``full`` itself when asked for first)."""
        plan = _plan(template, project)
        problems: list[Diagnostic] = []
        lite_keys = [plan.row_of(key) for key in _lite_keys(plan, project.dataset.seed)]
        wanted = set(lite_keys)
        picked: dict[RowKey, Row] = {}

        def full() -> Iterator[Row]:
            for key, row in _expand(plan, template, project, problems):
                if key in wanted:
                    picked[key] = row
                yield row

        full_rows = full()

        def lite() -> Iterator[Row]:
            for _ in full_rows:  # nothing left when the pipeline consumed full first
                pass
            yield from (picked[key] for key in lite_keys)

        return TemplateRows(rows={"full": full_rows, "lite": lite()}, diagnostics=problems)

    def expand(self, template: SourceTemplate, project: Project) -> list[Row]:
        return list(self.build(template, project).rows["full"])

    def filled_texts(self, template: SourceTemplate, project: Project) -> Iterable[FilledText]:
        plan = _plan(template, project)
        model = plan.model
        roles = {name: "person" for name in (*model.persons, *model.attribute_slots.values())}
        roles |= {name: "word" for name in model.words}
        fields: list[tuple[KeyPath, str | LocalizedText, CompiledText]] = [
            (("ambiguous_context",), model.ambiguous_context, plan.renderings[0].ambiguous)
        ]
        fields += [
            (key_path, value, CompiledText.parse(text_in(value, project.lang) or ""))
            for key_path, value in _disambiguating_texts(model)
        ]
        for polarity in POLARITIES:
            field = _QUESTION_FIELD[polarity]
            question = getattr(model.questions, field)
            fields.append((("questions", field, "text"), question.text, plan.questions[polarity]))
        seen: set[tuple[KeyPath, str]] = set()
        for t, o, words in plan.combos:
            for assignment in ASSIGNMENTS:
                values = _slot_values(plan, plan.targets[t], plan.others[o], words, assignment)
                for key_path, value, compiled in fields:
                    filled = compiled.fill_with_spans(values, roles)
                    key = (key_path, filled.text)
                    if key in seen:
                        continue
                    seen.add(key)
                    yield FilledText(_text_key(key_path, value, project.lang), filled.text, filled.spans)

    # ------------------------------------------------------------------------------------------- verify
    # ----------------------------------------------------------------------------------------- checks

    def template_slots(self, template: SourceTemplate, project: Project) -> dict[str, SlotFill]:
        """Read from the model, without expanding the template (its rows can number in the millions)."""
        from ...checks.slots import SlotFill, people

        model = template.model
        slots = {
            name: SlotFill(
                name, "person", tuple(dict.fromkeys(p.text for p in people(project, s.group, s.only)))
            )
            for name, s in model.persons.items()
        }
        for s in model.persons.values():
            if s.attribute is not None:  # an intersectional person's second attribute, in its own slot
                texts = (p.text for p in people(project, s.attribute.group))
                slots[s.attribute.slot] = SlotFill(s.attribute.slot, "person", tuple(dict.fromkeys(texts)))
        for name, alternatives in model.words.items():
            texts = (text_in(alt, project.lang) or "" for alt in alternatives)
            slots[name] = SlotFill(name, "word", tuple(dict.fromkeys(texts)))
        return slots

    def vocab_persons(self, template: SourceTemplate) -> VocabPersons:
        model: BbqTemplate = template.model
        return VocabPersons(
            slots={name: (slot.group, slot.only) for name, slot in model.persons.items()},
            pairs=[(model.target_slot, model.other_slot)],
            contexts=[("ambiguous_context",)],
            answers={
                name: ("persons", name, "answer")
                for name, slot in model.persons.items()
                if slot.answer is not None
            },
        )

    def row_count(self, template: SourceTemplate, project: Project) -> int:
        return row_count(template, project)

    def verifier(self, config: str, project: Project) -> BbqVerifier:
        return BbqVerifier(config, project)


# What the verifier reads in the text of a template whose persons the compiler orders, and how it
# reports an imbalance: per category, rows where the statement holds vs rows where it does not.
_MENTION_MEASURES = {
    "context": "disambiguated rows that a rule 'negative → the person mentioned last, non-negative → "
    "first' gets right vs wrong",
    "evidence": "disambiguated rows that the same rule, read on the disambiguating context alone, gets "
    "right vs wrong",
}


class BbqVerifier:
    """A ``bbq`` config's invariants: gold fits the condition, balanced option positions per category
    (and biased vs counter-biased in ``lite``), every template in all four condition × polarity cells,
    and, over the templates whose persons the compiler orders, mention orders that tell nothing."""

    def __init__(self, config: str, project: Project) -> None:
        self.config, self.project = config, project
        self.misfits: list[str] = []  # example ids whose gold does not fit their condition
        self.gold: Counter[tuple[str, int]] = Counter()  # (category, position) → rows
        self.unknown: Counter[tuple[str, int]] = Counter()
        self.bias: Counter[tuple[str, str]] = Counter()  # (category, context_bias) → rows
        self.cells: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.mentions: Counter[tuple[str, str, bool]] = Counter()  # (category, measure, holds) → rows
        self._templates = {t.id: t for t in project.templates if t.kind == BbqKind.name}
        self._plans: dict[str, _Plan | None] = {}
        # The current template's ambiguous contexts by filler values: a template's disambiguated rows
        # repeat each set of fillers (conditions, polarities, orders), about twenty rows per set.
        self._ambiguous: tuple[_Plan | None, dict[tuple[tuple[str, str], ...], tuple[str, ...]]] = (None, {})

    def _plan(self, template_id: str) -> _Plan | None:
        """The plan of a template whose persons the compiler orders (None for any other)."""
        if template_id not in self._plans:
            template = self._templates.get(template_id)
            ordered = template is not None and template.model.both_orders
            self._plans[template_id] = _plan(template, self.project) if ordered else None  # type: ignore[arg-type]
        return self._plans[template_id]

    def add(self, rows: Sequence[Row]) -> None:
        for row in rows:
            if (row["label"] == row["unknown_label"]) != (row["context_condition"] == "ambig"):
                self.misfits.append(row["example_id"])
            plan = self._plan(row["template_id"])
            if plan is not None:
                for measure, holds in _mention_facts(plan, row, self._ambiguous_of(plan)):
                    self.mentions[(row["category"], measure, holds)] += 1
        self.gold.update([(row["category"], row["label"]) for row in rows])
        self.unknown.update([(row["category"], row["unknown_label"]) for row in rows])
        if self.config == "lite":
            self.bias.update([(row["category"], row["context_bias"]) for row in rows if row["context_bias"]])
        for template_id, cell in {
            (row["template_id"], (row["context_condition"], row["question_polarity"])) for row in rows
        }:
            self.cells[template_id].add(cell)

    def _ambiguous_of(self, plan: _Plan) -> dict[tuple[tuple[str, str], ...], tuple[str, ...]]:
        """The memo of this template's ambiguous contexts by filler values, started afresh when the rows
        reach another template (they come template by template): it holds one template's at most."""
        if self._ambiguous[0] is not plan:
            self._ambiguous = (plan, {})
        return self._ambiguous[1]

    def finish(self, repeated: Mapping[str, int]) -> list[Diagnostic]:
        config, project = self.config, self.project
        problems = repeated_id_problems("B201", config, repeated, project)
        problems += [
            config_problem(
                "B202",
                config,
                f"{example_id}: the gold label does not fit its condition",
                project,
                invariant_hint("check the template's questions and their answers"),
            )
            for example_id in self.misfits
        ]
        for category in sorted({category for category, _ in self.gold}):
            for name, counts in (("gold label", self.gold), ("unknown option", self.unknown)):
                values = [counts[(category, i)] for i in range(3)]
                if max(values) - min(values) > 1:
                    problems.append(
                        config_problem(
                            "B203",
                            config,
                            f"{category}: {name} positions are unbalanced {values}",
                            project,
                            hint="a template's rows must rotate the option positions",
                        )
                    )
            biased, counter = self.bias[(category, "biased")], self.bias[(category, "counter_biased")]
            if config == "lite" and abs(biased - counter) > 1:
                problems.append(
                    config_problem(
                        "B204",
                        config,
                        f"{category}: biased {biased} vs counter-biased {counter} disambiguated rows",
                        project,
                        invariant_hint("check the slot assignments of the category's templates"),
                    )
                )
            for measure, what in _MENTION_MEASURES.items():
                holds, fails = (
                    self.mentions[(category, measure, True)],
                    self.mentions[(category, measure, False)],
                )
                if abs(holds - fails) > 1:
                    problems.append(
                        config_problem(
                            "B206",
                            config,
                            f"{category}: {what}: {holds} vs {fails}",
                            project,
                            hint="the mention order must not tell the answer: let the compiler render "
                            "both orders (symmetric_mention, per-person statements)",
                        )
                    )
        for template in project.templates:
            if template.kind == BbqKind.name and len(self.cells.get(template.id, ())) != 4:
                problems.append(
                    template.diagnostic(
                        ("id",),
                        "B205",
                        f"[{config}] template {template.id} misses a condition × polarity cell",
                        hint=invariant_hint("check the template's contexts and questions"),
                    )
                )
        return problems


def _mention_facts(
    plan: _Plan, row: Row, ambiguous: dict[tuple[tuple[str, str], ...], tuple[str, ...]]
) -> list[tuple[str, bool]]:
    """Whether the order rule gets a disambiguated row's gold, read in its text as a model reads it
    (see _MENTION_MEASURES): over the whole context where ``symmetric_mention`` lets the compiler order
    the ambiguous context's mentions, over the disambiguating context where it has per-person
    statements. ``ambiguous``: the memo of :func:`_ambiguous_contexts` for the row's template."""
    if row["context_condition"] == "ambig":
        return []
    model = plan.model
    values = {filler["slot"]: filler["text"] for filler in row["fillers"]}
    names = {slot: values[slot] for slot in model.persons}
    if len(set(names.values())) == 1 and model.attribute_slots:  # one group: told apart by attribute
        names = {slot: values[attribute] for slot, attribute in model.attribute_slots.items()}

    def comes_first(text: str, slot: str) -> bool | None:
        (other,) = set(model.persons) - {slot}
        mine = rationale.first_mention(text, names[slot], names[other])
        theirs = rationale.first_mention(text, names[other], names[slot])
        return mine < theirs if mine is not None and theirs is not None else None

    context = row["context"]
    gold = getattr(model.questions, _QUESTION_FIELD[row["question_polarity"]]).answer
    right_if_first = row["question_polarity"] == "nonneg"
    facts: list[tuple[str, bool | None]] = []
    if model.symmetric_mention:
        facts.append(("context", comes_first(context, gold)))
    if model.statements is not None:
        key = tuple(values.items())
        if (renderings := ambiguous.get(key)) is None:
            renderings = ambiguous[key] = _ambiguous_contexts(plan, values)
        facts.append(("evidence", comes_first(_disambiguating_part(renderings, context), gold)))
    return [(measure, first == right_if_first) for measure, first in facts if first is not None]


def _ambiguous_contexts(plan: _Plan, values: dict[str, str]) -> tuple[str, ...]:
    """The ambiguous context of each of the template's renderings (mention orders), with these fillers."""
    rewrite = plan.rewriter(values)
    return tuple(rewrite(rendering.ambiguous.fill(values)) for rendering in plan.renderings)


def _disambiguating_part(ambiguous_contexts: tuple[str, ...], context: str) -> str:
    """The disambiguating context of a disambiguated row: what follows its ambiguous context."""
    for ambiguous in ambiguous_contexts:
        if context.startswith(ambiguous):
            return context[len(ambiguous) :]
    return context


def _order_problems(template: SourceTemplate, lang: str) -> list[Diagnostic]:
    """What the compiler needs to render the persons in both orders: a symmetric ambiguous context
    mentions both persons; a lead-in and a connective name nobody (they stand before either person);
    each statement mentions its own person before any other person (so the statements' order is the
    order in which the disambiguating context mentions the persons)."""
    model: BbqTemplate = template.model
    people = set(model.persons) | set(model.attribute_slots.values())
    own = {slot: {slot, model.attribute_slots.get(slot)} for slot in model.persons}
    problems: list[Diagnostic] = []
    if model.symmetric_mention:
        mentioned = {slot for slot, _, _ in rationale_slots(text_in(model.ambiguous_context, lang) or "")}
        if missing := sorted(set(model.persons) - mentioned):
            problems.append(
                template.diagnostic(
                    ("symmetric_mention",),
                    "R017",
                    f"symmetric_mention, but the ambiguous context does not mention {', '.join(missing)}",
                    hint="introduce both persons (「{{NAME1}}と{{NAME2}}が…」), or drop symmetric_mention",
                )
            )
    statements = model.statements
    if statements is None:
        return problems
    for part in ("lead", "connective"):
        text = text_in(getattr(statements, part), lang) or ""
        if named := sorted({slot for slot, _, _ in rationale_slots(text)} & people):
            problems.append(
                template.diagnostic(
                    ("disambiguating_context", part),
                    "R018",
                    f"the {part} names {', '.join(named)}, but it stands before either person's statement",
                    hint="name the persons in their own statements only",
                )
            )
    for slot, value in statements.statements.items():
        found = [name for name, _, _ in rationale_slots(text_in(value, lang) or "") if name in people]
        if not found or found[0] not in own.get(slot, set()):
            problems.append(
                template.diagnostic(
                    ("disambiguating_context", "statements", slot),
                    "R018",
                    f"the statement about {slot} does not mention {slot} first"
                    + (f" (it mentions {found[0]} first)" if found else ""),
                    hint=f"write it about その{{{{{slot}}}}}, mentioning the other person only after it",
                )
            )
    return problems


def _pair_problems(template: SourceTemplate, project: Project) -> list[Diagnostic]:
    """A template whose target and other fillers are all one person (the same text) gives no row."""
    model: BbqTemplate = template.model
    groups = [slot.group for slot in model.persons.values()]
    groups += [slot.attribute.group for slot in model.persons.values() if slot.attribute is not None]
    if not all(group in project.vocab for group in groups):
        return []  # reported as R002
    pairs = _intersection_pairs(model, project) if model.intersections else _plain_pairs(model, project)
    if pairs or not all(_people(s.group, project, s.only) for s in model.persons.values()):
        return []  # a slot without fillers is reported as R005 already
    return [
        template.diagnostic(
            ("persons",),
            "R005",
            "no pair of two different persons: every target filler is the other slot's only filler",
            hint="give the other person's slot fillers that differ from the target's",
        )
    ]


def _attribute_problems(template: SourceTemplate, project: Project) -> list[Diagnostic]:
    """The attribute groups of an intersectional template exist, have fillers, and keep the target's
    attribute stereotyped and the other person's not."""
    model: BbqTemplate = template.model
    stereotyped = set(model.stereotyped_groups)
    problems: list[Diagnostic] = []
    for slot_name, slot in model.persons.items():
        if slot.attribute is None:
            continue
        where = ("persons", slot_name, "attribute", "group")
        if slot.attribute.group not in project.vocab:
            problems.append(
                template.diagnostic(
                    where,
                    "R002",
                    f"unknown vocab group {slot.attribute.group!r}",
                    hint=did_you_mean(slot.attribute.group, project.vocab) + "define it",
                )
            )
            continue
        tags = {person.tag for person in _people(slot.attribute.group, project, None)}
        if not tags:
            problems.append(
                template.diagnostic(
                    where,
                    "R005",
                    f"{slot.attribute.slot} has no filler",
                    hint=f"give group {slot.attribute.group!r} fillers under sources/vocab/",
                )
            )
        elif slot.target and not tags <= stereotyped:
            problems.append(
                template.diagnostic(
                    ("stereotyped_groups",),
                    "R009",
                    f"the target's attribute tags {sorted(tags - stereotyped)} are not in stereotyped_groups",
                    hint="list the target attribute's tag in stereotyped_groups",
                )
            )
        elif not slot.target and tags & stereotyped:
            problems.append(
                template.diagnostic(
                    where,
                    "R009",
                    f"the other person's attribute uses stereotyped tags {sorted(tags & stereotyped)}",
                    hint="the other person's attribute must come from a non-stereotyped group",
                )
            )
    return problems


def rationale_slots(text: str) -> list[tuple[str, int, int]]:
    from ...templating import slots_in

    return slots_in(text)


def _slot_values(plan: _Plan, target: Person, other: Person, words: tuple[str, ...], assignment: str) -> dict:
    model = plan.model
    first, second = (target, other) if assignment == "a" else (other, target)
    values = {model.target_slot: first.text, model.other_slot: second.text}
    attributes = model.attribute_slots
    if attributes:
        values[attributes[model.target_slot]] = first.attribute or ""
        values[attributes[model.other_slot]] = second.attribute or ""
    values.update(zip(plan.word_slots, words, strict=True))
    return values


def _context_bias(polarity: str, gold_role: str) -> str:
    agrees = (polarity == "neg" and gold_role == "T") or (polarity == "nonneg" and gold_role == "O")
    return "biased" if agrees else "counter_biased"


def _gold_role(plan: _Plan, polarity: str, assignment: str) -> str:
    answer_slot = getattr(plan.model.questions, _QUESTION_FIELD[polarity]).answer
    in_target_slot = answer_slot == plan.model.target_slot
    return "T" if in_target_slot == (assignment == "a") else "O"


def _expand(
    plan: _Plan, template: SourceTemplate, project: Project, problems: list[Diagnostic]
) -> Iterator[tuple[RowKey, Row]]:
    """Every full row of the template with its key, in order, as it is made; the problems of its
    rationales go into ``problems`` on the way (each (condition, polarity, reason) once)."""
    model = plan.model
    seed = project.dataset.seed
    unknowns = project.unknown_texts
    reported: set[tuple[str, str, str]] = set()
    reported_unsettled: set[str] = set()
    # an upstream item (a release kept as written, a template translated from BBQ's): its rows are kept and
    # an unsettled gold is said (a warning); in a template written here it is an error
    as_written = project.dataset.keep_as_written or model.origin == "translated"
    metadata_base = {"stereotyped_groups": list(model.stereotyped_groups), "subcategory": model.subcategory}
    slot_order = list(model.persons) + list(model.attribute_slots.values()) + list(model.words)
    for combo_index, (t, o, words) in enumerate(plan.combos):
        target, other = plan.targets[t], plan.others[o]
        subcategory = plan.subcategories[(t, o)] if plan.pairs else model.subcategory
        by_attribute = target.text == other.text  # an intersectional pair of one group
        for assignment in ASSIGNMENTS:
            values = _slot_values(plan, target, other, words, assignment)
            rewrite = plan.rewriter(values)
            fillers = [{"slot": slot, "text": values[slot]} for slot in slot_order]
            metadata = metadata_base | {"version": assignment, "source": model.attested}
            metadata["subcategory"] = subcategory
            people = {"T": _answering(plan, target, "T", assignment, values, rewrite)}
            people["O"] = _answering(plan, other, "O", assignment, values, rewrite)
            mentioned = _as_mentioned(people, by_attribute)
            shared_ambiguous = plan.ambiguous_source[(combo_index, assignment)] != combo_index
            roles = _roles_of_slots(plan, assignment)
            for mention, rendering in enumerate(plan.renderings):
                context_order = (
                    roles[rendering.first_slot],
                    "O" if roles[rendering.first_slot] == "T" else "T",
                )
                evidence_order = (
                    context_order
                    if rendering.evidence_order is None
                    else (roles[rendering.evidence_order[0]], roles[rendering.evidence_order[1]])
                )
                ambiguous = rewrite(rendering.ambiguous.fill(values))
                disambiguating = rewrite(rendering.disambiguating.fill(values))
                first, second = (mentioned[role].text for role in evidence_order)
                found = rationale.find_evidence(disambiguating, first, second, project.lang)
                unsettled = rationale.unsettled(found, disambiguating, project.lang)
                if unsettled is not None and unsettled not in reported_unsettled:
                    reported_unsettled.add(unsettled)
                    problems.append(_unsettled_problem(template, unsettled, disambiguating, as_written))
                for condition in CONDITIONS:
                    if condition == "ambig" and (shared_ambiguous or mention):
                        # an earlier combo made these ambiguous rows; and the exchanged mention order
                        # of one slot assignment shows the ambiguous context of the other
                        continue
                    context = ambiguous if condition == "ambig" else join_contexts(ambiguous, disambiguating)
                    for polarity in POLARITIES:
                        question = rewrite(plan.questions[polarity].fill(values))
                        qkey = "|".join(
                            (model.id, target.key, other.key, *words, assignment, condition, polarity)
                        )
                        unknown = unknowns[stable_hash(seed, "unknown", qkey) % len(unknowns)]
                        if model.both_orders:
                            qkey += f"|mention{mention}"
                        gold_role = "U" if condition == "ambig" else _gold_role(plan, polarity, assignment)
                        answer_text = unknown if gold_role == "U" else people[gold_role].option
                        predicate = _predicate(plan, polarity, values, question)
                        unfounded = condition == "disambig" and unsettled is not None
                        text = (
                            # no gold the context settles (B102): a build of one's own writes nothing; a
                            # release kept as written keeps its row, and the rationale says so
                            rationale.unsettled_rationale(answer_text, project.lang)
                            if unfounded
                            else _rationale(
                                plan,
                                condition,
                                polarity,
                                values,
                                found,
                                mentioned,
                                (context_order, evidence_order),
                                answer_text,
                                unknown,
                                predicate,
                                project.lang,
                            )
                        )
                        for problem in (
                            []
                            if unfounded
                            else rationale.verify_rationale(
                                text,
                                context=context,
                                question=question,
                                persons=(mentioned["T"].text, mentioned["O"].text),
                                answer=answer_text,
                                disambiguating=disambiguating if condition == "disambig" else None,
                                lang=project.lang,
                            )
                        ):
                            key = (condition, polarity, problem.reason)
                            if key not in reported:
                                reported.add(key)
                                problems.append(
                                    _rationale_problem(template, plan, condition, polarity, problem, text)
                                )
                        options = {"T": people["T"].option, "O": people["O"].option, "U": unknown}
                        info = {
                            "T": [people["T"].option, target.tag],
                            "O": [people["O"].option, other.tag],
                            "U": [unknown, "unknown"],
                        }
                        question_id = f"{model.id}-{stable_id(qkey)}"
                        shared = {
                            "template_id": model.id,
                            "question_index": model.id,
                            "category": model.category,
                            "subcategory": subcategory,
                            "question_polarity": polarity,
                            "context_condition": condition,
                            "context": context,
                            "question": question,
                            "additional_metadata": metadata,
                            "context_bias": None
                            if condition == "ambig"
                            else _context_bias(polarity, gold_role),
                            "is_additional": model.origin == "added",
                            "fillers": fillers,
                            "rationale": text,
                        }
                        biased_role = "T" if polarity == "neg" else "O"
                        for order_index, (order, position) in enumerate(_ORDER_POSITIONS):
                            first, second, third = order
                            row = {
                                "example_id": f"{question_id}-{order_index}",
                                "ans0": options[first],
                                "ans1": options[second],
                                "ans2": options[third],
                                "label": position[gold_role],
                                "answer_info": {
                                    "ans0": info[first],
                                    "ans1": info[second],
                                    "ans2": info[third],
                                },
                                "target_label": position["T"],
                                "unknown_label": position["U"],
                                "biased_label": position[biased_role],
                            }
                            row.update(shared)
                            yield (condition, polarity, assignment, combo_index, mention, order), row


def _roles_of_slots(plan: _Plan, assignment: str) -> dict[str, str]:
    """Person slot → the role (T: target, O: other person) of whoever fills it in ``assignment``."""
    model = plan.model
    in_place = assignment == "a"
    return {model.target_slot: "T" if in_place else "O", model.other_slot: "O" if in_place else "T"}


def _as_mentioned(people: dict[str, Person], by_attribute: bool) -> dict[str, Person]:
    """The persons as the rationale finds them in the context: by their attributes when they share the
    group filler (an intersectional pair of one group)."""
    if not by_attribute:
        return people
    return {role: Person(p.attribute or p.text, p.option, p.tag) for role, p in people.items()}


def _answering(
    plan: _Plan, person: Person, role: str, assignment: str, values: dict, rewrite: Callable[[str], str]
) -> Person:
    """The person with the option wording of the slot it fills in this assignment, when the template
    words its answers itself."""
    model = plan.model
    in_target_slot = (role == "T") == (assignment == "a")
    wording = plan.answers.get(model.target_slot if in_target_slot else model.other_slot)
    if wording is None:
        return person
    return Person(person.text, rewrite(wording.fill(values)), person.tag, person.attribute)


def _predicate(plan: _Plan, polarity: str, values: dict[str, str], question: str) -> str | None:
    compiled = plan.predicates[polarity]
    if compiled is not None:
        return compiled.fill(values)
    return rationale.derive_predicate(question)


def _rationale(
    plan: _Plan,
    condition: str,
    polarity: str,
    values: dict[str, str],
    found: list[rationale.Evidence],
    people: dict[str, Person],
    orders: tuple[tuple[str, str], tuple[str, str]],
    answer: str,
    unknown: str,
    predicate: str | None,
    lang: str,
) -> str:
    """``orders``: the roles in the order the ambiguous context mentions them, and in the order the
    evidence is quoted in (the order of the statements, where the template gives them); ``found``: the
    disambiguating context's evidence about the persons, taken in that order."""
    override = plan.overrides.get((polarity, condition))
    if override is not None:
        return override.fill(values | {"ANSWER": answer, "UNKNOWN": unknown})
    context_order, evidence_order = orders
    if condition == "ambig":
        first, second = (people[role] for role in context_order)
        return rationale.ambiguous_rationale(first.option, second.option, unknown, predicate, lang)
    first, second = (people[role] for role in evidence_order)
    names = {first.text: first.option, second.text: second.option}
    return rationale.disambiguated_rationale(found, (first.text, second.text), names, answer, predicate, lang)


def _rationale_problem(
    template: SourceTemplate, plan: _Plan, condition: str, polarity: str, problem, text: str
) -> Diagnostic:
    field = _QUESTION_FIELD[polarity]
    overridden = (polarity, condition) in plan.overrides
    key_path: KeyPath = ("rationale", field, condition) if overridden else ("disambiguating_context",)
    return template.diagnostic(
        key_path,
        "B101",
        f"{'hand-written' if overridden else 'derived'} rationale ({condition}, {polarity}): {problem.reason}"
        + (f": 「{problem.quote}」" if problem.quote else ""),
        hint="quote only verbatim context about one person in 「」, and end with the gold answer in 「」"
        if overridden
        else "give each person its own clause in the disambiguating context, or write a rationale override",
        severity=Severity.ERROR,
    )


def _unsettled_problem(
    template: SourceTemplate, reason: str, disambiguating: str, as_written: bool
) -> Diagnostic:
    """A disambiguated gold the context does not settle: an error, never a rationale made up for it; in
    an upstream item (``keep_as_written``, ``origin: translated``) a warning — the rows are the release's,
    and their rationale says the context does not settle them."""
    fix = (
        "give the disambiguating context a statement that names one person and settles the question "
        "(per-person `statements` that say different things of each person)"
    )
    return template.diagnostic(
        ("disambiguating_context",),
        "B102",
        f"the disambiguating context does not settle the gold person: {reason}: 「{disambiguating}」"
        + ("; an upstream item: its rows are kept, their rationale says so" if as_written else ""),
        hint=f"{fix}, or leave the upstream item out" if as_written else fix,
        severity=Severity.WARNING if as_written else Severity.ERROR,
    )


def _lite_choices(plan: _Plan, row: int) -> list[int]:
    """The combos a lite row may show: any; for an intersectional template, those of one contrast, the
    contrasts taking turns (so the twelve rows show each of them)."""
    if not plan.pairs:
        return list(range(len(plan.combos)))
    names = list(dict.fromkeys(name for _, _, name in plan.pairs))
    contrast = {(t, o): names.index(name) for t, o, name in plan.pairs}
    wanted = row % len(names)
    return [i for i, (t, o, _) in enumerate(plan.combos) if contrast[(t, o)] == wanted]


# Where the compiler orders the persons: in which disambiguated lite rows (k = 0, 1, 2 of a polarity)
# the rule "negative → the person mentioned last, non-negative → first" is right; a template takes
# these or their opposite (a hash bit of its id). Right in 3 of the 6, and in 1 or 2 of the 3 biased
# ones. (Ambiguous rows need no choice: the two slot assignments already put either person first.)
_LITE_RULE_RIGHT = {"neg": (True, True, False), "nonneg": (False, False, True)}


def _lite_mention(plan: _Plan, polarity: str, wanted: bool) -> int:
    """The mention order of a disambiguated lite row in which the order rule is right iff ``wanted``,
    read on the statements where the template gives them, else on the ambiguous context."""
    model = plan.model
    gold_slot = getattr(model.questions, _QUESTION_FIELD[polarity]).answer
    gold_first = wanted == (polarity == "nonneg")
    for m, rendering in enumerate(plan.renderings):
        first = rendering.evidence_order[0] if rendering.evidence_order else rendering.first_slot
        if (first == gold_slot) == gold_first:
            return m
    return 0  # the template fixes the order (a single disambiguating text, no symmetric mention)


def _lite_keys(plan: _Plan, seed: int) -> list[RowKey]:
    """Twelve rows per template: every cell, rotating gold and unknown positions, biased/counter 3/3,
    and (where the compiler orders the persons) both mention orders."""
    template_id = plan.model.id
    flip = bool(stable_hash(seed, "lite-mention", template_id) % 2) if plan.model.both_orders else False
    # 3 biased + 3 counter-biased disambiguated rows put the gold on the stereotyped person in 4 or in 2
    # of the 6; a template takes one pattern or its mirror (a hash bit of its id), so that "answer the
    # person of the stereotyped group" is not right in two thirds of every category's rows
    mirror = bool(stable_hash(seed, "lite-gold", template_id) % 2)
    keys: list[RowKey] = []
    for cell, (condition, polarity) in enumerate(itertools.product(CONDITIONS, POLARITIES)):
        for k in range(LITE_ROWS_PER_CELL):
            combos = _lite_choices(plan, cell * LITE_ROWS_PER_CELL + k)
            combo = combos[stable_hash(seed, "lite", template_id, condition, polarity, k) % len(combos)]
            slots: list[str | None] = [None, None, None]
            if condition == "ambig":
                assignment = ASSIGNMENTS[(k + cell) % 2]
                slots[k] = "U"
                target_at = (k + 1 + cell) % 3
                slots[target_at] = "T"
            else:
                wanted = _LITE_BIAS[_MIRRORED[polarity] if mirror else polarity][k]
                assignment = next(
                    a for a in ASSIGNMENTS if _context_bias(polarity, _gold_role(plan, polarity, a)) == wanted
                )
                gold = _gold_role(plan, polarity, assignment)
                slots[k] = gold
                slots[(k + 1) % 3] = "U"
            missing = [role for role in ROLES if role not in slots]
            order = tuple(slot if slot is not None else missing.pop(0) for slot in slots)
            mention = 0
            if plan.model.both_orders and condition == "disambig":
                mention = _lite_mention(plan, polarity, _LITE_RULE_RIGHT[polarity][k] != flip)
            keys.append((condition, polarity, assignment, combo, mention, order))  # type: ignore[arg-type]
    return keys


KIND = BbqKind()
