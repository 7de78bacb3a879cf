"""BBQ's two intersectional template files (``Race_x_SES``, ``Race_x_gender``) → ``bbq`` templates whose
persons carry two attributes.

BBQ makes these rows with a generator of their own. A person is a race word ({{NAME1}}) together with a
second attribute in its own slot — an occupation or income word ({{OCC1}}) or a gender word ({{GEN1}}) —
and each target person is contrasted with three kinds of other person: the same race word with the other
attribute, another race word with the same attribute word, and both different. That is the template's
``attribute`` and ``intersections`` (BBQ's subcategories ``intersectional_a``/``_b``/``_c`` are the rows'
subcategories). Proper-name templates pair full names (first name + a last name of its ethnicity); BBQ
draws them at random from hundreds of thousands of combinations, so the import takes a seeded sample of
the same shape and says so — or, given BBQ's released rows (``--names-from``), one template per
stereotyped person those rows name, paired with exactly the persons they pair it with (names.py).
Those rows are for the English side only and are marked to be rewritten without names.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ....diagnostics import Diagnostic, Severity
from ....importers.draft import DraftFiller, SourcesDraft, slug
from ....importers.report import ImportReport
from ....templating import SLOT_PATTERN, stable_hash
from .common import (
    BBQ_REWRITES,
    PROPER_NAMES_FILE,
    PROPER_NAMES_REVIEW,
    SWAPPED_FIELDS,
    CsvRow,
    ProperName,
    VocabEntry,
    bbq_lists,
    bbq_rewrites,
    empty_cells,
    literal_braces,
)
from .draft import DraftTemplate
from .names import Recover, ReleasedNames, released_names
from .rows import SourceRow

# The columns that make a template file intersectional (instead of Known_stereotyped_groups).
MARKER_COLUMNS = ("Known_stereotyped_race", "Known_stereotyped_var2")
TEXT_COLUMNS = SWAPPED_FIELDS  # the contexts, the questions and the answer columns
REQUIRED = ("Q_id", *TEXT_COLUMNS, *MARKER_COLUMNS)
KNOWN = {*REQUIRED, "Category", "Names", "Var2_info", "Lexical_diversity", "Proper_nouns_only"}
KNOWN |= {"Stated_gender_info", "Relevant_social_values", "Notes", "needs_val"}
# The attribute slots BBQ fills with the second attribute (it fills both kinds with the same word).
ATTRIBUTE_SLOTS = (("GEN1", "GEN2"), ("OCC1", "OCC2"))
# BBQ's labels of the three contrasts, kept as the rows' subcategories.
INTERSECTIONS = {
    "same_group": "intersectional_a",
    "same_attribute": "intersectional_b",
    "both_differ": "intersectional_c",
}
RACE_CATEGORY = "Race_ethnicity"  # vocabulary.csv rows of the race words
SES_CATEGORY = "SES"  # vocabulary.csv rows of the occupations
OPPOSITE = {"M": "F", "F": "M", "lowSES": "highSES", "highSES": "lowSES"}
BBQ_TARGET_WORDS = 4  # up to this many stereotyped race words, BBQ uses them all (else it draws five)
SAMPLED_TARGETS = 5  # proper names per template, as BBQ draws
SAMPLED_OTHERS = 5  # other names per kind of contrast, as BBQ draws
SAMPLED_ATTRIBUTES = 2  # attribute words per side in a proper-name template (keeps its rows BBQ-sized)


def is_intersectional(columns: Sequence[str]) -> bool:
    """A file without Known_stereotyped_groups but with either marker column (a missing one is then
    reported); a single-category file with a stray marker column stays single-category."""
    return "Known_stereotyped_groups" not in columns and any(column in columns for column in MARKER_COLUMNS)


class Skip(Exception):
    """A template row that cannot come in: its diagnostic code, what is wrong and how to correct it."""

    def __init__(self, code: str, message: str, hint: str):
        self.code, self.message, self.hint = code, message, hint


@dataclass(frozen=True)
class _Side:
    """One person slot's fillers: the group words or names (with tags) and the attribute words."""

    group: tuple[DraftFiller, ...]
    group_tag: str
    attributes: tuple[DraftFiller, ...]
    attribute_tag: str
    contrasts: frozenset[str] | None = None  # a target's: the intersections its rows show (None: all)


