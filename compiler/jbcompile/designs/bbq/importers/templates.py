"""``jbcompile import bbq-templates DIR``: BBQ's template CSVs and vocabulary → English-source YAML.

Input: ``new_templates - <Category>.csv`` (one row per template and version) and ``vocabulary.csv``.
Each row becomes a ``bbq`` template whose texts go into ``en`` (to be translated); a version b that is
version a with {{NAME1}} and {{NAME2}} swapped (in the texts, or in the Names lists) becomes part of
version a's template, because the expansion swaps the slots itself. What our format cannot hold is
reported, never dropped silently.

What BBQ's generator does to the filled texts becomes data in the template, never code in the compiler:
its list cells are read the way it reads them (``;`` splits even inside brackets), the answer columns
become each person slot's ``answer`` wording (they may hold other slots), every lexical alternative is
kept (``max_alternatives``), and its substitutions — "a" → "an" before a vowel when a person's filler
starts with one, "lesbian man" → "lesbian woman", "Latino woman" → "Latina woman" — are ``rewrites``.
"""

from __future__ import annotations

import ast
import csv
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....diagnostics import Diagnostic, DiagnosticError, Severity
from ....importers.draft import DraftFiller, SourcesDraft, slug
from ....importers.interface import Imported, Importer, Input, Option, ProgressBar, no_progress
from ....importers.report import ImportReport
from ....paths import display_path
from ....reading import TEMPLATE_CSV, is_present, read_bytes
from ....templating import SLOT_PATTERN, stable_hash
from ....text import describe, hidden
from .common import (
    GENDER_WORDS,
    PROPER_NAMES_FILE,
    PROPER_NAMES_REVIEW,
    RACE,
    SWAPPED_FIELDS,
    CsvRow,
    ProperName,
    VocabEntry,
    bbq_lists,
    bbq_rewrites,
    broken_line,
    cell_places,
    empty_cells,
    group_key,
    literal_braces,
    matches_group,
    stray_quote,
)
from .draft import DraftTemplate
from .intersectional import import_intersectional_file, is_intersectional
from .names import ReleasedNames, read_released_rows, released_names
from .roundtrip import release_coverage, report_release_coverage

TEMPLATE_FILE = re.compile(r"^new_templates - (?P<category>.+)\.csv$")
VOCABULARY_FILE = "vocabulary.csv"
REQUIRED = (
    "Q_id",
    "Ambiguous_Context",
    "Disambiguating_Context",
    "Question_negative_stereotype",
    "Question_non_negative",
    "Answer_negative",
    "Answer_non_negative",
    "Known_stereotyped_groups",
)
KNOWN = set(REQUIRED) | {
    "version",
    "Category",
    "Subcategory",
    "Names",
    "Lexical_diversity",
    "NAME1_info",
    "NAME2_info",
    "Proper_nouns_only",
    "Relevant_social_values",
    "Notes",
    "Source",
}
PERSON_SLOTS = ("NAME1", "NAME2")
# Cells that must hold text: an empty one would be filled into every row as it is. (An empty
# Ambiguous_Context marks a row BBQ's generator skips: IM010.)
TEXT_CELLS = ("Q_id", *SWAPPED_FIELDS[1:])
WORD_SLOTS = ("WORD1", "WORD2")


class BbqTemplates(Importer):
    name = "bbq-templates"
    summary = "Import BBQ template CSVs as English-source YAML templates and vocab (origin: translated)."
    input = Input("folder", "BBQ's templates folder ('new_templates - <Category>.csv', vocabulary.csv).")
    options = (
        Option("categories", ("--categories", "-c"), "Import only these categories.", many=True),
        Option(
            "compare",
            ("--compare",),
            "Released BBQ JSONL files: build the imported sources in memory and report, per category, "
            "how many of their rows come back (repeat for several files).",
            type=Path,
            many=True,
        ),
        Option(
            "names_from",
            ("--names-from",),
            "Released BBQ JSONL files: the proper-name templates of Race_ethnicity, Race_x_SES and "
            "Race_x_gender take the full names their released rows use, instead of seeded draws (repeat "
            "for several files).",
            type=Path,
            many=True,
        ),
    )
    unit = "template rows imported"
    errors_lose = True  # an error here is a template or a file left out

    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        # the --compare rows before anything is written (a bad line stops the import): the round trip
        # compares them with the build
        released = read_released_rows(options["compare"]) if options["compare"] else []
        draft, report = import_bbq_templates(inputs[0], options["categories"] or None, options["names_from"])
        return Imported(draft, report, released)

    def verify_round_trip(
        self, sources: Path, imported: Imported, progress: ProgressBar = no_progress
    ) -> None:
        """Per category, the --compare rows the imported sources reproduce (none given: nothing to do)."""
        if not imported.release:
            return
        with progress("expanding templates to compare") as tick:
            coverage, missed = release_coverage(sources, "en", imported.release, tick)
        report_release_coverage(imported.report, coverage, missed)


