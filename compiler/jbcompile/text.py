"""Small text helpers shared by the kinds, the linter and the evaluator."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import cache


@cache
def _marks(open_mark: str, close_mark: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(open_mark)}{re.escape(close_mark)}]")


def top_level_spans(text: str, open_mark: str = "「", close_mark: str = "」") -> list[str]:
    """The spans between top-level marks, in order; a nested pair stays inside its span.

    A rationale may quote context that quotes speech (「…「はい」…」): brackets are matched, not split.
    """
    spans: list[str] = []
    depth = 0
    start = 0
    for match in _marks(open_mark, close_mark).finditer(text):
        if match.group() == open_mark:
            if depth == 0:
                start = match.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : match.start()])
    return spans


SENTENCE_ENDS = {"ja": "。！？", "en": ".!?"}
QUOTE_OPEN = {"ja": "「", "en": "“"}
QUOTE_CLOSE = {"ja": "」", "en": "”"}


@cache
def _sentence_marks(lang: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(QUOTE_OPEN[lang] + QUOTE_CLOSE[lang] + SENTENCE_ENDS[lang])}]")


def sentences(text: str, lang: str = "ja") -> list[str]:
    """The sentences of ``text``; a sentence end inside quoted speech (「はい。」) does not end one.
    Only the quotation marks and sentence ends are visited (a build splits every context and rationale)."""
    found: list[str] = []
    depth = 0
    start = 0
    open_mark, close_mark = QUOTE_OPEN[lang], QUOTE_CLOSE[lang]
    for match in _sentence_marks(lang).finditer(text):
        char = match.group()
        if char == open_mark:
            depth += 1
        elif char == close_mark:
            depth = max(depth - 1, 0)
        elif depth == 0:
            found.append(text[start : match.end()].strip())
            start = match.end()
    if text[start:].strip():
        found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``did you mean 'x'? `` for a near-miss name (a typo, another case), else ``""``: a hint's start."""
    known = sorted(set(choices))
    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    folded = [choice for choice in known if choice.casefold() == name.casefold() and choice != name]
    close = list(dict.fromkeys(folded + close))[:2]
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


# Characters a reader cannot see (the check rules JA120 and JA121 and every text the CLI prints).
_BIDI_CONTROLS = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
_TAGS = range(0xE0000, 0xE0080)
# Invisible, and meaningless in Japanese or English text: removed by `check --fix`.
REMOVABLE_INVISIBLE = frozenset(
    {0x00AD, 0x061C, 0x180E, 0x200B, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF}
)
# Invisible, but part of some writing (emoji sequences, Indic scripts) or shown as a blank: reported only.
_KEPT = frozenset({0x115F, 0x1160, 0x200C, 0x200D, 0x2028, 0x2029, 0x3164, 0xFFA0})


def hidden(char: str) -> bool:
    """NUL and the other control characters (tab and line break aside), bidirectional embeddings,
    overrides and isolates, tag characters: an error wherever they stand."""
    code = ord(char)
    if char in "\t\n":
        return False
    return code < 0x20 or 0x7F <= code <= 0x9F or code in _BIDI_CONTROLS or code in _TAGS


def invisible(char: str) -> bool:
    """Zero-width and other format characters that show nothing (a warning; removed where safe)."""
    code = ord(char)
    return (
        code in REMOVABLE_INVISIBLE
        or code in _KEPT
        or (unicodedata.category(char) == "Cf" and not hidden(char))
    )


def visible_part(text: str) -> str:
    """``text`` without hidden or invisible characters: what a reader sees of it."""
    if not may_hide(text):
        return text
    return "".join(char for char in text if not (hidden(char) or invisible(char)))


def compatible(text: str) -> str:
    """What a reader tells apart of ``text``: its visible part in NFKC (full- and half-width forms,
    compatibility characters folded), so that 「ＩＴ」 and 「IT」, ？ and ? compare equal."""
    return unicodedata.normalize("NFKC", visible_part(text))


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``; a control character has no name of its own."""
    name = unicodedata.name(char, "")
    if not name:
        name = "NULL" if char == "\0" else "a control character"
    return f"U+{ord(char):04X} {name}"


def may_hide(text: str) -> bool:
    """False when ``text`` surely holds no hidden or invisible character (the common case, at C speed);
    True when it may (a line break is not printable either)."""
    return not text.isprintable() or bool(_KEPT_LETTERS.search(text))


def line_and_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``text[index]``, for a diagnostic."""
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def unseen_in_file(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of each hidden or invisible character written in a file's ``text``: its line
    breaks (LF, CR LF) aside, and a byte order mark that opens it (a file signature, not text)."""
    start = 1 if text.startswith("\ufeff") else 0
    for line in text[start:].split("\n"):
        if may_hide(line):
            for index, char in enumerate(line, start):
                if char != "\r" and (hidden(char) or invisible(char)):
                    yield index, char
        start += len(line) + 1


def shown(text: str) -> str:
    """``text`` with each hidden or invisible character written out (``<U+202E>``): what a terminal shows
    of a text from the sources or a build is what it holds, and a bidirectional override cannot reorder
    the line around it."""
    if not may_hide(text):
        return text
    return "".join(f"<U+{ord(char):04X}>" if hidden(char) or invisible(char) else char for char in text)


def shown_name(name: str) -> str:
    """A file or folder name as a one-line message prints it: as :func:`shown`, and a line break or tab
    in it written out too (``<U+000A>``), so that a name cannot break the line or forge another one."""
    return "".join(
        f"<U+{ord(char):04X}>" if not char.isprintable() and char != " " else char for char in shown(name)
    )


def plain_name(name: str, fallback: str) -> str:
    """``name`` fit to name a folder the tool makes up: every character a terminal does not print (control
    characters, line breaks, invisible ones) becomes ``-``; ``fallback`` when nothing is left."""
    kept = "".join(char if char.isprintable() and not invisible(char) else "-" for char in name)
    return re.sub(r"-{2,}", "-", kept).strip("- ") or fallback


_KEPT_LETTERS = re.compile(
    "[" + "".join(chr(code) for code in sorted(_KEPT) if chr(code).isprintable()) + "]"
)


def shortened(text: str, most: int = 60) -> str:
    """``text`` in at most ``most`` characters for a message: its middle left out and marked (…), so
    that both ends show — where two hashes, paths or replies differ, and where a reply gives its answer."""
    if len(text) <= most:
        return text
    tail = max(1, (most - 1) // 3)
    return f"{text[: most - 1 - tail]}…{text[-tail:]}"