def import_intersectional_file(
    rows: list[CsvRow],
    columns: Sequence[str],
    category: str,
    vocabulary: Sequence[VocabEntry],
    proper_names: Sequence[ProperName],
    draft: SourcesDraft,
    report: ImportReport,
    released_rows: Sequence[SourceRow] = (),
) -> None:
    """Every template row of one intersectional file into the draft; what cannot come in is reported.
    ``released_rows`` (``--names-from``) give the proper-name templates the persons they name."""
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        report.add(
            None,
            Diagnostic(
                code="IM040",
                message=f"intersectional file without the columns {', '.join(missing)}; file skipped",
                path=rows[0].path if rows else None,
                line=1,
                col=1,
                hint="give BBQ's intersectional template file as released (its header row included)",
            ),
        )
        report.template(f"{category} (file)").rows += sum(1 for r in rows if r.get("Ambiguous_Context"))
        return
    ignored = [c for c in columns if c not in KNOWN and any(r.get(c) for r in rows)]
    if ignored and rows:
        report.add(
            None,
            rows[0].diagnostic(
                "IM012",
                f"columns with no place in the format were not imported: {', '.join(ignored)}",
                Severity.WARNING,
            ),
        )
    var2 = {row.get("Q_id"): row.get("Known_stereotyped_var2") for row in rows}
    if released_rows:
        by_question = {row.get("Q_id"): row for row in rows if row.get("Ambiguous_Context")}
        recover = _recoverer(by_question, vocabulary, proper_names)
        released = released_names(released_rows, category, var2, recover)
    else:
        released = {}
    for row in rows:
        if not row.get("Ambiguous_Context"):
            continue  # BBQ skips rows without a context as well
        upstream = f"{category}/{row.get('Q_id')}"
        empty = empty_cells(row, ("Q_id", *TEXT_COLUMNS[1:]))
        if empty is not None:
            report.add(upstream, empty)
            report.template(upstream).rows += 1
            continue
        try:
            texts, words = _words(row, {column: row.get(column) for column in TEXT_COLUMNS})
            names = released.get(row.get("Q_id"))
            made = templates_from_texts(
                row, texts, words, category, vocabulary, proper_names, draft, report, names
            )
        except Skip as skip:
            report.add(upstream, row.diagnostic(skip.code, skip.message, hint=f"{skip.hint}, and re-import"))
            report.template(upstream).rows += 1
            continue
        for index, template in enumerate(made):
            entry = report.template(template["id"], upstream)
            entry.rows += index == 0  # one template row, however many templates it became
            entry.reproduced += index == 0
            draft.add_template(template)


