"""Slots travel through DeepL as ignored XML tags, so a translation can never rename or translate them.

``{{NAME1}}`` becomes ``<x>NAME1</x>``; with ``tag_handling="xml"`` and ``ignore_tags=["x"]`` DeepL keeps
the tag and its content verbatim and moves it to where the noun phrase belongs in the Japanese sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from xml.sax.saxutils import escape, unescape

from ..templating import SLOT_PATTERN

SLOT_TAG = "x"
_LEFTOVER_TAG = re.compile(rf"</?{SLOT_TAG}\b")
_TAG_PATTERN = re.compile(rf"<{SLOT_TAG}>\s*([A-Za-z_][A-Za-z0-9_]*)\s*</{SLOT_TAG}>")


def protect(text: str) -> str:
    """The text as DeepL receives it: XML-escaped, with every slot wrapped in an ignored tag."""
    pieces: list[str] = []
    last = 0
    for match in SLOT_PATTERN.finditer(text):
        pieces.append(escape(text[last : match.start()]))
        pieces.append(f"<{SLOT_TAG}>{match.group(1)}</{SLOT_TAG}>")
        last = match.end()
    pieces.append(escape(text[last:]))
    return "".join(pieces)


def restore(text: str) -> str:
    """DeepL's output back in source form: slot tags become ``{{NAME}}`` again, entities are unescaped."""
    pieces: list[str] = []
    last = 0
    for match in _TAG_PATTERN.finditer(text):
        pieces.append(unescape(text[last : match.start()]))
        pieces.append("{{" + match.group(1) + "}}")
        last = match.end()
    pieces.append(unescape(text[last:]))
    return "".join(pieces)


def slot_counts(text: str) -> Counter[str]:
    return Counter(match.group(1) for match in SLOT_PATTERN.finditer(text))


def slot_problem(source: str, translation: str) -> str | None:
    """Why ``translation`` cannot stand for ``source`` as a template text, or None when it can."""
    expected, found = slot_counts(source), slot_counts(translation)
    problems = []
    missing = sorted((expected - found).elements())
    extra = sorted((found - expected).elements())
    if missing:
        problems.append("lost " + ", ".join("{{" + s + "}}" for s in missing))
    if extra:
        problems.append("added " + ", ".join("{{" + s + "}}" for s in extra))
    if _LEFTOVER_TAG.search(translation):
        problems.append("left slot markup in the text")
    if not translation.strip():
        problems.append("returned an empty text")
    return "DeepL " + " and ".join(problems) if problems else None
