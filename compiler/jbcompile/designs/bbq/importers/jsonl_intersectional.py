"""``import bbq-jsonl`` on BBQ's intersectional files (Race_x_SES, Race_x_gender): released rows whose
persons carry two attributes, tagged ``lowSES-Black``, ``F-Black`` or ``lowSES-F-Black``.

A person is split into its group words (a race word, or a full name) and its attribute words (an
occupation or income, a gender word), each into its own slot. The template's texts are recovered from
the instances whose two persons differ in both (BBQ's ``intersectional_c``): only there does every word
belong to one slot. What that gives is the template row BBQ wrote, and it goes through the code of
``import bbq-templates`` (intersectional.py), with the persons of the released rows as
``--names-from`` gives them. Where BBQ's rewrites hide a person's words ("Latino woman" → "Latina
woman", "a" → "an" before a vowel) they are undone first; the template's rewrites put them back.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ....diagnostics import Diagnostic, Severity
from ....importers.draft import SourcesDraft
from ....importers.report import ImportReport
from .common import CsvRow, VocabEntry, matches_group
from .intersectional import (
    ATTRIBUTE_SLOTS,
    INTERSECTIONS,
    OPPOSITE,
    RACE_CATEGORY,
    TEXT_COLUMNS,
    Skip,
    templates_from_texts,
)
from .names import is_target, released_names
from .recovery import (
    NOT_RECOVERED,
    Instance,
    Person,
    Recovered,
    build_instances,
    occurrences,
    recover,
    rewrite_texts,
    undo_word_rewrites,
)
from .rows import SourceRow

GENDER_TAGS = {"M", "F"}  # attribute tags that make the attribute slots GEN1/GEN2 (else OCC1/OCC2)
_A_BEFORE = r"(\s[aA])n(\s)(?={}(?![A-Za-z0-9]))"  # BBQ's "a" → "an", undone before one person's words


def is_intersectional(rows: Sequence[SourceRow]) -> bool:
    """The rows' persons carry a second attribute: a three-part tag, or a pair whose tags share the
    group (last part) and differ in the attribute (first part). Race_ethnicity's name tags (``F-Black``)
    never differ in the first part alone."""
    for row in rows:
        tags = [row.tags[i] for i in range(3) if i != row.unknown_index and row.tags[i]]
        parts = [tag.split("-") for tag in tags]
        if any(len(p) >= 3 for p in parts):
            return True
        pair = len(parts) == 2 and all(len(p) == 2 for p in parts)
        if pair and parts[0][-1] == parts[1][-1] and parts[0][0] != parts[1][0]:
            return True
    return False


@dataclass(frozen=True)
class KnownPersons:
    """What the sound persons of every input row say about a person's words, to read a person BBQ left
    without answer_info: a name's gender-and-race tag part, an attribute word's tag."""

    names: dict[str, str]  # full name → "M-Black"
    attributes: dict[str, str]  # attribute words → "lowSES" / "F"
    groups: frozenset[str]  # race words


def known_persons(rows: Sequence[SourceRow]) -> KnownPersons:
    """Read once over the whole input: a name found empty in one file may be sound in another."""
    names: dict[str, str] = {}
    attributes: dict[str, str] = {}
    groups: set[str] = set()
    for row in rows:
        for i in range(3):
            text, tag = row.persons[i], row.tags[i]
            parts = tag.split("-")
            if i == row.unknown_index or not text or len(parts) < 2:
                continue
            group, attribute = _split(text, tag, row.context)
            if group == parts[-1]:
                groups.add(group)
            elif len(parts) == 3 or attribute is None:
                names.setdefault(group, "-".join(parts[1:]) if len(parts) == 3 else tag)
            if attribute is not None:
                attributes.setdefault(attribute, parts[0])
    return KnownPersons(names, attributes, frozenset(groups))


def _found(text: str, needle: str, plural: bool = False) -> bool:
    return bool(occurrences(text, needle, "en", plural))


def _split(text: str, tag: str, context: str) -> tuple[str, str | None]:
    """(group words, attribute words) of an answer_info text: "Hispanic judge" tagged highSES-Hispanic
    → (Hispanic, judge); "Jo Doe dentist" tagged highSES-F-Black → the split whose two parts both stand
    in the context; a name tagged F-Black carries both attributes → (name, None)."""
    parts = tag.split("-")
    if len(parts) < 2:
        return text, None
    if text.startswith(parts[-1] + " "):
        return parts[-1], text[len(parts[-1]) + 1 :]
    if len(parts) == 2:
        return text, None
    words = text.split(" ")
    for cut in range(1, len(words)):
        group, attribute = " ".join(words[:cut]), " ".join(words[cut:])
        if _found(context, group) and _found(context, attribute, plural=True):
            return group, attribute
    return text, None


def _recovered(row: SourceRow, index: int, known: KnownPersons) -> tuple[str, str] | None:
    """(text, tag) of a person BBQ left without answer_info (``["", ""]``: its test missed the option BBQ
    had rewritten), read off its option by the wording of the other person's option."""
    sound = next(i for i in range(3) if i not in (index, row.unknown_index))
    text, tag = row.persons[sound], row.tags[sound]
    if not text or not tag:
        return None
    group, attribute = _split(text, tag, row.context)
    wording = re.escape(row.options[sound])
    for words in sorted(filter(None, (group, attribute)), key=len, reverse=True):
        wording = wording.replace(re.escape(words), "(?P<g>.+?)" if words == group else "(?P<a>.+?)", 1)
    match = re.fullmatch(wording, row.options[index])
    if match is None:
        return None
    their_group = match.group("g") if "(?P<g>" in wording else None
    their_attribute = match.group("a") if "(?P<a>" in wording else None
    if not their_group:
        return None
    parts = tag.split("-")
    if their_group in known.groups:
        kin = their_group
    elif their_group in known.names:
        kin = known.names[their_group]
    elif row.subcategory == INTERSECTIONS["same_group"]:  # BBQ's label: the same race (and gender)
        kin = "-".join(parts[1:])
    else:
        return None
    if their_attribute is None:
        return (their_group, kin) if kin != their_group else None
    if their_attribute == attribute:
        attribute_tag = parts[0]
    else:
        attribute_tag = known.attributes.get(their_attribute) or OPPOSITE.get(parts[0], "")
    if not attribute_tag:
        return None
    return f"{their_group} {their_attribute}", f"{attribute_tag}-{kin}"