def templates_from_texts(
    row: CsvRow,
    texts: dict[str, str],
    words: dict[str, list[str]],
    category: str,
    vocabulary: Sequence[VocabEntry],
    proper_names: Sequence[ProperName],
    draft: SourcesDraft,
    report: ImportReport,
    names: ReleasedNames | None = None,
) -> list[dict[str, Any]]:
    """The templates of one intersectional template row whose texts and lexical slots are read already
    (from the CSV, or recovered from released rows by ``import bbq-jsonl``); raises Skip."""
    races = _string_list(row, "Known_stereotyped_race")
    var2 = row.get("Known_stereotyped_var2")
    if not races or not var2:
        raise Skip(
            "IM041",
            "Known_stereotyped_race or Known_stereotyped_var2 is empty: no target person",
            "fill both columns (the stereotyped races as a list, the second attribute's stereotyped value)",
        )
    braces: list[dict[str, str]] = []
    for column, text in texts.items():
        texts[column], found = literal_braces(text)
        braces += found
    used = {m.group(1) for text in texts.values() for m in SLOT_PATTERN.finditer(text)}
    attribute_slots = next((pair for pair in ATTRIBUTE_SLOTS if pair[0] in used or pair[1] in used), None)
    proper = row.get("Proper_nouns_only").upper() == "TRUE"
    unknown = used - {"NAME1", "NAME2", *words, *(attribute_slots or ())}
    if unknown:
        raise Skip(
            "IM042",
            f"the texts use slots with no values: {sorted(unknown)}",
            "give those slots words in Lexical_diversity, or take them out of the texts",
        )
    answers = [_answer_slot(texts[c]) for c in ("Answer_negative", "Answer_non_negative")]
    if None in answers or answers[0] == answers[1]:
        raise Skip(
            "IM042",
            "Answer_negative and Answer_non_negative must name {{NAME1}} and {{NAME2}} once each",
            "write {{NAME1}} in one of the two answer columns and {{NAME2}} in the other",
        )
    if proper and names is not None and names.targets:
        return _released_templates(
            row,
            category,
            texts,
            words,
            braces,
            races,
            var2,
            attribute_slots,
            vocabulary,
            names,
            draft,
            report,
        )
    if proper:
        if not any(n.first_last == "first" for n in proper_names):
            raise Skip(
                "IM043",
                f"a proper-name template needs {PROPER_NAMES_FILE} next to the template files",
                f"put BBQ's {PROPER_NAMES_FILE} next to the template files, or pass --names-from with the "
                "released rows of this category",
            )
        genders = [row.get("Stated_gender_info")] if row.get("Stated_gender_info") else ["F", "M"]
        if attribute_slots is None:  # the names carry the gender: the target's is Known_stereotyped_var2
            genders = [var2]
    else:
        genders = [""]
    keys = [f"{category}-{row.get('Q_id')}" + (f"-{g}" if len(genders) > 1 else "") for g in genders]
    sides = []  # every check passes before anything goes into the draft
    for key, gender in zip(keys, genders, strict=True):
        if proper:
            sides.append(
                _proper_sides(key, row, races, var2, gender, attribute_slots, vocabulary, proper_names)
            )
        elif attribute_slots is None:
            raise Skip(
                "IM042",
                "no {{GEN1}}/{{OCC1}} slot: the second attribute has nowhere to go",
                "mention the second attribute in the texts with {{GEN1}}/{{GEN2}} (gender) or "
                "{{OCC1}}/{{OCC2}} (occupation)",
            )
        else:
            sides.append(_word_sides(row, races, var2, vocabulary))
    made = []
    for key, (target, other) in zip(keys, sides, strict=True):
        name = draft.unique_template_id(slug(key))
        made.append(
            _template(name, row, category, texts, words, braces, races, target, other, attribute_slots, draft)
        )
        if len(target.group) > BBQ_TARGET_WORDS and not proper:
            report.add(
                name,
                row.diagnostic(
                    "IM046",
                    f"{len(target.group)} stereotyped race words: BBQ draws five and may pair two "
                    "stereotyped words; all are imported, each against the other words only, so "
                    "those pairs are not made",
                    Severity.WARNING,
                ),
            )
        if proper:
            report.add(
                name,
                row.diagnostic(
                    "IM044",
                    "BBQ draws full names (first name + a last name of its ethnicity) at random from "
                    "hundreds of thousands of pairs; a seeded sample of the same shape is imported "
                    f"({SAMPLED_TARGETS} target names, {SAMPLED_OTHERS} per kind of contrast), so BBQ's "
                    "rows with other names are not reproduced",
                    Severity.WARNING,
                ),
            )
    if proper and len(genders) > 1:
        report.add(
            made[0]["id"],
            row.diagnostic(
                "IM045",
                "no Stated_gender_info: BBQ pairs names of one gender, so the template is imported once per "
                f"gender ({', '.join(t['id'] for t in made)})",
                Severity.INFO,
            ),
        )
    return made