IMPORTER = BbqTemplates()


@dataclass(frozen=True)
class Refused:
    """A CSV record that is not imported: why (at its line and column), and how many of the file's lines
    it holds (each would have been a row: they count as rows not imported)."""

    diagnostic: Diagnostic
    lines: int


def read_csv(path: Path, display: str) -> tuple[list[str], list[CsvRow], list[Refused]]:
    """The header, the rows with their first line number, and the records refused (:func:`row_problem`).
    A file that is not UTF-8 CSV text, or whose header names a column twice, raises DiagnosticError."""
    try:  # bounded; a device or a FIFO is refused before it is opened (F001/F002)
        data = read_bytes(path, TEMPLATE_CSV, display)
        text = data.decode("utf-8-sig")
    except OSError as exc:
        raise DiagnosticError([_unreadable(display, f"cannot read {display}: {exc}")]) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[start : exc.start].decode("utf-8", errors="replace")) + 1
        raise DiagnosticError(
            [_unreadable(display, f"byte 0x{data[exc.start]:02X} is not UTF-8", line, col)]
        ) from None
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines)
    rows: list[CsvRow] = []
    refused: list[Refused] = []
    header: list[str] = []
    try:
        start = 1
        for cells in reader:
            if not cells:  # a blank line (the DictReader skips it too)
                start = reader.line_num + 1
                continue
            record = lines[start - 1 : reader.line_num]
            fields = cell_places(record, start)
            line = fields[0][0] if fields else start
            if not header:
                header = cells
                _refuse_repeated_columns(header, fields, display)
            else:
                problem = row_problem(cells, header, record, start, display)
                if problem is not None:
                    refused.append(Refused(problem, sum(1 for text in record if text.strip()) or 1))
                else:
                    named = dict(zip(header, cells, strict=True))
                    places = dict(zip(header, fields, strict=False))
                    rows.append(CsvRow(display, line, named, places))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM001",
                    message=f"malformed CSV: {exc}",
                    path=display,
                    line=reader.line_num,
                    hint="fix the CSV at this line (quotes must be closed; one row per line)",
                )
            ]
        ) from None
    return header, rows, refused


def _unreadable(display: str, message: str, line: int | None = None, col: int | None = None) -> Diagnostic:
    return Diagnostic(
        code="IM001", message=message, path=display, line=line, col=col, hint="save the file as UTF-8 CSV"
    )


def _refuse_repeated_columns(header: Sequence[str], places: Sequence[tuple[int, int]], display: str) -> None:
    """IM062 when the header names a column twice: the csv reader keeps the last cell of the name, so
    every row would take its value from a column the file does not show as the one read. (Columns with
    no name are no column of the format: they may repeat.)"""
    seen: dict[str, int] = {}
    problems = []
    for index, name in enumerate(header):
        if name.strip() and name in seen:
            line, col = places[index] if index < len(places) else (1, 1)
            problems.append(
                Diagnostic(
                    code="IM062",
                    message=f"the header names column {name!r} twice (columns {seen[name] + 1} and "
                    f"{index + 1}): which one holds the values is not clear; nothing is imported",
                    path=display,
                    line=line,
                    col=col,
                    hint="delete or rename one of the two columns, and re-import",
                )
            )
        seen.setdefault(name, index)
    if problems:
        raise DiagnosticError(problems)


def row_problem(
    cells: Sequence[str], header: Sequence[str], record: Sequence[str], first: int, display: str
) -> Diagnostic | None:
    """Why a CSV record is not imported, or None: a control character in it (IM063: it would be written
    into a source); a quote that closes a cell before it ends, a line break inside a cell's text, or a
    number of cells other than the header's (IM061: a quote typed by mistake swallowed other cells or
    rows, so what the cells hold is not what the file shows)."""
    for number, text in enumerate(record, first):
        for col, char in enumerate(text, 1):
            if char not in "\r\n" and hidden(char):
                return Diagnostic(
                    code="IM063",
                    message=f"{describe(char)} in a cell: the row is not imported",
                    path=display,
                    line=number,
                    col=col,
                    hint="delete the character (a control character has no place in a template's text), "
                    "and re-import",
                )
    places = cell_places(record, first)
    swallowed = stray_quote(record, first)
    broken = next((i for i, cell in enumerate(cells) if broken_line(cell)), None)
    if swallowed is None and broken is None and len(cells) == len(header):
        return None
    line, col = swallowed or (places[broken] if broken is not None and broken < len(places) else places[0])
    what = (
        "a quote closes this cell before it ends"
        if swallowed is not None
        else f"the cell of {_column(header, broken)} breaks a line inside its text (BBQ's texts do not)"
        if broken is not None
        else "this row"
    )
    lines = sum(1 for text in record if text.strip())
    return Diagnostic(
        code="IM061",
        message=f"{what}: the row {f'(over {lines} lines) ' if lines > 1 else ''}reads as {len(cells)} "
        f"cells where the header has {len(header)}; a quote swallowed other cells or rows, so the row is "
        "not imported"
        if len(cells) != len(header)
        else f"{what}; a quote may have swallowed a row, so the row is not imported",
        path=display,
        line=line,
        col=col,
        hint="check the quotes from here on: a cell that holds a comma or a quote is quoted as a whole, "
        'a quote inside it doubled (""); then re-import',
    )


