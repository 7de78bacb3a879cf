"""Reading a model's free text back into an option index, the same way for every harness.

A generated answer either names one option unambiguously or it is out-of-choice (``None``); nothing is
ever guessed, and a parse failure is never turned into the "unknown" option.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..text import top_level_spans

# Characters that wrap an answer without changing it: quotes, brackets, markdown emphasis, final stops.
_WRAPPERS = "「」『』\"'`*_()（）[]［］<>〈〉《》.。、,，:：!！?？ 　\t"
_INTEGER = re.compile(r"(?<![0-9])[0-9]+(?![0-9])")
_LEAD_IN = re.compile(r"^(?:答え|回答|解答|正解|選択肢|answer|option)\s*(?:は|:|：|=)?\s*", re.IGNORECASE)


def normalize(text: str) -> str:
    """Width-, case- and space-insensitive form used to compare an answer with an option."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = re.sub(r"\s+", "", folded)
    return folded.strip(_WRAPPERS)


def parse_option_number(output: str, n_options: int = 3) -> int | None:
    """The option number a reply gives: the first whole number of its first non-empty line.

    ``"1"``, ``"1."``, ``"答え：1"``, ``"**2**"``, ``"２"``, ``"1. 七十代の男性"`` all parse; a number outside
    the options (``"3"``, ``"20代の女性"``) or a line without a number is out-of-choice.
    """
    text = unicodedata.normalize("NFKC", output)
    line = next((candidate.strip() for candidate in text.splitlines() if candidate.strip(_WRAPPERS)), "")
    line = _LEAD_IN.sub("", line.strip(_WRAPPERS))
    match = _INTEGER.search(line)
    if match is None:
        return None
    value = int(match.group(0))
    return value if 0 <= value < n_options else None


def first_line_ended(output: str, blank: str | None = _WRAPPERS) -> bool:
    """Whether the first non-empty line has ended (non-empty once ``blank`` characters, or whitespace for
    None, are stripped, as the parsers see it): nothing generated after it can change what
    ``parse_option_number`` or ``parse_letter`` read, so generation may stop there."""
    for line in unicodedata.normalize("NFKC", output).splitlines(keepends=True):
        body = line.splitlines()[0]
        if body.strip(blank):
            return body != line  # the line carries its line break
    return False


def holds_line_break(text: str) -> bool:
    return "".join(text.splitlines()) != text


def bracketed(output: str, open_mark: str = "【", close_mark: str = "】") -> list[str]:
    """Top-level spans between the marks, in order (a nested pair stays inside its span)."""
    return top_level_spans(output, open_mark, close_mark)


def match_option_text(answer: str, options: Sequence[str]) -> int | None:
    """The index of the single option equal to ``answer`` after normalization, else None."""
    wanted = normalize(answer)
    if not wanted:
        return None
    hits = [index for index, option in enumerate(options) if normalize(option) == wanted]
    return hits[0] if len(hits) == 1 else None


def parse_bracketed_answer(output: str, options: Sequence[str]) -> tuple[int | None, list[str]]:
    """Chain-of-thought reply: the last 【】 span is the answer text, the spans before it the evidence."""
    spans = bracketed(output)
    if not spans:
        return None, []
    *evidence, answer = spans
    return match_option_text(answer, options), evidence


def parse_prediction_value(value: object, options: Sequence[str]) -> int | None:
    """A prediction column of another harness: an option index (int or digit string) or an option text."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < len(options) else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and 0 <= value < len(options) else None
    text = str(value)
    digits = unicodedata.normalize("NFKC", text).strip(_WRAPPERS)
    if digits.isdigit():
        return int(digits) if int(digits) < len(options) else None
    return match_option_text(text, options)