def _released_templates(
    row: CsvRow,
    category: str,
    texts: dict[str, str],
    words: dict[str, list[str]],
    braces: list[dict[str, str]],
    races: list[str],
    var2: str,
    attribute_slots: tuple[str, str] | None,
    vocabulary: Sequence[VocabEntry],
    names: ReleasedNames,
    draft: SourcesDraft,
    report: ImportReport,
) -> list[dict[str, Any]]:
    """One template per stereotyped person of the released rows (``-r1``, ``-r2`` …), with the persons
    those rows pair it with: every target × other would be millions of rows in Race_x_SES."""
    findings: list[Diagnostic] = list(names.unusable)
    sides: list[tuple[_Side, _Side]] = []
    if attribute_slots is None:  # Race_x_gender: the name's tag carries both attributes
        for target, partners in names.by_target():
            tag = names.tags[target]
            sides.append(
                (
                    _Side((DraftFiller(target, None, tag),), tag, (), var2),
                    _Side(
                        tuple(DraftFiller(o, None, names.tags[o]) for o in partners),
                        f"non{tag}",
                        (),
                        OPPOSITE.get(var2, f"non{var2}"),
                    ),
                )
            )
    else:  # Race_x_SES: answer_info gives "<full name> <occupation>", tagged "<SES>-<gender>-<ethnicity>"
        mine, theirs = _var2_lists(row, var2, vocabulary)
        split = _splitter([*mine, *theirs])
        for target, partners in names.by_target():
            persons = {text: split(text, names.tags[text]) for text in (target, *partners)}
            if None in persons.values():
                unsplit = [t for t, p in persons.items() if p is None]
                findings.append(
                    row.diagnostic(
                        "IM053",
                        f"the released persons {unsplit} do not end in an occupation of this template "
                        f"({len(mine) + len(theirs)} known) with a '<SES>-<gender>-<ethnicity>' tag; "
                        f"the rows of {target!r} are not rebuilt",
                        Severity.WARNING,
                    )
                )
                continue
            name, occupation, tag = persons[target]
            split_partners = [p for p in map(persons.get, partners) if p is not None]
            kin = {p[0]: tag for p in split_partners if p[2] == tag and p[0] != name}
            strangers = {p[0]: p[2] for p in split_partners if p[2] != tag}
            contrasts = [p[1] for p in split_partners if p[1] != occupation]
            shown = {"same_group"} if kin else set()  # without kin it would be paired with itself
            shown |= {
                "same_attribute" if p[1] == occupation else "both_differ"
                for p in split_partners
                if p[2] != tag
            }
            sides.append(
                (
                    _Side(_named({name: tag} | kin), tag, _fillers([occupation]), var2, frozenset(shown)),
                    _Side(
                        _named(strangers),
                        f"non{tag}",
                        _fillers(contrasts),
                        OPPOSITE.get(var2, f"non{var2}"),
                    ),
                )
            )
    made = []
    for index, (target_side, other_side) in enumerate(sides, 1):
        if not target_side.group or not other_side.group or (attribute_slots and not other_side.attributes):
            continue  # a person whose partners' rows were all unusable (reported above)
        name = draft.unique_template_id(slug(f"{category}-{row.get('Q_id')}-r{index}"))
        made.append(
            _template(
                name,
                row,
                category,
                texts,
                words,
                braces,
                races,
                target_side,
                other_side,
                attribute_slots,
                draft,
            )
        )
    if not made:
        for finding in findings:  # why none is usable
            report.add(f"{category}/{row.get('Q_id')}", finding)
        raise Skip(
            "IM054",
            "--names-from gives no usable rows of this proper-name template",
            "pass to --names-from the released file of this category, or leave --names-from out to draw "
            f"the names from {PROPER_NAMES_FILE}",
        )
    span = made[0]["id"] if len(made) == 1 else f"{made[0]['id']} … {made[-1]['id']}"
    report.add(
        made[0]["id"],
        row.diagnostic(
            "IM055",
            f"persons from the released rows (--names-from): {len(made)} template(s) ({span}), one "
            "per stereotyped person, each paired with the "
            f"persons its {len(names.pairs)} released pairs name",
            Severity.INFO,
        ),
    )
    for finding in findings:
        report.add(made[0]["id"], finding)
    return made


def _recoverer(
    rows: Mapping[str, CsvRow], vocabulary: Sequence[VocabEntry], proper_names: Sequence[ProperName]
) -> Recover:
    """Reads a person of a Race_x_SES proper-name row that BBQ left without answer_info off its option:
    the option is the template's answer wording filled with a full name and an occupation (after BBQ's
    rewrites); the tag is the occupation's SES with the first name's gender and ethnicity."""
    first = {n.name: n for n in proper_names if n.first_last == "first"}

    def recover(released: SourceRow, index: int) -> tuple[str, str] | None:
        row = rows.get(released.question_index)
        if row is None or row.get("Proper_nouns_only").upper() != "TRUE":
            return None
        var2 = row.get("Known_stereotyped_var2")
        try:
            mine, theirs = _var2_lists(row, var2, vocabulary)
        except Skip:
            return None
        for column in ("Answer_negative", "Answer_non_negative"):
            for word in (*mine, *theirs):
                name = _name_in(released.options[index], row.get(column), word)
                person = first.get(name.split(" ", 1)[0]) if name else None
                if name and person:
                    ses = var2 if word in mine else OPPOSITE.get(var2, f"non{var2}")
                    return f"{name} {word}", f"{ses}-{person.gender}-{person.ethnicity}"
        return None

    return recover


