"""Small text helpers shared by the kinds, the linter and the evaluator."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
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


def sentences(text: str, lang: str = "ja") -> list[str]:
    """The sentences of ``text``; a sentence end inside quoted speech (「はい。」) does not end one."""
    found: list[str] = []
    depth = 0
    start = 0
    ends = SENTENCE_ENDS[lang]
    for index, char in enumerate(text):
        if char == QUOTE_OPEN[lang]:
            depth += 1
        elif char == QUOTE_CLOSE[lang] and depth:
            depth -= 1
        elif char in ends and depth == 0:
            found.append(text[start : index + 1].strip())
            start = index + 1
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
