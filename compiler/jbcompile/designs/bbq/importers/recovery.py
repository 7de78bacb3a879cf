"""Recovering one template from its released rows (``import bbq-jsonl``): the rows of one person pair
and choice of words are an *instance*; each instance's persons are found in its texts and replaced by
slots, and the instances' texts are aligned: what still varies are the lexical slots.

Also what BBQ's generator got wrong in ``answer_info`` (a person whose words lie inside the other's)
and its word rewrites ("Latino woman" → "Latina woman"), undone so that the persons can be found.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from operator import methodcaller

from ....diagnostics import Diagnostic
from ....importers.align import Alignment, align
from ....importers.report import ImportReport
from ....templating import SLOT_PATTERN, join_contexts
from .common import BBQ_REWRITES, GENDER_WORDS, matches_group
from .rows import SourceRow

PERSON_SLOTS = ("NAME1", "NAME2")
FIELDS = ("ambiguous", "disambiguating", "negative", "non_negative")
ANSWER_FIELDS = ("answer_NAME1", "answer_NAME2")  # each person's option wording, with slots
# what to do when no instance of a template's rows can be used
NOT_RECOVERED = (
    "the template's other findings say why: correct those rows and import again, or write the template by "
    "hand"
)


# ------------------------------------------------------------------------------------------ persons


@dataclass(frozen=True)
class Person:
    text: str  # as in the context (answer_info)
    tag: str
    option: str  # as an answer option
    attribute: str | None = None  # intersectional rows: the second attribute's words, in their own slot

    @property
    def key(self) -> tuple[str, str | None, str]:
        return (self.text, self.attribute, self.tag)


# BBQ's rewrites of whole words (old, new), applied to every filled text. Where one hides a person's
# words ("Latino woman" → "Latina woman"), the import undoes it and the template's rewrites redo it.
WORD_REWRITES = tuple(
    (old, new) for old, new, when, _ in BBQ_REWRITES if when is None and re.fullmatch(r"[\w ]+", old)
)


def undo_word_rewrites(row: SourceRow, words: Collection[str]) -> tuple[SourceRow, list[dict[str, str]]]:
    """The row with each word rewrite undone whose old words start with a person's words (``words``)
    or hide one (BBQ left that option's answer_info empty), and those rewrites (as a template's
    ``rewrites`` entries) to put back."""
    undone = []
    for old, new in WORD_REWRITES:
        hidden = any(not row.persons[i] and new in row.options[i] for i in range(3))
        shown = any(new in text for text in (row.context, row.question, *row.options))
        if shown and (hidden or old.split(" ")[0] in words):
            row = rewrite_texts(row, methodcaller("replace", new, old))
            undone.append({"pattern": old, "replacement": new})
    return row, undone


def rewrite_texts(row: SourceRow, change: Callable[[str], str]) -> SourceRow:
    """The row with ``change`` applied to its context, question and options."""
    return replace(
        row,
        context=change(row.context),
        question=change(row.question),
        options=tuple(change(o) for o in row.options),  # type: ignore[arg-type]
    )


def person_words(rows: Iterable[SourceRow]) -> set[str]:
    """Every person's words in the rows' answer_info, and the group part of a compound tag."""
    words = {text for row in rows for text in row.persons if text}
    return words | {tag.rsplit("-", 1)[-1] for row in rows for tag in row.tags if "-" in tag}


def _persons(row: SourceRow, lang: str) -> tuple[Person, Person]:
    unknown = row.unknown_index
    found = [Person(row.persons[i], row.tags[i], row.options[i]) for i in range(3) if i != unknown]
    return _repaired(found[0], found[1], row.context, lang)


def _repaired(first: Person, second: Person, context: str, lang: str) -> tuple[Person, Person]:
    """The two persons, with what BBQ's generator got wrong in answer_info read off the options.

    It finds a person's option by a substring test, so a person whose word lies inside the other's
    ("male" in "female", "African" in "African American") gets the other's entry, and one its test misses
    (its option was rewritten, "Latino" → "Latina") gets ``["", ""]``. Then the broken person's text is
    the part of its option that the sound person's option does not share, and its tag is that text (or
    the gender it names), as BBQ tags a person it has no information about.
    """
    if first.text and second.text and (first.text, first.tag) != (second.text, second.tag):
        return first, second
    for sound, broken in ((first, second), (second, first)):
        if not occurrences(sound.option, sound.text, lang):
            continue  # its entry is not its own either
        text = _own_words(sound, broken, lang)
        if text and text != sound.text and occurrences(context, text, lang):
            fixed = Person(text, GENDER_WORDS.get(text.lower(), text), broken.option)
            return (sound, fixed) if sound is first else (fixed, sound)
    return first, second


def _own_words(sound: Person, broken: Person, lang: str) -> str | None:
    """The words of ``broken``'s option around which it matches ``sound``'s option with ``sound``'s text
    taken out ("The African man" → "The African American man" gives "African American"); else the words
    the two options do not share."""
    for start, end in occurrences(sound.option, sound.text, lang):
        before, after = sound.option[:start], sound.option[end:]
        middle = broken.option[len(before) : len(broken.option) - len(after)]
        if broken.option.startswith(before) and broken.option.endswith(after) and middle.strip():
            return middle.strip()
    ours, theirs = broken.option.split(" "), sound.option.split(" ")
    shorter = min(len(ours), len(theirs))
    lead = next((i for i in range(shorter) if ours[i] != theirs[i]), shorter)
    tail = 0
    while tail < shorter - lead and ours[-1 - tail] == theirs[-1 - tail]:
        tail += 1
    return " ".join(ours[lead : len(ours) - tail]) or None


def _is_stereotyped(tag: str, groups: Sequence[str]) -> bool:
    lowered = {g.lower() for g in groups}
    return matches_group(tag, groups) or any(part in lowered for part in re.split(r"[-_\s]+", tag.lower()))


def _names_group(person: Person, groups: Sequence[str]) -> bool:
    """The person belongs to a stereotyped group: by its tag, or (when tags are regions, as in BBQ's
    Nationality) by its own text."""
    return _is_stereotyped(person.tag, groups) or matches_group(person.text, groups)


def tagged_by_text(person: Person, groups: Sequence[str]) -> Person:
    """A stereotyped person whose tag is not a stereotyped group takes its own text as tag."""
    if _is_stereotyped(person.tag, groups) or not matches_group(person.text, groups):
        return person
    return Person(person.text, person.text, person.option)


def occurrences(text: str, needle: str, lang: str, plural: bool = False) -> list[tuple[int, int]]:
    """Where ``needle`` stands as whole words (``plural``: also before a plural "s", "optometrists")."""
    if not needle:
        return []
    if lang == "en":
        after = "(?=s?(?![A-Za-z0-9]))" if plural else "(?![A-Za-z0-9])"
        pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(needle)}{after}")
    else:
        pattern = re.compile(re.escape(needle))
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def substitute(text: str, persons: dict[str, str], lang: str, plural: Collection[str] = ()) -> str:
    """Replace each person's text by its slot; longer texts win where two overlap (man / woman). The
    slots in ``plural`` (attribute words) also match before a plural "s"."""
    spans: list[tuple[int, int, str]] = []
    for slot, needle in persons.items():
        spans.extend((start, end, slot) for start, end in occurrences(text, needle, lang, slot in plural))
    spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out, cursor = [], 0
    for start, end, slot in spans:
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append("{{" + slot + "}}")
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


# ---------------------------------------------------------------------------------------- instances


@dataclass
class Instance:
    """The rows of one person pair (and one choice of words) of one template."""

    ambiguous: str
    target: Person
    other: Person
    rows: list[SourceRow] = field(default_factory=list)
    disambiguating: str | None = None
    questions: dict[str, str] = field(default_factory=dict)  # polarity → question
    gold: dict[str, Person] = field(default_factory=dict)  # polarity → answer in the disambiguated context
    slots: dict[str, Person] = field(default_factory=dict)  # NAME1/NAME2 → person
    texts: dict[str, str] = field(default_factory=dict)  # field → text with person slots
    problem: Diagnostic | None = None

    def fail(self, row: SourceRow, code: str, message: str, hint: str) -> None:
        """The instance cannot be used (the first problem is kept); ``hint``: how to correct the rows."""
        if self.problem is None:
            self.problem = row.diagnostic(code, message, hint=hint)


def _separator(ambiguous: str) -> str:
    """What our compiler puts between the two contexts (one home: templating.join_contexts)."""
    return join_contexts(ambiguous, "x")[len(ambiguous) : -1]


def build_instances(
    rows: Sequence[SourceRow],
    groups: Sequence[str],
    lang: str,
    report: ImportReport,
    name: str,
    people: Callable[[SourceRow], tuple[Person, Person]] | None = None,
    is_target: Callable[[Person], bool] | None = None,
    attribute_slots: tuple[str, str] | None = None,
) -> list[Instance]:
    """The instances of one template's rows. ``people`` reads a row's two persons and ``is_target``
    tells the stereotyped one (defaults: answer_info as it is, a tag among ``groups``);
    ``attribute_slots`` name the slots of the persons' second attribute (intersectional rows)."""
    persons_of = people or (lambda row: _persons(row, lang))
    stereotyped = is_target or (lambda person: _names_group(person, groups))
    # BBQ may draw the same pair twice (a word only the disambiguating context uses differs): each
    # drawing is its own instance, so a key holds a list, one ambiguous row per polarity each.
    instances: dict[tuple, list[Instance]] = {}
    for row in rows:
        if row.condition != "ambig":
            continue
        first, second = persons_of(row)
        target_flags = (stereotyped(first), stereotyped(second))
        key = (row.version, frozenset([first.key, second.key]), row.context)
        drawn = instances.setdefault(key, [])
        instance = next((i for i in drawn if not _holds(i, row)), None)
        if instance is None:
            if target_flags == (True, False):
                target, other = first, second
            elif target_flags == (False, True):
                target, other = second, first
            else:
                target, other = first, second
            instance = Instance(row.context, target, other)
            drawn.append(instance)
            if target_flags[0] == target_flags[1]:
                instance.fail(
                    row,
                    "IM004",
                    f"cannot tell the stereotyped person: tags {first.tag!r} and {second.tag!r} "
                    f"vs stereotyped groups {list(groups)}",
                    "list exactly one of the two answer_info tags in additional_metadata.stereotyped_groups",
                )
        instance.rows.append(row)
        if row.label != row.unknown_index:
            instance.fail(
                row,
                "IM007",
                "an ambiguous row whose gold answer is not the unknown option",
                "point the label of an ambiguous row at its unknown option",
            )
    for row in rows:
        if row.condition != "disambig":
            continue
        first, second = persons_of(row)
        persons = frozenset([first.key, second.key])
        candidates = [
            drawn
            for (version, p, ctx), drawn in instances.items()
            if version == row.version and p == persons and row.context.startswith(ctx)
        ]
        if not candidates:
            report.add(
                name,
                row.diagnostic(
                    "IM006",
                    "no ambiguous row of the same persons starts this context",
                    hint="give the ambiguous row of these persons (same version and answer_info) whose "
                    "context this row's context begins with, and import again",
                ),
            )
            continue
        drawn = max(candidates, key=lambda d: len(d[0].ambiguous))
        instance = _drawing_of(drawn, row)
        instance.rows.append(row)
        rest = row.context[len(instance.ambiguous) :]
        separator = _separator(instance.ambiguous)
        if rest.startswith(separator):
            rest = rest[len(separator) :]
        elif separator == " ":
            instance.fail(
                row,
                "IM007",
                "the disambiguating context follows without a space; the compiler adds one",
                "put one space between the ambiguous and the disambiguating context of this row",
            )
        if instance.disambiguating is None:
            instance.disambiguating = rest
        elif instance.disambiguating != rest:
            instance.fail(
                row,
                "IM007",
                "the two disambiguated rows of one instance differ in context",
                "give the negative and the non-negative row of one pair of persons the same context",
            )
        if row.label == row.unknown_index:
            instance.fail(
                row,
                "IM007",
                "a disambiguated row whose gold answer is the unknown option",
                "point the label of a disambiguated row at the person the context says answers",
            )
        else:
            gold_text = row.options[row.label]
            gold = next((p for p in (instance.target, instance.other) if p.option == gold_text), None)
            if gold is None:  # the answer is worded unlike either person's option (found by fuzzing)
                instance.fail(
                    row,
                    "IM007",
                    f"the gold answer {gold_text!r} is neither person's option",
                    "point the label at one of the two persons' options",
                )
            else:
                instance.gold[row.polarity] = gold
    every = [instance for drawn in instances.values() for instance in drawn]
    for instance in every:
        for row in instance.rows:
            if instance.questions.setdefault(row.polarity, row.question) != row.question:
                instance.fail(
                    row,
                    "IM007",
                    f"the {row.polarity} rows of one instance ask different questions",
                    f"ask the same {row.polarity} question in the ambiguous and the disambiguated row",
                )
        shown = [p for row in instance.rows for p in persons_of(row)]
        for person in (instance.target, instance.other):
            options = {p.option for p in shown if p.key == person.key}
            if len(options) > 1:
                instance.fail(
                    instance.rows[0],
                    "IM007",
                    f"{person.text!r} is worded as {sorted(options)}",
                    "word this person's answer option the same way in each of the pair's rows",
                )
        _slot(instance, lang, attribute_slots)
    return every