def _column(header: Sequence[str], index: int | None) -> str:
    if index is None:
        return "a column"
    return repr(header[index]) if index < len(header) and header[index] else f"column {(index or 0) + 1}"


def parse_slot_lists(cell: str) -> dict[str, list[str]]:
    """``NAME1: [a, b]; NAME2: [c, d]`` (or WORD1 …) → {"NAME1": [a, b], "NAME2": [c, d]}."""
    found: dict[str, list[str]] = {}
    for part in cell.split(";"):
        if not part.strip():
            continue
        match = re.match(r"\s*\{*\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}*\s*:\s*(.*)$", part, re.S)
        if not match:
            raise ValueError(f"cannot read {part.strip()!r} (expected SLOT: [a, b])")
        body = match.group(2).strip()
        if body.startswith("[") and body.endswith("]"):
            body = body[1:-1]
        items = [item.strip().strip("'\"").strip() for item in body.split(",")]
        found[match.group(1)] = [item for item in items if item]
    return found


def parse_groups(cell: str) -> list[str]:
    """``["old"]``, ``[old, young]`` or ``old`` → ["old"]."""
    cell = cell.strip()
    if not cell:
        return []
    if cell.startswith("["):
        try:
            value = ast.literal_eval(cell)
            if isinstance(value, list):
                return [str(v).strip() for v in value if str(v).strip()]
        except (ValueError, SyntaxError):
            cell = cell[1:-1] if cell.endswith("]") else cell[1:]
    return [v.strip().strip("'\"") for v in cell.split(",") if v.strip().strip("'\"")]


def swap_slots(text: str) -> str:
    return SLOT_PATTERN.sub(
        lambda m: {"NAME1": "{{NAME2}}", "NAME2": "{{NAME1}}"}.get(m.group(1), m.group(0)), text
    )


def is_slot_swap(a: CsvRow, b: CsvRow) -> bool:
    """True when row b is row a with the two persons exchanged: {{NAME1}} and {{NAME2}} swapped in every
    text, or the texts kept and the Names lists swapped — and the info columns swapped either way."""
    texts_swapped = all(swap_slots(a.get(column)) == b.get(column) for column in SWAPPED_FIELDS)
    texts_same = all(a.get(column) == b.get(column) for column in SWAPPED_FIELDS)
    if not (texts_swapped or texts_same):
        return False
    names_a, names_b = bbq_lists(a.get("Names"), "NAME"), bbq_lists(b.get("Names"), "NAME")
    names_swapped = names_a.get("NAME1") == names_b.get("NAME2") and names_a.get("NAME2") == names_b.get(
        "NAME1"
    )
    if texts_swapped and not names_swapped:
        return False
    if texts_same and (not names_swapped or names_a == names_b):
        return False
    same = ("Lexical_diversity", "Known_stereotyped_groups", "Subcategory", "Proper_nouns_only")
    return (
        a.get("NAME1_info") == b.get("NAME2_info")
        and a.get("NAME2_info") == b.get("NAME1_info")
        and all(a.get(c) == b.get(c) for c in same)
    )


def _vocabulary_rows(path: Path, display: str) -> list[CsvRow]:
    """A vocabulary file's rows; a record refused stops the import (DiagnosticError): a word lost there
    changes the persons of every template drawing from the file, which no count of rows would show."""
    _, rows, refused = read_csv(path, display)
    if refused:
        raise DiagnosticError([r.diagnostic for r in refused])
    return rows


def read_vocabulary(path: Path, display: str) -> list[VocabEntry]:
    rows = _vocabulary_rows(path, display)
    return [
        VocabEntry(row.get("Category"), row.get("SubCat"), row.get("Name"), row.get("Info"))
        for row in rows
        if row.get("Name") and row.get("Pilot_include").lower() != "no"
    ]


def read_proper_names(path: Path, display: str) -> list[ProperName]:
    rows = _vocabulary_rows(path, display)
    return [
        ProperName(row.get("Name"), row.get("First_last"), row.get("gender"), row.get("ethnicity"))
        for row in rows
        if row.get("Name")
    ]