def _name_in(option: str, wording: str, word: str) -> str | None:
    """The name in ``option`` if it is ``wording`` (one name slot, one attribute slot) with ``word`` in
    the attribute slot, as BBQ's rewrites leave it; else None."""
    slots = [m.group(1) for m in SLOT_PATTERN.finditer(wording)]
    name_slot = next((slot for slot in slots if slot.startswith("NAME")), None)
    if name_slot is None or len(set(slots)) != 2:
        return None
    filled = SLOT_PATTERN.sub(lambda _: word, wording.replace("{{" + name_slot + "}}", "\0"))
    for pattern, replacement, _, _ in BBQ_REWRITES:
        filled = re.sub(pattern, replacement, filled)
    before, _, after = filled.partition("\0")
    if option.startswith(before) and option.endswith(after) and len(option) > len(before) + len(after):
        return option[len(before) : len(option) - len(after)]
    return None


def _named(tags: dict[str, str]) -> tuple[DraftFiller, ...]:
    """Full names as fillers, each tagged with its gender and ethnicity (``M-Black``)."""
    return tuple(DraftFiller(name, None, tag) for name, tag in tags.items())


def _splitter(attributes: Sequence[str]):
    """``"Jo Doe janitor"`` tagged ``lowSES-M-Black`` → (``Jo Doe``, ``janitor``, ``M-Black``); None when
    the text does not end in one of ``attributes`` or the tag has no attribute part."""
    longest = sorted(set(attributes), key=len, reverse=True)

    def split(text: str, tag: str) -> tuple[str, str, str] | None:
        word = next((w for w in longest if text.endswith(f" {w}") and len(text) > len(w) + 1), None)
        if word is None or tag.count("-") < 2:
            return None
        return text[: -len(word) - 1], word, tag.split("-", 1)[1]

    return split


