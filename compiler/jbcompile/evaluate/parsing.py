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


# ---- raw replies of other harnesses (``score --prediction-field generated_text``) ----------------------

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_EMPHASIS = re.compile(r"[*_`~]+")
_STATEMENT = re.compile(
    r"(?:最終的な(?:答え|回答)|最終回答|答え|回答|解答|正解|選択|final\s+answer|correct\s+answer|answer|i\s+choose"
    r"|i\s+pick|i\s+select)"
    r"\s*(?:は|:|=|is|would\s+be|will\s+be)?\s*(?:応答|選択肢|option|choice|response)?\s*"
    r"[「『\"'(\[【]*\s*([A-Za-z0-9]+)(?![A-Za-z0-9])(?!\s*(?:ではなく|でなく|じゃなく))",
    re.IGNORECASE,
)
# A label that opens a line is an answer when punctuation, a line end or non-Latin text follows it
# ("B", "B.", "B) ...", "Bです"), not when an English word does ("A good answer ...").
_OPENING_LABEL = re.compile(r"^[「『\"'(\[【]*([A-Za-z0-9]+)(?=$|[\s]*[^\sA-Za-z0-9]|\s+[^\x00-\x7f])")


def strip_thinking(text: str) -> str:
    """The reply without ``<think>…</think>`` blocks (an unclosed block hides everything after it)."""
    return _THINK.sub("", text)


def read_reply(text: str, labels: Sequence[str], options: Sequence[str]) -> int | None:
    """The option a free-text reply chooses, read as a person would, or None when it does not say.

    Reasoning in ``<think>`` blocks is ignored; width and case are folded (``Ｂ`` is ``B``); markdown
    emphasis is dropped (``**B**``). In order: the whole reply is one option's text; the last explicit
    statement (``回答：B``, ``答えはBです``, ``The answer is B.``, ``Final answer: B``) names a label; the
    first line opens with a label (``B``, ``B. …``). Anything else is out-of-choice, never a guess.
    """
    cleaned = _EMPHASIS.sub("", unicodedata.normalize("NFKC", strip_thinking(text))).strip()
    if not cleaned:
        return None
    wanted = {label.casefold(): index for index, label in enumerate(labels)}
    exact = match_option_text(cleaned, options)
    if exact is not None:
        return exact
    stated = [
        wanted[m.group(1).casefold()] for m in _STATEMENT.finditer(cleaned) if m.group(1).casefold() in wanted
    ]
    if stated:
        return stated[-1]
    first = next((line.strip() for line in cleaned.splitlines() if line.strip(_WRAPPERS)), "")
    opening = _OPENING_LABEL.match(first)
    if opening and opening.group(1).casefold() in wanted:
        return wanted[opening.group(1).casefold()]
    return match_option_text(first, options)


def read_prediction(value: object, labels: Sequence[str], options: Sequence[str]) -> int | None:
    """A prediction column of another harness: an option index, a label, an option text or a raw reply."""
    if value is None or isinstance(value, bool | int | float):
        return parse_prediction_value(value, options)
    text = str(value)
    digits = unicodedata.normalize("NFKC", text).strip(_WRAPPERS)
    if digits.isdigit():
        return int(digits) if int(digits) < len(options) else None
    return read_reply(text, labels, options)