def _holds(instance: Instance, row: SourceRow) -> bool:
    """The instance has a row of this condition and polarity already."""
    return any((r.condition, r.polarity) == (row.condition, row.polarity) for r in instance.rows)


def _drawing_of(drawn: Sequence[Instance], row: SourceRow) -> Instance:
    """Which drawing of a pair a disambiguated row belongs to: one without a row of its polarity yet,
    with the same disambiguating context or none so far; else the first (which reports the clash)."""
    rest = row.context[len(drawn[0].ambiguous) :].lstrip()
    free = [i for i in drawn if not _holds(i, row)]
    same = [i for i in free if i.disambiguating is not None and i.disambiguating.lstrip() == rest]
    fresh = [i for i in free if i.disambiguating is None]
    return (same or fresh or list(drawn))[0]


def _slot(instance: Instance, lang: str, attribute_slots: tuple[str, str] | None = None) -> None:
    """Name the persons by where the ambiguous context mentions them, and put slots into the texts
    (a person's attribute words into its attribute slot)."""
    if instance.problem is not None:
        return
    row = instance.rows[0]
    if (
        instance.disambiguating is None
        or set(instance.questions) != {"neg", "nonneg"}
        or set(instance.gold) != {"neg", "nonneg"}
    ):
        instance.fail(
            row,
            "IM007",
            "the template lacks one of its four rows (ambiguous/disambiguated × negative/non-negative)",
            "give each pair of persons all four rows",
        )
        return
    if (instance.target.text, instance.target.attribute) == (instance.other.text, instance.other.attribute):
        instance.fail(
            row,
            "IM004",
            f"both persons are written {instance.target.text!r}",
            "word the two persons' answer options differently",
        )
        return
    positions = {}
    for person in (instance.target, instance.other):
        found = occurrences(instance.ambiguous, person.text, lang)
        if not found:
            instance.fail(
                row,
                "IM006",
                f"person {person.text!r} (answer_info) does not occur in the ambiguous context",
                "mention both answering persons in the ambiguous context as their options word them",
            )
            return
        positions[person] = found[0][0]
    first, second = sorted((instance.target, instance.other), key=lambda p: positions[p])
    instance.slots = {"NAME1": first, "NAME2": second}
    parts: dict[str, dict[str, str]] = {}  # person slot → its slots and their words
    for (slot, person), attribute_slot in zip(
        instance.slots.items(), attribute_slots or ("", ""), strict=True
    ):
        parts[slot] = {slot: person.text}
        if attribute_slot and person.attribute:
            parts[slot][attribute_slot] = person.attribute
    persons = parts["NAME1"] | parts["NAME2"]
    plural = set(attribute_slots or ())
    instance.texts = {
        "ambiguous": substitute(instance.ambiguous, persons, lang, plural),
        "disambiguating": substitute(instance.disambiguating, persons, lang, plural),
        "negative": substitute(instance.questions["neg"], persons, lang, plural),
        "non_negative": substitute(instance.questions["nonneg"], persons, lang, plural),
    }
    for slot, person in instance.slots.items():
        answer = substitute(person.option, parts[slot], lang, plural)
        if "{{" + slot + "}}" in answer:
            instance.texts[f"answer_{slot}"] = answer