def _string_list(row: CsvRow, column: str) -> list[str]:
    cell = row.get(column)
    if not cell:
        return []
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        raise Skip(
            "IM041", f"{column} is not a list: {cell!r}", f"write {column} as a list, e.g. ['a', 'b']"
        ) from None
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _words(row: CsvRow, texts: dict[str, str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Lexical slots read as BBQ reads them; WORD2 from a single word stays empty, as in BBQ's rows."""
    words: dict[str, list[str]] = {}
    if len(row.get("Lexical_diversity")) <= 1:  # BBQ fills words only when the cell has text
        return texts, words
    for slot, alternatives in bbq_lists(row.get("Lexical_diversity"), "WORD").items():
        unique = list(dict.fromkeys(a for a in alternatives if a))
        if slot == "WORD2" and len(alternatives) < 2:
            unique = [""]
        if len(unique) < 2:
            texts = {k: v.replace("{{" + slot + "}}", unique[0] if unique else "") for k, v in texts.items()}
        else:
            words[slot] = unique
    used = {m.group(1) for text in texts.values() for m in SLOT_PATTERN.finditer(text)}
    return texts, {slot: alternatives for slot, alternatives in words.items() if slot in used}


def _var2_lists(row: CsvRow, var2: str, vocabulary: Sequence[VocabEntry]) -> tuple[list[str], list[str]]:
    """The target's and the other person's attribute words: from Names (ordered as Var2_info), else the
    occupations of vocabulary.csv by their SES tag."""
    if row.get("Names"):
        try:
            names = ast.literal_eval(row.get("Names"))
            info = ast.literal_eval(row.get("Var2_info"))
            where = info.index(var2)
        except (ValueError, SyntaxError, AttributeError):
            raise Skip(
                "IM041",
                "Names and Var2_info must be two lists naming Known_stereotyped_var2",
                "write Names as two lists of words and Var2_info as the two values they stand for, one "
                f"of them {var2!r}",
            ) from None
        lists = [[n] if isinstance(n, str) else list(n) for n in names]
        return lists[where], lists[1 - where]
    occupations = [v for v in vocabulary if v.category == SES_CATEGORY]
    target = list(dict.fromkeys(v.name for v in occupations if v.info == var2))
    other = list(dict.fromkeys(v.name for v in occupations if v.info != var2))
    if not target or not other:
        raise Skip(
            "IM041",
            f"vocabulary.csv has no {var2} and other occupations for an empty Names cell",
            f"write the two lists of occupations into Names, or give vocabulary.csv {SES_CATEGORY} rows "
            f"whose Info is {var2} and others",
        )
    return target, other


def _word_sides(
    row: CsvRow, races: list[str], var2: str, vocabulary: Sequence[VocabEntry]
) -> tuple[_Side, _Side]:
    words = list(dict.fromkeys(v.name for v in vocabulary if v.category == RACE_CATEGORY))
    targets = [w for w in words if w in races]
    if not targets:
        raise Skip(
            "IM041",
            f"no race word of vocabulary.csv is in Known_stereotyped_race {races}",
            f"name in Known_stereotyped_race the {RACE_CATEGORY} words of vocabulary.csv, spelled as there",
        )
    others = [w for w in words if w not in races]
    if not others:
        raise Skip(
            "IM041",
            "every race word of vocabulary.csv is stereotyped: no other person",
            f"give vocabulary.csv a {RACE_CATEGORY} word that Known_stereotyped_race leaves out",
        )
    mine, theirs = _var2_lists(row, var2, vocabulary)
    tag = next(r for r in races if r in targets)  # names the groups: Race_x_SES-Black, -nonBlack
    return (
        _Side(tuple(DraftFiller(w, None, w) for w in targets), tag, _fillers(mine), var2),
        _Side(
            tuple(DraftFiller(w, None, w) for w in others),
            f"non{tag}",
            _fillers(theirs),
            OPPOSITE.get(var2, f"non{var2}"),
        ),
    )


def _fillers(words: Sequence[str]) -> tuple[DraftFiller, ...]:
    return tuple(DraftFiller(w) for w in dict.fromkeys(words))


def _proper_sides(
    template: str,
    row: CsvRow,
    races: list[str],
    var2: str,
    gender: str,
    attribute_slots: tuple[str, str] | None,
    vocabulary: Sequence[VocabEntry],
    proper_names: Sequence[ProperName],
) -> tuple[_Side, _Side]:
    """Full names for a proper-name template, sampled by a hash seeded with ``template`` (its id)."""
    first = [n for n in proper_names if n.first_last == "first"]
    last: dict[str, list[str]] = {}
    for n in proper_names:
        if n.first_last == "last":
            last.setdefault(n.ethnicity, []).append(n.name)

    def sample(pool: list[ProperName], count: int, salt: str) -> list[ProperName]:
        """``count`` names, spread over the ethnicities of the pool (each one before any twice)."""
        ranked = sorted(pool, key=lambda n: stable_hash(template, salt, n.name))
        rank = {n.name: sum(m.ethnicity == n.ethnicity for m in ranked[:i]) for i, n in enumerate(ranked)}
        return sorted(ranked, key=lambda n: (rank[n.name], n.ethnicity))[:count]

    def full(name: ProperName) -> DraftFiller | None:
        options = last.get(name.ethnicity)
        if not options:
            return None
        surname = options[stable_hash(template, "last", name.name) % len(options)]
        return DraftFiller(f"{name.name} {surname}", None, f"{name.gender}-{name.ethnicity}")

    pool = [n for n in first if n.ethnicity in races and n.gender == gender]
    # at least two names per ethnicity, so that a same-race pair exists for each
    targets = sample(pool, max(SAMPLED_TARGETS, 2 * len({n.ethnicity for n in pool})), "target")
    if not targets:
        raise Skip(
            "IM043",
            f"{PROPER_NAMES_FILE} has no {gender} first names of {races}",
            f"give {PROPER_NAMES_FILE} such first names (First_last: first), or pass --names-from with "
            "the released rows of this category",
        )
    different = [n for n in first if n.ethnicity not in races]
    if attribute_slots is None:  # names carry both attributes: sample the three contrasts
        others = sample(
            [n for n in first if n.ethnicity in races and n.gender != gender], SAMPLED_OTHERS, "a"
        )
        others += sample([n for n in different if n.gender == gender], SAMPLED_OTHERS, "b")
        others += sample([n for n in different if n.gender != gender], SAMPLED_OTHERS, "c")
        mine_attr: tuple[DraftFiller, ...] = ()
        theirs_attr: tuple[DraftFiller, ...] = ()
    else:
        others = sample([n for n in different if n.gender == gender], SAMPLED_OTHERS, "b")
        mine, theirs = _var2_lists(row, var2, vocabulary)
        mine_attr = _fillers(
            sorted(mine, key=lambda w: stable_hash(template, "attr", w))[:SAMPLED_ATTRIBUTES]
        )
        theirs_attr = _fillers(
            sorted(theirs, key=lambda w: stable_hash(template, "attr", w))[:SAMPLED_ATTRIBUTES]
        )
    target_names = tuple(f for f in map(full, targets) if f)
    other_names = tuple(f for f in map(full, others) if f)
    if not target_names or not other_names:
        raise Skip(
            "IM043",
            f"{PROPER_NAMES_FILE} has no last names for these first names",
            f"give {PROPER_NAMES_FILE} last names (First_last: last) of these first names' ethnicities",
        )
    tag = target_names[0].tag or gender
    return (
        _Side(target_names, tag, mine_attr, var2),
        _Side(other_names, f"non{tag}", theirs_attr, OPPOSITE.get(var2, f"non{var2}")),
    )


def _template(
    name: str,
    row: CsvRow,
    category: str,
    texts: dict[str, str],
    words: dict[str, list[str]],
    braces: list[dict[str, str]],
    races: list[str],
    target: _Side,
    other: _Side,
    attribute_slots: tuple[str, str] | None,
    draft: SourcesDraft,
) -> dict[str, Any]:
    negative, non_negative = (
        _answer_slot(texts[c]) or "" for c in ("Answer_negative", "Answer_non_negative")
    )
    stereotyped = list(races)
    for tag in sorted({f.tag or target.group_tag for f in target.group}):
        if tag not in stereotyped:
            stereotyped.append(tag)
    if attribute_slots is not None and target.attribute_tag not in stereotyped:
        stereotyped.append(target.attribute_tag)
    persons = [f.text for side in (target, other) for f in (*side.group, *side.attributes)]
    all_words = [w for alternatives in words.values() for w in alternatives]
    draft_template = DraftTemplate(
        id=name,
        category=category,
        subcategory=None,
        upstream=f"{category}/{row.get('Q_id')}",
        stereotype=row.get("Relevant_social_values")
        or f"{', '.join(races)}: {row.get('Question_negative_stereotype')}",
        stereotyped_groups=stereotyped,
        attested=row.get("Notes") or f"BBQ template {category}/{row.get('Q_id')}",
        target_slot="NAME1",
        other_slot="NAME2",
        target_group=draft.group_for(category, target.group_tag, target.group, None),
        other_group=draft.group_for(category, other.group_tag, other.group, None),
        words=words,
        ambiguous=texts["Ambiguous_Context"],
        disambiguating=texts["Disambiguating_Context"],
        negative=(texts["Question_negative_stereotype"], negative),
        non_negative=(texts["Question_non_negative"], non_negative),
        answers={negative: texts["Answer_negative"], non_negative: texts["Answer_non_negative"]},
        max_alternatives=max(3, *(len(a) for a in words.values())) if words else 3,
        rewrites=braces + bbq_rewrites([*texts.values(), *all_words, *persons], persons),
        review=PROPER_NAMES_REVIEW if row.get("Proper_nouns_only").upper() == "TRUE" else None,
    )
    data = draft_template.source(draft)
    if attribute_slots is None:
        return data
    attribute_groups = {
        "NAME1": draft.group_for(category, target.attribute_tag, target.attributes, None),
        "NAME2": draft.group_for(category, other.attribute_tag, other.attributes, None),
    }
    for person, slot in zip(("NAME1", "NAME2"), attribute_slots, strict=True):
        entry = data["persons"][person]
        entry["attribute"] = {"slot": slot, "group": attribute_groups[person]}
        if "answer" in entry:  # the answer wording last: it names both attributes
            entry["answer"] = entry.pop("answer")
    ordered: dict[str, Any] = {}
    for key, value in data.items():
        ordered[key] = value
        if key == "persons":
            ordered["intersections"] = {
                contrast: label
                for contrast, label in INTERSECTIONS.items()
                if target.contrasts is None or contrast in target.contrasts
            }
    return ordered


def _answer_slot(text: str) -> str | None:
    slots = {m.group(1) for m in SLOT_PATTERN.finditer(text)} & {"NAME1", "NAME2"}
    return next(iter(slots)) if len(slots) == 1 else None