def normalized_rows(rows: Sequence[SourceRow], known: KnownPersons) -> list[SourceRow]:
    """The rows with BBQ's word rewrites undone and each empty answer_info read off the options."""
    groups = set(known.groups) | {t.split("-")[-1] for row in rows for t in row.tags if "-" in t}
    out = []
    for row in rows:
        row, _ = undo_word_rewrites(row, groups)
        persons, tags = list(row.persons), list(row.tags)
        shown = [i for i in range(3) if i != row.unknown_index]
        if (persons[shown[0]], tags[shown[0]]) == (persons[shown[1]], tags[shown[1]]):
            for i in shown:  # BBQ gave both the entry of the one whose words lie inside the other's
                group, attribute = _split(persons[i], tags[i], row.context)
                shows = _found(row.options[i], group) and (
                    not attribute or _found(row.options[i], attribute, True)
                )
                if not shows:
                    persons[i], tags[i] = "", ""
        row = replace(row, persons=tuple(persons), tags=tuple(tags))  # type: ignore[arg-type]
        for i in range(3):
            if i != row.unknown_index and (not persons[i] or not tags[i]):
                found = _recovered(row, i, known)
                if found is not None:
                    persons[i], tags[i] = found
        row = replace(row, persons=tuple(persons), tags=tuple(tags))  # type: ignore[arg-type]
        for i in range(3):
            if i == row.unknown_index or not persons[i]:
                continue
            for words in filter(None, _split(persons[i], tags[i], row.context)):
                if words[0] in "aeiouAEIOU":
                    pattern = re.compile(_A_BEFORE.format(re.escape(words)))
                    row = rewrite_texts(row, partial(pattern.sub, r"\1\2"))
        out.append(row)
    return out


def _people(row: SourceRow) -> tuple[Person, Person]:
    found = []
    for i in range(3):
        if i != row.unknown_index:
            group, attribute = _split(row.persons[i], row.tags[i], row.context)
            found.append(Person(group, row.tags[i], row.options[i], attribute))
    return found[0], found[1]


def _clear(row: SourceRow) -> bool:
    """Both persons read, and different in both their group and their attribute words: every word of
    the row's texts then belongs to one slot."""
    if any(not row.persons[i] or not row.tags[i] for i in range(3) if i != row.unknown_index):
        return False
    first, second = _people(row)
    return first.text != second.text and (first.attribute != second.attribute or first.attribute is None)


def _person_slots(target_slot: str, slots: tuple[str, str] | None) -> dict[str, tuple[str, str | None]]:
    """role → (person slot, attribute slot) in a recovered template."""
    other_slot = "NAME2" if target_slot == "NAME1" else "NAME1"
    attribute = dict(zip(("NAME1", "NAME2"), slots or (None, None), strict=True))
    return {"target": (target_slot, attribute[target_slot]), "other": (other_slot, attribute[other_slot])}


def _values(instance: Instance, roles: dict[str, tuple[str, str | None]]) -> dict[str, str]:
    values = {}
    for role, person in (("target", instance.target), ("other", instance.other)):
        slot, attribute_slot = roles[role]
        values[slot] = person.text
        if attribute_slot and person.attribute:
            values[attribute_slot] = person.attribute
    return values


