"""What both BBQ importers share: the template files' records and BBQ's conventions — how its generator
reads a list cell, matches a group, tags a gender word, and rewrites the filled texts ("a" → "an",
"lesbian man" → "lesbian woman") — which the importers turn into data in the templates.

The bottom of the package: it imports no other module of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ....diagnostics import Diagnostic, Severity

PROPER_NAMES_FILE = "vocabulary_proper_names.csv"
RACE = "Race_ethnicity"  # its proper-name templates use full names (first + last)

PROPER_NAMES_REVIEW = (
    "BBQ's template uses first names; the Japanese version must be rewritten without proper names "
    "(as JBBQ did) before it is reviewed"
)
SWAPPED_FIELDS = (
    "Ambiguous_Context",
    "Disambiguating_Context",
    "Question_negative_stereotype",
    "Question_non_negative",
    "Answer_negative",
    "Answer_non_negative",
)
VOWEL_START = "^[aeiouAEIOU]"
# vocabulary.csv gives BBQ's gender words no Info, and its answer_info tags such a person by the word
# itself: the gender each word names, so that a stereotyped group "F" or "M" finds its person.
GENDER_WORDS = {
    **dict.fromkeys(("woman", "girl", "female", "wife"), "F"),
    **dict.fromkeys(("man", "boy", "male", "husband"), "M"),
}
# BBQ's generator's substitutions on every filled text, in its order: (pattern, replacement, when a
# person's filler matches …, words that must occur for the rewrite to matter).
BBQ_REWRITES = (
    ("lesbian man", "lesbian woman", None, ("lesbian",)),
    ("Latino woman", "Latina woman", None, ("Latino",)),
    (r"(\s[aA])(\s[aAeEiIoOuU])", r"\1n\2", VOWEL_START, ()),
    (" an European", " a European", VOWEL_START, ("European",)),
)


@dataclass(frozen=True)
class CsvRow:
    path: str
    line: int
    cells: dict[str, str]
    # where each cell starts in the file (line, column), so a finding about one cell points at it
    places: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def get(self, column: str) -> str:
        return (self.cells.get(column) or "").strip()

    def diagnostic(
        self, code: str, message: str, severity: Severity = Severity.ERROR, hint: str | None = None
    ):
        return Diagnostic(
            code=code, message=message, path=self.path, line=self.line, col=1, severity=severity, hint=hint
        )

    def cell_diagnostic(self, column: str, code: str, message: str, hint: str) -> Diagnostic:
        """An error about one cell, at the line and column where that cell starts."""
        line, col = self.places.get(column, (self.line, 1))
        return Diagnostic(code=code, message=message, path=self.path, line=line, col=col, hint=hint)


def empty_cells(row: CsvRow, columns: Sequence[str]) -> Diagnostic | None:
    """IM002 at the first of the cells of ``columns`` that are empty or hold only spaces, naming them
    all: BBQ's generator would fill the empty text into every row of the template (a context or a
    question of no words), so the template row is not imported."""
    empty = [column for column in columns if column in row.cells and not row.get(column)]
    if not empty:
        return None
    return row.cell_diagnostic(
        empty[0],
        "IM002",
        f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty; the template row is not imported",
        hint=f"write the text of {', '.join(empty)} into the row (or delete the whole row), and re-import",
    )


def cell_places(lines: Sequence[str], first: int) -> list[tuple[int, int]]:
    """Where each field of one CSV record starts, as (line, column), both from 1: ``lines`` are the
    physical lines of the record (with their line breaks; blank lines before it are skipped, as the csv
    reader skips them), ``first`` the number of the first. Quotes are read as the csv module's default
    dialect reads them: a field that starts with ``"`` runs to the next lone ``"``."""
    places: list[tuple[int, int]] = []
    state = "start"  # start of a field | plain | quoted | quote (a '"' seen inside a quoted field)
    started = False
    for number, text in enumerate(lines, first):
        if not started and not text.strip("\r\n"):
            continue  # a blank line before the record
        started = True
        for col, char in enumerate(text, 1):
            end = char in "\r\n"
            if state == "start":
                places.append((number, col))
                state = "quoted" if char == '"' else "start" if char == "," else "plain"
            elif state == "quoted":
                state = "quote" if char == '"' else "quoted"
                continue
            elif state == "quote":
                state = "quoted" if char == '"' else "start" if char == "," else "plain"
            elif char == ",":
                state = "start"
            if end and state != "quoted":
                return places
        if state == "start" and started:  # the text ends just after a comma: an empty last field
            places.append((number, len(text) + 1))
    return places


def stray_quote(lines: Sequence[str], first: int) -> tuple[int, int] | None:
    """Where a cell starts (line, column) whose quotes close before the cell ends (``"a"b,``), or None.
    The csv module keeps reading such a cell, so a quote typed by mistake swallows the text up to the next
    quote — other cells, other rows — without an error; BBQ's files have none."""
    state = "start"
    started = False
    cell = (first, 1)
    for number, text in enumerate(lines, first):
        if not started and not text.strip("\r\n"):
            continue
        started = True
        for col, char in enumerate(text, 1):
            if state == "quote" and char not in '",\r\n':
                return cell
            if state == "start":
                cell = (number, col)
                state = "quoted" if char == '"' else "start" if char == "," else "plain"
            elif state == "quoted":
                state = "quote" if char == '"' else "quoted"
            elif state == "quote":
                state = "quoted" if char == '"' else "start" if char == "," else "plain"
            elif char == ",":
                state = "start"
            if char in "\r\n" and state != "quoted":
                return None
    return None