class _Skip(Exception):
    """The template cannot be represented; the diagnostic says why."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _slot_reference(row: CsvRow, column: str) -> str:
    slots = [m.group(1) for m in SLOT_PATTERN.finditer(row.get(column)) if m.group(1) in PERSON_SLOTS]
    if len(set(slots)) != 1:
        raise _Skip(
            row.diagnostic(
                "IM007",
                f"{column} must name exactly one of {{{{NAME1}}}} / {{{{NAME2}}}}, found {row.get(column)!r}",
                hint=f"write in {column} the one person it answers, as {{{{NAME1}}}} or {{{{NAME2}}}}, and "
                "re-import",
            )
        )
    return slots[0]


def template_from_row(
    row: CsvRow,
    category: str,
    vocabulary: Sequence[VocabEntry],
    draft: SourcesDraft,
    report: ImportReport,
    name: str,
    merged_version: str | None,
    proper_names: Sequence[ProperName] = (),
    released: ReleasedNames | None = None,
) -> DraftTemplate:
    """One template from one CSV row (raises _Skip when it cannot be represented)."""
    version = row.get("version") or "a"
    upstream = f"{category}/{row.get('Q_id')}/{version}" + (f"+{merged_version}" if merged_version else "")

    def note(code: str, message: str, severity: Severity = Severity.INFO) -> None:
        report.add(name, row.diagnostic(code, message, severity))

    empty = empty_cells(row, TEXT_CELLS)
    if empty is not None:
        raise _Skip(empty)
    proper = row.get("Proper_nouns_only").upper() == "TRUE"
    from_release = proper and category == RACE and released is not None and bool(released.targets)
    if proper and not from_release and not any(n.first_last == "first_only" for n in proper_names):
        raise _Skip(
            row.diagnostic(
                "IM003",
                f"Proper_nouns_only templates draw first names from {PROPER_NAMES_FILE}, which is missing",
                hint=f"put BBQ's {PROPER_NAMES_FILE} next to the template files and re-import",
            )
        )
    groups = parse_groups(row.get("Known_stereotyped_groups"))
    if not groups:
        raise _Skip(
            row.diagnostic(
                "IM002",
                "Known_stereotyped_groups is empty",
                hint='name the stereotyped group(s) there, as BBQ does (e.g. ["old"]), and re-import',
            )
        )
    names = bbq_lists(row.get("Names"), "NAME") if len(row.get("Names")) > 1 else {}
    words = bbq_lists(row.get("Lexical_diversity"), "WORD")
    info = {slot: row.get(f"{slot}_info") for slot in PERSON_SLOTS}
    if names and not (names.get("NAME1") and names.get("NAME2")):
        raise _Skip(
            row.diagnostic(
                "IM002",
                "BBQ's generator reads no NAME2 list from this Names cell (only its last ';' part can give "
                "one), so it makes no rows from it; nor does the import",
                Severity.WARNING,
            )
        )
    review = PROPER_NAMES_REVIEW if proper else None
    if from_release:
        assert released is not None
        for problem in released.unusable:
            report.add(name, problem)
        names = {"NAME1": released.targets, "NAME2": released.others}
        info = {"NAME1": groups[0], "NAME2": f"non{groups[0]}"}
        note(
            "IM050",
            f"full names from the released rows (--names-from): {len(released.targets)} stereotyped and "
            f"{len(released.others)} other persons in {len(released.pairs)} released pairs; every "
            "pairing of them is made",
        )
    elif proper and category == RACE:
        names, info = _full_names(name, groups, proper_names)
        if not names:
            raise _Skip(
                row.diagnostic(
                    "IM003",
                    f"{PROPER_NAMES_FILE} has no first names of {groups}",
                    hint=f"give {PROPER_NAMES_FILE} first names of these ethnicities (First_last: first) and "
                    "last names of theirs, or pass --names-from with the released rows of this category",
                )
            )
        note(
            "IM003",
            "BBQ pairs first + last names of the stereotyped ethnicities with random ones of the others "
            "(same gender): every pair would be hundreds of thousands of rows, so each first name gets one "
            f"last name and {SAMPLED_OTHERS} other names per gender are drawn (seeded); the released rows "
            "with other names are not reproduced (--names-from takes the released rows' names)",
            Severity.WARNING,
        )
    elif proper:
        names = _proper_name_lists(category, proper_names)
        if category == "Gender_identity":
            info = {"NAME1": "F", "NAME2": "M"}
        else:
            note(
                "IM028",
                "BBQ pairs any two of its first names (both genders) in this template: every name fills "
                "both slots (a row never names one person twice; check JA110 is a warning for this reason)",
            )
            draft.checks["JA110"] = "warning"
    if names:
        people = {slot: names[slot] for slot in PERSON_SLOTS}
        target = [
            s
            for s in PERSON_SLOTS
            if matches_group(info[s], groups) or any(matches_group(w, groups) for w in people[s])
        ]
        if len(target) == 2:
            raise _Skip(
                row.diagnostic(
                    "IM004",
                    "both NAME1 and NAME2 belong to the stereotyped groups",
                    hint="let Known_stereotyped_groups match one person only (its Names words or its "
                    "NAME1_info/NAME2_info), and re-import",
                )
            )
        if not target:
            note(
                "IM009",
                "no slot is marked as the stereotyped group; NAME1 taken as the target (BBQ's convention)",
            )
            target = ["NAME1"]
        target_slot = target[0]
        target_tags = {w: info[target_slot] or groups[0] for w in people[target_slot]}
        other_tags: dict[str, str] = {}
    else:
        people, target_slot, target_tags, other_tags, review = _people_from_vocabulary(
            row, category, groups, vocabulary, note
        )
        info = {slot: "" for slot in PERSON_SLOTS}
    other_slot = "NAME2" if target_slot == "NAME1" else "NAME1"
    target_tag = info[target_slot] or groups[0]
    other_tag = (
        info[other_slot]
        or _most_common(other_tags.values())
        or f"non{target_tag[:1].upper()}{target_tag[1:]}"
    )
    if not info[other_slot] and not other_tags:
        note("IM009", f"no {other_slot}_info: the other group's tag is set to {other_tag!r}")
    for tag in {other_tag, *other_tags.values()}:
        if matches_group(tag, groups):
            raise _Skip(
                row.diagnostic(
                    "IM004",
                    f"the other person's tag {tag!r} is a stereotyped group",
                    hint="tag the other person (its NAME1_info/NAME2_info, or its vocabulary.csv Info) with "
                    "a group Known_stereotyped_groups leaves out, and re-import",
                )
            )
    stereotyped = list(groups)
    for tag in sorted(set(target_tags.values())):
        if tag not in stereotyped:
            stereotyped.append(tag)
            note("IM009", f"tag {tag!r} of the target added to stereotyped_groups")

    negative_slot = _slot_reference(row, "Answer_negative")
    non_negative_slot = _slot_reference(row, "Answer_non_negative")
    if negative_slot == non_negative_slot:
        raise _Skip(
            row.diagnostic(
                "IM007",
                "Answer_negative and Answer_non_negative name the same person",
                hint="write {{NAME1}} in one of the two answer columns and {{NAME2}} in the other, and "
                "re-import",
            )
        )

    def fillers(slot: str, tags: dict[str, str] | None, group_tag: str) -> tuple[DraftFiller, ...]:
        out = []
        for word in dict.fromkeys(people[slot]):
            tag = (tags or {}).get(word, group_tag)
            out.append(DraftFiller(word, None, None if tag == group_tag else tag))
        return tuple(out)

    columns = (*SWAPPED_FIELDS[:4], "Answer_negative", "Answer_non_negative")
    texts = {column: row.get(column) for column in columns}
    word_slots: dict[str, list[str]] = {}
    if len(row.get("Lexical_diversity")) > 1:  # BBQ fills words only when the cell has text
        for slot, alternatives in words.items():
            unique = list(dict.fromkeys(a for a in alternatives if a))
            if slot == "WORD2" and len(alternatives) < 2:
                unique = [""]  # BBQ draws WORD2 only from two or more words; else it is left empty
                note("IM005", "WORD2 has a single word, which BBQ's generator never uses: it is empty")
            if len(unique) < 2:
                texts = {
                    k: v.replace("{{" + slot + "}}", unique[0] if unique else "") for k, v in texts.items()
                }
                continue
            word_slots[slot] = unique
    brace_rewrites: list[dict[str, str]] = []
    for column, text in texts.items():
        texts[column], found = literal_braces(text)
        if found:
            brace_rewrites += found
            note(
                "IM036",
                f"{column} has a brace beside a slot ({found[0]['replacement']!r}); BBQ prints it as "
                "it is: the slot is kept well-formed and a rewrite puts the brace back into the rows",
            )
    used = {m.group(1) for text in texts.values() for m in SLOT_PATTERN.finditer(text)}
    unknown = used - set(PERSON_SLOTS) - set(word_slots)
    if unknown:
        raise _Skip(
            row.diagnostic(
                "IM007",
                f"the texts use slots with no values: {sorted(unknown)}",
                hint="give those slots words in Lexical_diversity (WORD1: [a, b]), or take them out of the "
                "texts, and re-import",
            )
        )
    for slot in list(word_slots):
        if slot not in used:
            note("IM005", f"{slot} is listed in Lexical_diversity but no text uses it; left out")
            del word_slots[slot]
    most = max((len(alternatives) for alternatives in word_slots.values()), default=0)
    if most > 3:
        note(
            "IM005",
            f"a lexical slot has {most} alternatives (BBQ draws one at random): all are kept "
            f"(max_alternatives: {most}), which multiplies the rows",
        )

    stereotype = row.get("Relevant_social_values")
    if not stereotype:
        stereotype = f"{', '.join(groups)}: {row.get('Question_negative_stereotype')}"
        note("IM009", "no Relevant_social_values: the stereotype is written from the negative question")
    attested = row.get("Source") or row.get("Notes")
    if not attested:
        attested = f"BBQ template {upstream}"
        note("IM009", "no Source or Notes: `attested` names the upstream template only")
    target_group = draft.group_for(category, target_tag, fillers(target_slot, target_tags, target_tag), None)
    other_group = draft.group_for(category, other_tag, fillers(other_slot, other_tags, other_tag), None)
    persons = [w for slot in PERSON_SLOTS for w in people[slot]]
    return DraftTemplate(
        id=name,
        category=category,
        subcategory=row.get("Subcategory") or None,
        upstream=upstream,
        stereotype=stereotype,
        stereotyped_groups=stereotyped,
        attested=attested,
        target_slot=target_slot,
        other_slot=other_slot,
        target_group=target_group,
        other_group=other_group,
        words=word_slots,
        ambiguous=texts["Ambiguous_Context"],
        disambiguating=texts["Disambiguating_Context"],
        negative=(texts["Question_negative_stereotype"], negative_slot),
        non_negative=(texts["Question_non_negative"], non_negative_slot),
        notes=row.get("Notes") if row.get("Source") and row.get("Notes") else None,
        answers={negative_slot: texts["Answer_negative"], non_negative_slot: texts["Answer_non_negative"]},
        max_alternatives=max(most, 3),
        review=review,
        rewrites=brace_rewrites
        + bbq_rewrites(list(texts.values()) + persons + [w for a in word_slots.values() for w in a], persons),
    )


def _proper_name_lists(category: str, proper_names: Sequence[ProperName]) -> dict[str, list[str]]:
    """The first names BBQ draws for a Proper_nouns_only template: women and men for Gender_identity
    (two persons of different genders), else any two of the names without an ethnicity."""
    first = [n for n in proper_names if n.first_last == "first_only"]
    if category == "Gender_identity":
        return {
            "NAME1": [n.name for n in first if n.gender == "F"],
            "NAME2": [n.name for n in first if n.gender != "F"],
        }
    return {"NAME1": [n.name for n in first], "NAME2": [n.name for n in first]}


SAMPLED_OTHERS = 5  # other names per gender in a Race_ethnicity proper-name template (BBQ draws 5)


def _full_names(
    template: str, groups: Sequence[str], proper_names: Sequence[ProperName]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """First + last names for a Race_ethnicity proper-name template, drawn by a hash seeded with the
    template id: every first name of the stereotyped ethnicities, and five others per gender."""
    last: dict[str, list[str]] = {}
    for n in proper_names:
        if n.first_last == "last":
            last.setdefault(n.ethnicity, []).append(n.name)

    def full(first: ProperName) -> str | None:
        options = last.get(first.ethnicity)
        return (
            f"{first.name} {options[stable_hash(template, first.name) % len(options)]}" if options else None
        )

    firsts = [n for n in proper_names if n.first_last == "first"]
    targets = [n for n in firsts if matches_group(n.ethnicity, groups)]
    others: list[ProperName] = []
    for gender in sorted({n.gender for n in targets}):
        pool = [n for n in firsts if n.gender == gender and not matches_group(n.ethnicity, groups)]
        others += sorted(pool, key=lambda n: stable_hash(template, "other", n.name))[:SAMPLED_OTHERS]
    names = {
        "NAME1": [f for f in map(full, targets) if f],
        "NAME2": [f for f in map(full, others) if f],
    }
    if not names["NAME1"] or not names["NAME2"]:
        return {}, {}
    return names, {"NAME1": groups[0], "NAME2": f"non{groups[0]}"}


def _people_from_vocabulary(row, category, groups, vocabulary, note):
    """Persons from vocabulary.csv when the Names column is empty: stereotyped words vs the rest."""
    subcategory = row.get("Subcategory")
    entries = [
        v for v in vocabulary if v.category == category and (not subcategory or v.subcategory == subcategory)
    ]
    if not entries:
        raise _Skip(
            row.diagnostic(
                "IM011",
                f"no Names and no vocabulary.csv words for {category}/{subcategory}",
                hint="write the two persons into the Names column (NAME1: [a]; NAME2: [b]), or give "
                f"vocabulary.csv words of Category {category}"
                + (f" and SubCat {subcategory}" if subcategory else "")
                + ", and re-import",
            )
        )
    targets = [v for v in entries if matches_group(v.name, groups) or matches_group(v.info, groups)]
    others = [v for v in entries if v not in targets]
    if len(entries) > 1 and (not targets or not others):
        targets, others = entries[:1], entries[1:]
        note(
            "IM027",
            f"no vocabulary word of {category}/{subcategory or '-'} names a stereotyped group "
            f"{list(groups)}: BBQ pairs any two of its words; {targets[0].name!r} is taken as the target, "
            "so pairs of two other words are not made — check `target:` (review: needs_changes)",
            Severity.WARNING,
        )
        review = "the stereotyped person was guessed from the word order; check `target: true`"
    else:
        review = None
    if not targets or not others:
        raise _Skip(
            row.diagnostic(
                "IM011",
                f"vocabulary.csv has fewer than two words for {category}/{subcategory or '-'}",
                hint="write the two lists into the Names column and re-import",
            )
        )
    note(
        "IM011",
        "persons drawn from vocabulary.csv: stereotyped words fill the target slot, "
        "the others the other slot",
    )
    people = {"NAME1": [v.name for v in targets], "NAME2": [v.name for v in others]}
    tags = {v.name: (v.info if matches_group(v.info, groups) else _word_tag(v.name)) for v in targets}
    other_tags = {v.name: v.info or _word_tag(v.name) for v in others if v.info or v.name in GENDER_WORDS}
    return people, "NAME1", tags, other_tags, review


def _word_tag(word: str) -> str:
    """A vocabulary word without Info is tagged by the gender it names, else by itself."""
    return GENDER_WORDS.get(word.strip().lower(), word)


def _most_common(values) -> str | None:
    counts = Counter(values)
    return counts.most_common(1)[0][0] if counts else None


def import_bbq_templates(
    folder: Path, categories: Sequence[str] | None = None, names_from: Sequence[Path] = ()
) -> tuple[SourcesDraft, ImportReport]:
    """Read every template CSV of ``folder`` (optionally only some categories) into a draft; the
    released rows ``names_from`` give the proper-name templates (Race_ethnicity, Race_x_SES,
    Race_x_gender) their names."""
    folder = Path(folder)
    report = ImportReport()
    draft = SourcesDraft(lang="en", name="bbq-templates", pretty_name="Imported BBQ templates")
    found = sorted(p for p in folder.glob("*.csv") if TEMPLATE_FILE.match(p.name))
    if not found:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM001",
                    message=f"no 'new_templates - <Category>.csv' files in {display_path(folder)}",
                    path=display_path(folder),
                    hint="point at BBQ's templates folder",
                )
            ]
        )
    vocabulary: list[VocabEntry] = []
    if is_present(folder / VOCABULARY_FILE, TEMPLATE_CSV):  # a FIFO or folder there is F002, not absent
        vocabulary = read_vocabulary(folder / VOCABULARY_FILE, display_path(folder / VOCABULARY_FILE))
    proper_names: list[ProperName] = []
    if is_present(folder / PROPER_NAMES_FILE, TEMPLATE_CSV):
        proper_names = read_proper_names(folder / PROPER_NAMES_FILE, display_path(folder / PROPER_NAMES_FILE))
    released_rows = read_released_rows(names_from) if names_from else []
    wanted = set(categories or [])
    offered = {TEMPLATE_FILE.match(p.name).group("category").strip() for p in found}  # type: ignore[union-attr]
    if wanted - offered:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM001",
                    message=f"no template file of the categories {sorted(wanted - offered)} in "
                    f"{display_path(folder)}",
                    path=display_path(folder),
                    hint=f"the categories there: {', '.join(sorted(offered))}",
                )
            ]
        )
    for path in found:
        category = TEMPLATE_FILE.match(path.name).group("category").strip()  # type: ignore[union-attr]
        if wanted and category not in wanted:
            continue
        display = display_path(path)
        columns, rows, refused = read_csv(path, display)
        for record in refused:  # rows a quote swallowed, or with a control character: not imported
            report.add(display, record.diagnostic)
            report.template(display).rows += record.lines
        if is_intersectional(columns):  # Race_x_SES, Race_x_gender: persons with two attributes
            import_intersectional_file(
                rows, columns, category, vocabulary, proper_names, draft, report, released_rows
            )
            continue
        missing = [c for c in REQUIRED if c not in columns]
        if missing:
            intersectional = missing == ["Known_stereotyped_groups"]
            # BBQ's filler items (Q_id, Context, …): no generator reads them. A file without even Q_id
            # (empty, a Git LFS pointer, another table) is a template file that did not come through.
            not_templates = "Ambiguous_Context" in missing and "Q_id" in columns
            report.add(
                None,
                Diagnostic(
                    code="IM002",
                    message=f"missing columns: {', '.join(missing)}; file skipped"
                    + (
                        " (nor the columns of an intersectional file: Known_stereotyped_race, "
                        "Known_stereotyped_var2)"
                        if intersectional
                        else " (not a template file)"
                        if not_templates
                        else ""
                    ),
                    path=display,
                    line=1,
                    col=1,
                    severity=Severity.WARNING if not_templates else Severity.ERROR,
                    hint="give BBQ's template CSV as released, with its header row",
                ),
            )
            if not not_templates:  # its template rows count as not imported (a whole unreadable file: one)
                report.template(display).rows += sum(1 for row in rows if row.get("Ambiguous_Context")) or 1
            continue
        ignored = [c for c in columns if c not in KNOWN and any(r.get(c) for r in rows)]
        if ignored:
            report.add(
                None,
                Diagnostic(
                    code="IM012",
                    message=f"columns with no place in the format were not imported: {', '.join(ignored)}",
                    path=display,
                    line=1,
                    col=1,
                    severity=Severity.WARNING,
                ),
            )
        released = released_names(released_rows) if category == RACE and released_rows else {}
        _import_category(rows, category, vocabulary, draft, report, proper_names, released)
    return draft, report


def _import_category(
    rows: list[CsvRow],
    category: str,
    vocabulary: list[VocabEntry],
    draft: SourcesDraft,
    report: ImportReport,
    proper_names: Sequence[ProperName] = (),
    released: dict[str, ReleasedNames] | None = None,
) -> None:
    by_question: dict[str, list[CsvRow]] = {}
    for row in rows:
        if not row.get("Ambiguous_Context"):
            if any(row.cells.values()):
                report.add(
                    None,
                    row.diagnostic(
                        "IM010", "row without Ambiguous_Context skipped (BBQ skips it too)", Severity.INFO
                    ),
                )
            continue
        if row.get("Category") and group_key(row.get("Category")) != group_key(category):
            report.add(
                None,
                row.diagnostic(
                    "IM002",
                    f"Category {row.get('Category')!r} differs from the file's {category!r}; file's used",
                    Severity.WARNING,
                ),
            )
        by_question.setdefault(row.get("Q_id"), []).append(row)
    for q_id, group in by_question.items():
        labels = _version_labels(group)
        merged_into: dict[int, list[str]] = {}  # kept row index → the versions it stands for too
        kept: list[int] = []
        for index, row in enumerate(group):
            twin = next((k for k in kept if is_slot_swap(group[k], row) or _same_rows(group[k], row)), None)
            if twin is None:
                kept.append(index)
                merged_into[index] = []
            else:
                merged_into[twin].append(labels[index])
        for index in kept:
            row, version, also = group[index], labels[index], merged_into[index]
            suffix = "" if len(kept) == 1 else f"-{version}"
            names = (released or {}).get(q_id)
            proper = row.get("Proper_nouns_only").upper() == "TRUE"
            parts = names.by_gender() if names is not None and proper else [("", names)]
            added = False
            for part, part_names in parts:  # a template per gender of the released names
                name = draft.unique_template_id(slug(f"{category}-{q_id}{suffix}{part}"))
                counted = part == parts[0][0]  # the CSV row counts once
                try:
                    template = template_from_row(
                        row,
                        category,
                        vocabulary,
                        draft,
                        report,
                        name,
                        "+".join(also) or None,
                        proper_names,
                        part_names,
                    )
                except _Skip as skip:
                    ref = f"{category}/{q_id}/{version}"
                    report.add(ref, skip.diagnostic)
                    entry = report.template(ref)
                    entry.rows += (1 + len(also)) * counted
                    if skip.diagnostic.severity is not Severity.ERROR:  # BBQ makes no rows from it either
                        entry.reproduced = entry.rows
                    continue
                entry = report.template(name, template.upstream)
                entry.rows += (1 + len(also)) * counted
                entry.reproduced = entry.rows
                draft.add_template(template.source(draft))
                added = True
            if also and added:
                report.add(
                    name,
                    row.diagnostic(
                        "IM013",
                        f"version(s) {', '.join(also)} repeat version {version} or swap its persons: one "
                        "template (the expansion makes both assignments)",
                        Severity.INFO,
                    ),
                )
        _note_shared_ambiguous(group, kept, labels, category, q_id, report)


def _version_labels(group: list[CsvRow]) -> list[str]:
    """Each row's version, made unique (a repeated version gets -2, -3 …): BBQ makes rows from both."""
    labels: list[str] = []
    for row in group:
        base = row.get("version") or "a"
        label, n = base, 1
        while label in labels:
            n += 1
            label = f"{base}{n}"
        labels.append(label)
    return labels


def _same_rows(a: CsvRow, b: CsvRow) -> bool:
    columns: tuple[str, ...] = (*SWAPPED_FIELDS, "Names", "Lexical_diversity", "NAME1_info", "NAME2_info")
    columns += ("Known_stereotyped_groups", "Subcategory", "Proper_nouns_only")
    return all(a.get(column) == b.get(column) for column in columns)


def _note_shared_ambiguous(
    group: list[CsvRow], kept: list[int], labels: list[str], category: str, q_id: str, report: ImportReport
) -> None:
    """Versions that differ only after the ambiguous context repeat each other's ambiguous rows, as
    BBQ's release does; say so rather than hide it."""
    seen: dict[tuple, str] = {}
    for index in kept:
        row = group[index]
        key = (row.get("Ambiguous_Context"), row.get("Names"), row.get("Question_negative_stereotype"))
        if key in seen:
            report.add(
                None,
                row.diagnostic(
                    "IM030",
                    f"{category} Q_id {q_id}: version {labels[index]} has the ambiguous context of version "
                    f"{seen[key]}; their ambiguous rows repeat each other (as in BBQ's release)",
                    Severity.INFO,
                ),
            )
        else:
            seen[key] = labels[index]
