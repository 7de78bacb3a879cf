"""Find the lexical slots of a template: the spans that vary across the filled texts of one template.

Given the texts of one template field (persons already replaced by {{NAME1}} / {{NAME2}}), align every
text to the first one token by token; the union of the spans that differ are the lexical slots, and what
each text has there are its alternatives. Tokens are words for English and runs of one script (kanji,
hiragana, katakana, latin) for Japanese, so a slot never starts or ends inside a word.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(
    r"\{\{[A-Za-z_][A-Za-z0-9_]*\}\}"  # a slot
    r"|[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*"  # an English word
    r"|\s+"
    r"|[\u4e00-\u9fff々〆ヵヶ]+"  # kanji run
    r"|[\u3040-\u309f]+"  # hiragana run
    r"|[\u30a0-\u30ffー]+"  # katakana run
    r"|[０-９Ａ-Ｚａ-ｚ]+"  # full-width latin
    r"|.",
    re.S,
)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Region:
    """Tokens ``start:end`` of the reference text vary; ``fills[i]`` is what text i has there."""

    start: int
    end: int
    fills: tuple[str, ...]


@dataclass(frozen=True)
class Alignment:
    reference: list[str]  # tokens of the reference text
    regions: list[Region]

    def template(self, names: Sequence[str]) -> str:
        """The reference text with region i replaced by ``{{names[i]}}``."""
        pieces: list[str] = []
        cursor = 0
        for region, name in zip(self.regions, names, strict=True):
            pieces.extend(self.reference[cursor : region.start])
            pieces.append("{{" + name + "}}")
            cursor = region.end
        pieces.extend(self.reference[cursor:])
        return "".join(pieces)


def _boundary(opcodes, k: int, use_max: bool) -> int:
    """Where boundary ``k`` of the reference falls in the other text (min or max when ambiguous)."""
    candidates = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal" and i1 <= k <= i2:
            candidates.append(j1 + (k - i1))
        elif tag != "equal":
            if k == i1:
                candidates.append(j1)
            if k == i2:
                candidates.append(j2)
    return max(candidates) if use_max else min(candidates)


def align(texts: Sequence[str]) -> Alignment:
    """Regions where ``texts`` differ from ``texts[0]`` and each text's content there."""
    tokenized = [tokens(t) for t in texts]
    reference = tokenized[0]
    all_opcodes = []
    spans: list[tuple[int, int]] = []
    for other in tokenized:
        opcodes = SequenceMatcher(None, reference, other, autojunk=False).get_opcodes()
        all_opcodes.append(opcodes)
        spans.extend((i1, i2) for tag, i1, i2, _, _ in opcodes if tag != "equal")
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    regions = []
    for start, end in merged:
        fills = []
        for other, opcodes in zip(tokenized, all_opcodes, strict=True):
            j_start, j_end = _boundary(opcodes, start, False), _boundary(opcodes, end, True)
            fills.append("".join(other[j_start:j_end]))
        regions.append(Region(start, end, tuple(fills)))
    return _trim(Alignment(reference, regions))


def _trim(alignment: Alignment) -> Alignment:
    """Move whitespace every alternative starts (or ends) with out of the slot, into the template."""
    reference = list(alignment.reference)
    regions = []
    for region in alignment.regions:
        start, end, fills = region.start, region.end, list(region.fills)
        while (
            start < end and reference[start].isspace() and all(f.startswith(reference[start]) for f in fills)
        ):
            fills = [f[len(reference[start]) :] for f in fills]
            start += 1
        while (
            start < end
            and reference[end - 1].isspace()
            and all(f.endswith(reference[end - 1]) for f in fills)
        ):
            fills = [f[: len(f) - len(reference[end - 1])] for f in fills]
            end -= 1
        regions.append(Region(start, end, tuple(fills)))
    return Alignment(reference, regions)