def broken_line(cell: str) -> bool:
    """A line break inside a cell's text where BBQ's files have none: they break a line only at the end of
    a text, or after an item of a bracketed list (``["Indian",\n"Pakistani"]``); anywhere else the
    cell holds the text of a row that a quote swallowed."""
    text = cell.strip()
    if "\n" not in text and "\r" not in text:
        return False
    if text.startswith("[") and text.endswith("]"):
        return any(not part.rstrip().endswith((",", "[")) for part in text.splitlines()[:-1])
    return True


@dataclass(frozen=True)
class ProperName:
    """A row of vocabulary_proper_names.csv."""

    name: str
    first_last: str  # first (with an ethnicity) | first_only | last
    gender: str
    ethnicity: str


@dataclass(frozen=True)
class VocabEntry:
    category: str
    subcategory: str
    name: str
    info: str


def bbq_lists(cell: str, kind: str) -> dict[str, list[str]]:
    """A ``NAME1: [a, b]; NAME2: [c]`` (or WORD1/WORD2) cell read the way BBQ's generator reads it, the
    lists named ``<kind>1`` and ``<kind>2``.

    Its reader splits at every ``;`` (also inside brackets); a part that mentions WORD1 or NAME1 sets the
    first list, and every part sets the second list — to its words when it mentions WORD2 or NAME2, else
    to nothing. So only the last part can give the second list.
    """
    first: list[str] | None = None
    second: list[str] = []
    for part in cell.split(";"):
        if "WORD1" in part or "NAME1" in part:
            first = _bbq_items(part, "1")
        second = _bbq_items(part, "2") if "WORD2" in part or "NAME2" in part else []
    found: dict[str, list[str]] = {}
    if first is not None:
        found[f"{kind}1"] = first
    if second:
        found[f"{kind}2"] = second
    return found


def _bbq_items(part: str, number: str) -> list[str]:
    for label in (f"WORD{number}:", "{{WORD" + number + "}}:", f"NAME{number}:", "{{NAME" + number + "}}:"):
        part = part.replace(label, "")
    return [item.strip() for item in part.strip().replace("[", "").replace("]", "").split(",")]


def matches_group(value: str, groups: Sequence[str]) -> bool:
    """Group names compare without case, spaces, hyphens or underscores ("low SES" is "lowSES"); a
    gender word stands for its gender ("woman" is in the group "F")."""
    keys = {group_key(g) for g in groups}
    key = group_key(value)
    return bool(key) and (key in keys or group_key(GENDER_WORDS.get(key, "")) in keys - {""})


def group_key(value: str) -> str:
    return re.sub(r"[\s_-]+", "", value).lower()


_BRACED_SLOT = re.compile(r"(?P<pre>\{*)\{\{(?P<slot>[A-Za-z_][A-Za-z0-9_]*)\}\}(?P<post>\}*)")


_CONTEXT = 16  # literal characters on each side that locate a brace in the filled text


def literal_braces(text: str) -> tuple[str, list[dict[str, str]]]:
    """A brace BBQ's template leaves beside a slot (``the {{{NAME2}} man``) lands in its rows as it is.

    The slot is made well-formed, and a rewrite puts the brace back into the filled text, located by
    the literal text around the slot, so the release is reproduced and the template stays valid.
    """
    rewrites: list[dict[str, str]] = []

    def fix(match: re.Match[str]) -> str:
        if match.group("pre") or match.group("post"):
            before = text[max(0, match.start() - _CONTEXT) : match.start()].rsplit("}}", 1)[-1]
            after = text[match.end() : match.end() + _CONTEXT].split("{{", 1)[0]
            escaped = (before.replace("\\", "\\\\"), after.replace("\\", "\\\\"))
            rewrites.append(
                {
                    "pattern": (re.escape(before) if before else "^") + "(.+?)" + re.escape(after),
                    "replacement": escaped[0] + match.group("pre") + "\\1" + match.group("post") + escaped[1],
                }
            )
        return "{{" + match.group("slot") + "}}"

    return _BRACED_SLOT.sub(fix, text), rewrites


def bbq_rewrites(texts: Sequence[str], persons: Sequence[str]) -> list[dict[str, str]]:
    """BBQ's substitutions that can change this template's rows, as ``rewrites`` data."""
    found = []
    everything = "\n".join(texts)
    for pattern, replacement, when, needs in BBQ_REWRITES:
        if when is not None and not any(re.search(when, person) for person in persons):
            continue
        if all(word in everything for word in needs):
            rewrite = {"pattern": pattern, "replacement": replacement}
            found.append(rewrite | ({"when_person": when} if when else {}))
    return found
