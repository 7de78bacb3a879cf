"""Width and punctuation of Japanese text as pure functions over the table in ``rules/normalization.yaml``.

Placeholders (``{{NAME1}}``) are left alone, and so are the characters the table keeps between digits
(1,000 / 3.5) and the punctuation of Latin-script text quoted inside Japanese ("Hello, I'm Ken." or
"1, 2, 3": English punctuation belongs to English words). Half-width katakana runs are rewritten to full
width with NFKC, which also joins a half-width voicing mark to its kana (ｶﾞ → ガ). The half-width
punctuation of the same block (｡ ｢ ｣ ､ ･) and the half-width arrows and shapes (U+FFE8–FFEE) are widened
whatever the table says about katakana: they are never right in Japanese text. A widened character then
goes through the table like any other (､ → 、, or ， where the table writes 、 as ，).
"""

from __future__ import annotations

import re
import unicodedata

from ..diagnostics import Edit
from ..schema.rules import NormalizationFile
from ..templating import SLOT_PATTERN

_HALFWIDTH_KATAKANA = re.compile(r"[\uff66-\uff9f]+")
_HALFWIDTH_PUNCTUATION = re.compile(r"[\uff61-\uff65\uffe8-\uffee]")
# A run of ASCII text, from its first letter, digit or opening bracket/quote up to its last visible character.
_ASCII_RUN = re.compile(r"[A-Za-z0-9(\[\"'][\x20-\x7e]*[\x21-\x7e]")
# Two Latin words (letters or digits) apart by white space, punctuation allowed next to them ("Hi, you").
_TWO_LATIN_WORDS = re.compile(r"[A-Za-z0-9][\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]*[ \t]+\S*?[A-Za-z0-9]")


def latin_spans(text: str) -> list[tuple[int, int]]:
    """Spans of Latin-script text inside ``text``: ASCII runs holding at least two words apart by a space.

    Their punctuation is English punctuation, which the width table must not touch; a lone Latin word
    (iPhone) or a digit group is not such a span. Placeholders count as Japanese, not as Latin words.
    """
    masked = SLOT_PATTERN.sub(lambda m: "\u3000" * len(m.group()), text)
    return [(m.start(), m.end()) for m in _ASCII_RUN.finditer(masked) if _TWO_LATIN_WORDS.search(m.group())]


def normalization_edits(text: str, table: NormalizationFile) -> list[Edit]:
    """The edits that bring ``text`` in line with the table, left to right, non-overlapping."""
    protected = [(m.start(), m.end()) for m in SLOT_PATTERN.finditer(text)] + latin_spans(text)

    def free(start: int, end: int) -> bool:
        return all(end <= a or b <= start for a, b in protected)

    def widened(run: str) -> str:
        return "".join(table.replace.get(char, char) for char in unicodedata.normalize("NFKC", run))

    edits: list[Edit] = []
    runs = [*_HALFWIDTH_PUNCTUATION.finditer(text)]
    if table.halfwidth_katakana:
        runs += _HALFWIDTH_KATAKANA.finditer(text)
    for match in runs:
        if free(match.start(), match.end()):
            edits.append(Edit(match.start(), match.group(), widened(match.group())))
    taken = [(e.start, e.start + len(e.old)) for e in edits]
    for index, char in enumerate(text):
        new = table.replace.get(char)
        if new is None or not free(index, index + 1) or any(a <= index < b for a, b in taken):
            continue
        between_digits = 0 < index < len(text) - 1 and text[index - 1].isdigit() and text[index + 1].isdigit()
        if between_digits and char in table.keep_between_digits:
            continue
        edits.append(Edit(index, char, new))
    return sorted(edits)


def normalize_text(text: str, table: NormalizationFile) -> str:
    """``text`` with every normalization edit applied (for machine translations and tests)."""
    for edit in reversed(normalization_edits(text, table)):
        text = text[: edit.start] + edit.new + text[edit.start + len(edit.old) :]
    return text