# ----------------------------------------------------------------------------------------- recovery


@dataclass
class Recovered:
    texts: dict[str, str]
    words: dict[str, list[str]]
    target_slot: str
    answers: dict[str, str]  # negative / non_negative → slot
    failed: list[Instance]
    notes: list[tuple[Instance, str]]


def _slot_of(instance: Instance, person: Person) -> str:
    return next(slot for slot, p in instance.slots.items() if p == person)


def recover(instances: Sequence[Instance]) -> Recovered | None:
    """One template that reproduces as many instances as possible (the others are listed as failed)."""
    usable = [i for i in instances if i.problem is None]
    failed = [i for i in instances if i.problem is not None]
    if not usable:
        return None
    answers_by_instance = {id(i): (_slot_of(i, i.gold["neg"]), _slot_of(i, i.gold["nonneg"])) for i in usable}
    majority = Counter(answers_by_instance.values()).most_common(1)[0][0]
    for instance in list(usable):
        if answers_by_instance[id(instance)] != majority:
            instance.fail(
                instance.rows[0],
                "IM007",
                "the answering persons sit in other slots than in the template's other instances",
                "check the labels of these rows: the other pairs of persons of this template answer the "
                "other way round",
            )
            usable.remove(instance)
            failed.append(instance)
    if majority[0] == majority[1]:
        for instance in usable:
            instance.fail(
                instance.rows[0],
                "IM007",
                "the same person answers both questions",
                "point the labels of the negative and the non-negative disambiguated row at different "
                "persons",
            )
        return None
    notes: list[tuple[Instance, str]] = []
    # Options become the slots' answer wordings when every instance's options contain its persons
    fields = FIELDS + (ANSWER_FIELDS if all(set(ANSWER_FIELDS) <= set(i.texts) for i in usable) else ())
    for attempt in range(5):  # drop instances whose variation reaches into the person slots, then realign
        alignments = {f: align([i.texts[f] for i in usable]) for f in fields}
        bad = _odd_instances(alignments.values())
        if not bad:
            break
        if attempt == 4 or len(bad) >= len(usable):
            for instance in usable:
                instance.fail(
                    instance.rows[0],
                    "IM006",
                    "the persons cannot be told from the varying words",
                    "the words that vary between these rows touch the persons' mentions: write the template "
                    "by hand from them",
                )
            return None
        for index in sorted(bad, reverse=True):
            instance = usable.pop(index)
            instance.fail(
                instance.rows[0],
                "IM006",
                "the persons are written differently in this instance's texts than in the template's other "
                "instances",
                "word the persons in these rows as the template's other rows do",
            )
            failed.append(instance)
    # One lexical slot per distinct way of varying: regions that always hold the same word share a slot.
    slot_of_vector: dict[tuple[str, ...], str] = {}
    names_by_field: dict[str, list[str]] = {}
    for f in fields:
        names = []
        for region in alignments[f].regions:
            vector = region.fills
            if vector not in slot_of_vector:
                slot_of_vector[vector] = f"WORD{len(slot_of_vector) + 1}"
            names.append(slot_of_vector[vector])
        names_by_field[f] = names
    words: dict[str, list[str]] = {}
    for vector, name in slot_of_vector.items():
        alternatives = [w for w, _ in Counter(vector).most_common()]
        alternatives = sorted(alternatives, key=vector.index)
        words[name] = alternatives
    targets = Counter(_slot_of(i, i.target) for i in usable)
    return Recovered(
        texts={f: alignments[f].template(names_by_field[f]) for f in fields},
        words=words,
        target_slot=targets.most_common(1)[0][0],
        answers={"negative": majority[0], "non_negative": majority[1]},
        failed=failed,
        notes=notes,
    )


def _odd_instances(alignments: Iterable[Alignment]) -> set[int]:
    """Instances that name the persons unlike most others inside a varying span (all, if none stands out).

    A varying span must not hold a person slot; where it does, the instances whose slots there differ
    from the majority are the odd ones. If every instance has the same slots there, the span cannot be
    a lexical slot at all, and every instance is returned.
    """
    odd: set[int] = set()
    for alignment in alignments:
        for region in alignment.regions:
            slots = [tuple(SLOT_PATTERN.findall(fill)) for fill in region.fills]
            if not any(slots):
                continue
            common, count = Counter(slots).most_common(1)[0]
            if count == len(slots):
                return set(range(len(slots)))
            odd.update(i for i, found in enumerate(slots) if found != common)
    return odd