def _matches(template: str, text: str, values: dict[str, str], words: dict[str, list[str]]) -> bool:
    """``text`` is ``template`` filled with ``values`` and some choice of its lexical slots' words."""
    pattern = []
    for part in re.split(r"(\{\{[A-Z0-9_]+\}\})", template):
        slot = part[2:-2] if part.startswith("{{") else None
        if slot in values:
            pattern.append(re.escape(values[slot]))
        elif slot in words:
            pattern.append("(?:" + "|".join(map(re.escape, words[slot])) + ")")
        else:
            pattern.append(".*?" if slot else re.escape(part))
    return re.fullmatch("".join(pattern), text) is not None


_RAW_FIELDS = {
    "ambiguous": lambda i: i.ambiguous,
    "disambiguating": lambda i: i.disambiguating,
    "negative": lambda i: i.questions.get("neg"),
    "non_negative": lambda i: i.questions.get("nonneg"),
}


def _settled(
    texts: dict[str, str],
    recovered: Recovered,
    clear: Sequence[Instance],
    sharing: Sequence[Instance],
    slots: tuple[str, str] | None,
) -> dict[str, str]:
    """The texts with each slot put back to its word where it only stood for a word that every clear
    instance happened to fill it with ("approached a man" where the other person is always a man):
    the instances whose persons share a word (BBQ's intersectional_a and _b) tell which it was."""
    roles = _person_slots(recovered.target_slot, slots)
    fillers: dict[str, set[str]] = {}
    for instance in clear:
        for slot, value in _values(instance, roles).items():
            fillers.setdefault(slot, set()).add(value)
    constant = {slot: next(iter(found)) for slot, found in fillers.items() if len(found) == 1}
    if not constant or not sharing:
        return texts
    settled = dict(texts)
    for field, raw in _RAW_FIELDS.items():
        # the build puts the target in either slot, so an instance may match either assignment
        swapped = {"target": roles["other"], "other": roles["target"]}
        cases = [(raw(i), (_values(i, roles), _values(i, swapped))) for i in sharing if raw(i) is not None]

        def score(template: str, cases=cases) -> int:
            return sum(
                any(_matches(template, text, values, recovered.words) for values in both)
                for text, both in cases
            )

        text = settled[field]
        spans = [m for m in re.finditer(r"\{\{([A-Z0-9_]+)\}\}", text) if m.group(1) in constant]
        for match in reversed(spans):  # from the end, so that earlier spans keep their offsets
            literal = text[: match.start()] + constant[match.group(1)] + text[match.end() :]
            if score(literal) > score(text):
                text = literal
        settled[field] = text
    return settled


def _swapped(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    table = {f"{{{{{a}}}}}": f"{{{{{b}}}}}" for a, b in pairs} | {
        f"{{{{{b}}}}}": f"{{{{{a}}}}}" for a, b in pairs
    }
    return re.sub(r"\{\{[A-Z0-9_]+\}\}", lambda m: table.get(m.group(0), m.group(0)), text)


def import_intersectional_rows(
    category: str,
    question_index: str,
    rows: Sequence[SourceRow],
    known: KnownPersons,
    draft: SourcesDraft,
    report: ImportReport,
    name: str,
) -> None:
    """One question of the intersectional files into the draft: its templates (one per stereotyped
    person when the persons are names) reproduce its rows together; the report says what came of it."""
    released, rows = rows, normalized_rows(rows, known)
    first = rows[0]
    findings: list[Diagnostic] = []

    def finish(templates: Sequence[dict[str, Any]]) -> None:
        entry = report.template(templates[0]["id"] if templates else name, f"{category}/{question_index}")
        entry.rows += len(released)
        entry.findings.extend(findings)
        if not templates:
            entry.findings.append(
                first.diagnostic(
                    "IM007", "no template could be recovered from these rows", hint=NOT_RECOVERED
                )
            )
        for template in templates:
            draft.add_template(template)
        for row in released:
            row.templates = tuple(template["id"] for template in templates)

    groups = list(dict.fromkeys(g for row in rows for g in row.stereotyped))
    people = [p for row in rows if all(row.persons[i] for i in range(3)) for p in _people(row)]
    attributes = Counter(p.tag.split("-")[0] for p in people if matches_group(p.tag.split("-")[-1], groups))
    if not attributes:
        findings.append(
            first.diagnostic(
                "IM004",
                f"no person of the stereotyped groups {groups}",
                hint="end the stereotyped persons' answer_info tags with a group of "
                "additional_metadata.stereotyped_groups (as 'lowSES-Black'), and import again",
            )
        )
        return finish([])
    var2 = attributes.most_common(1)[0][0]
    attribute_tags = {p.tag.split("-")[0] for p in people}
    other = next((t for t in sorted(attribute_tags) if t != var2), OPPOSITE.get(var2, f"non{var2}"))
    has_attribute = any(p.attribute for p in people)
    slots = (
        next(s for s in ATTRIBUTE_SLOTS if (s[0] == "GEN1") == (var2 in GENDER_TAGS))
        if has_attribute
        else None
    )
    scratch = ImportReport()

    def instances_of(subset: Sequence[SourceRow], report: ImportReport) -> list[Instance]:
        return build_instances(
            subset,
            groups,
            "en",
            report,
            name,
            people=_people,
            is_target=lambda person: is_target(person.tag, groups, var2),
            attribute_slots=slots,
        )

    instances = instances_of([row for row in rows if _clear(row)], scratch)
    findings += scratch.diagnostics
    recovered = recover(instances)
    findings += [  # the round trip tells whether the template reproduces their rows all the same
        replace(
            i.problem,
            severity=Severity.INFO,
            message=f"{i.problem.message}; this instance is not used for the template's texts",
        )
        for i in instances
        if i.problem is not None
    ]
    if recovered is None or not all(f"answer_{s}" in recovered.texts for s in ("NAME1", "NAME2")):
        findings.append(
            first.diagnostic(
                "IM047",
                "no template text could be recovered from the rows whose persons differ in both attributes"
                + ("" if recovered is None else " (the answer options do not name the persons)"),
                hint="the texts come from the rows whose persons differ in race and in the second attribute, "
                "their answer options naming the persons: correct those rows and import again, or write "
                "the template by hand",
            )
        )
        return finish([])
    texts, answers = recovered.texts, recovered.answers
    sharing = instances_of([row for row in rows if not _clear(row)], ImportReport())
    texts = _settled(texts, recovered, [i for i in instances if i.problem is None], sharing, slots)
    if recovered.target_slot != "NAME1":  # BBQ's template rows put the stereotyped person in NAME1
        pairs = [("NAME1", "NAME2"), *([slots] if slots else [])]
        texts = {key: _swapped(text, pairs) for key, text in texts.items()}
        texts["answer_NAME1"], texts["answer_NAME2"] = texts["answer_NAME2"], texts["answer_NAME1"]
        answers = {key: "NAME2" if slot == "NAME1" else "NAME1" for key, slot in answers.items()}
    proper = any(p.text != p.tag.split("-")[-1] for p in people)
    mine = list(dict.fromkeys(p.attribute for p in people if p.attribute and p.tag.startswith(f"{var2}-")))
    theirs = list(
        dict.fromkeys(p.attribute for p in people if p.attribute and not p.tag.startswith(f"{var2}-"))
    )
    cells = {
        "Q_id": question_index,
        "Category": category,
        "Ambiguous_Context": texts["ambiguous"],
        "Disambiguating_Context": texts["disambiguating"],
        "Question_negative_stereotype": texts["negative"],
        "Question_non_negative": texts["non_negative"],
        "Answer_negative": texts[f"answer_{answers['negative']}"],
        "Answer_non_negative": texts[f"answer_{answers['non_negative']}"],
        "Known_stereotyped_race": json.dumps(groups),
        "Known_stereotyped_var2": var2,
        "Names": json.dumps([mine, theirs]) if mine and theirs else "",
        "Var2_info": json.dumps([var2, other]),
        "Proper_nouns_only": "TRUE" if proper else "FALSE",
        "Notes": first.source or "",
    }
    template_row = CsvRow(first.path, first.line, cells)
    vocabulary = [VocabEntry(RACE_CATEGORY, "", p.text, p.text) for p in people if not proper]
    names = released_names(rows, category, {question_index: var2}) if proper else {}
    if proper and not names.get(question_index, None):
        findings.append(
            first.diagnostic(
                "IM047",
                "no row names its persons so that they can be told apart",
                hint="tag exactly one person of each row (answer_info) with the second attribute and a "
                "stereotyped group (as 'lowSES-F-Black'), and import again; or write the template by hand",
            )
        )
        return finish([])
    try:
        made = templates_from_texts(
            template_row,
            {column: cells[column] for column in TEXT_COLUMNS},
            recovered.words,
            category,
            vocabulary,
            (),
            draft,
            report,
            names.get(question_index),
        )
    except Skip as skip:
        findings.append(
            first.diagnostic(
                skip.code,
                skip.message,
                hint="write the template by hand from these rows (the template row recovered from them: "
                f"{skip.hint})",
            )
        )
        return finish([])
    findings.append(
        first.diagnostic(
            "IM048",
            f"intersectional rows (second attribute {var2!r} vs {other!r}): the texts come from "
            f"{len([i for i in instances if i.problem is None])} instances whose persons differ in both "
            "attributes",
            Severity.INFO,
        )
    )
    finish(made)
