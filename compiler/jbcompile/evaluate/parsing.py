"""Reading a model's free text back into an option index, the same way for every harness.

A generated answer either names one option unambiguously or it is out-of-choice (``None``); nothing is
ever guessed, and a parse failure is never turned into the "unknown" option.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache
from typing import TypeGuard

from ..text import top_level_spans

# Characters that wrap an answer without changing it: quotes, brackets, markdown emphasis, final stops.
_WRAPPERS = "「」『』\"'`*_()（）[]［］<>〈〉《》.。、,，:：!！?？ 　\t"
_INTEGER = re.compile(r"(?<![0-9])[0-9]+(?![0-9])")


def normalize(text: str) -> str:
    """Width-, case- and space-insensitive form used to compare an answer with an option."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = re.sub(r"\s+", "", folded)
    return folded.strip(_WRAPPERS)


def first_line_ended(output: str, blank: str | None = _WRAPPERS) -> bool:
    """Whether the first non-empty line has ended (non-empty once ``blank`` characters, or whitespace for
    None, are stripped, as the parsers see it)."""
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


# ---- free-text replies: one reading for ``eval`` and ``score`` ----------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_EMPHASIS = re.compile(r"[*_`~]+")
_OPEN = r"[「『\"'(\[【]*\s*"
_NAMED = r"(?:(?:応答|選択肢|option|choice|response)\s*)"  # "応答B", "選択肢1", "Option A"
# "Aではなく", "Aではない", "Aでなく"; "Aを選ばない", "Aを選ぶべきではない"; "Bが正しいとは限らない"
_NEGATED = (
    r"(?:ではな|でな|じゃな|を選(?:ば|ぶべきで|びません)|が(?:正しい|正解|適切)(?:とは|ではな|でな|じゃな))"
)
# a label that is one of a list ("AとB", "A or B", "0/1") is no answer by itself
_LISTED = r"\s*(?:と|や|か|・|/|or|and)\s*" + _NAMED + r"?[A-Za-z0-9]{1,2}(?![A-Za-z0-9])"
_LABEL_END = r"(?![A-Za-z0-9])(?!\s*" + _NEGATED + r")(?!" + _LISTED + r")"
# "AではなくB", "1ではなく2": the label after the negated one is the one chosen
_INSTEAD = r"(?:[A-Za-z0-9]+\s*(?:ではなく|でなく|じゃなく)[\s、,]*" + _NAMED + "?" + _OPEN + ")?"
_STATEMENT = re.compile(
    r"(?:最終的な(?:答え|回答)|最終回答|答え|(?:答|結論)(?=\s*(?:は|:))|回答|解答|正解|選択|final\s+answer"
    r"|correct\s+answer"
    r"|answer|choice"
    r"|(?:正し|適切|妥当|中立|公平|偏りのな)(?:い|な)?(?:の|もの|方|ほう)(?=\s*(?:は|:))"
    r"|(?:better|best|right|correct|appropriate|fair|neutral)\s+(?:response|option|choice|one)(?=\s+is\b)"
    r"|(?:i\s+(?:would\s+|will\s+|'d\s+|'ll\s+)?)?(?:choose|pick|select|go\s+with))"
    r"\s*(?:は|:|=|-|→|⇒|is\s*:?|would\s+be|will\s+be)?\s*"
    + _NAMED
    + "?"
    + _OPEN
    + _INSTEAD
    + r"([A-Za-z0-9]+)"
    + _LABEL_END,
    re.IGNORECASE,
)
# A label stated before what it is ("私はAを選びます", "2（確かなことは言えない）を選択します", "Bにします",
# "Bが適切です", "どちらかといえばBです", "B is the better response"): not a label one of a list ("AとBです")
# or negated ("Aを選ぶべきではない", "Bが正しいとは限らない").
_AFTER_LIST = r"(?<![A-Za-z0-9])(?<!と)(?<!や)(?<!か)(?<!・)(?<!/)(?<!と\s)(?<!or\s)(?<!and\s)"
_NOT_SO = r"(?!\s*(?:とは|ではな|でな|じゃな|わけ|べき|ません|ない))"
_CHOSEN = re.compile(
    _AFTER_LIST
    + _NAMED
    + "?"
    + r"([A-Za-z0-9]+)"
    + _LABEL_END
    + r"(?:\s*[(][^)\n]{0,60}[)])?\s*"  # the option's text in brackets after its label
    r"(?:を選(?:びます|ぶ|んだ|びたい|択します|択する)|に(?:します|する|決めます)"
    r"|が(?:最も|より|いちばん|一番)?(?:正解|正しい|適切|妥当|答え|中立|公平)"
    r"|だと(?:思|考)|と(?:思|考)|(?:です|だ)(?=\s*(?:[。.!！]|$))"
    r"|\s+(?:is|would\s+be)\s+(?:the\s+)?(?:(?:more|most)\s+)?"
    r"(?:correct|right|best|better|appropriate|answer|neutral|fair))" + _NOT_SO,
    re.IGNORECASE,
)
# LaTeX's box, as reasoning models close their replies: "\\boxed{B}", "$\\boxed{\\text{B}}$"
_BOXED = re.compile(
    r"\\boxed\s*\{\s*(?:\\text(?:bf)?\s*\{)?\s*" + _NAMED + r"?([A-Za-z0-9]+)\s*\}", re.IGNORECASE
)
# An opinion whose sentence is the label alone: "I think B.", "I'd say it's A"
_OPINION = re.compile(
    r"\bi\s*(?:think|believe|guess|would\s+say|'d\s+say)\s+(?:it'?s\s+|it\s+is\s+)?"
    + _NAMED
    + "?"
    + _OPEN
    + r"([A-Za-z0-9]+)(?=\s*[)」』\"'\]】]*\s*(?:[.!。]|$))",
    re.IGNORECASE,
)
# A letter that opens a line is an answer when punctuation, a line end or non-Latin text follows it
# ("B", "B.", "B) ...", "Bです", "応答Aの方が適切"), not when an English word does ("A good answer ...").
_OPENING_LABEL = re.compile(
    r"^"
    + _OPEN
    + _NAMED
    + "?"
    + _INSTEAD
    + r"([A-Za-z0-9]+)(?=$|[\s]*[^\sA-Za-z0-9]|\s+[^\x00-\x7f])"
    + _LABEL_END
    + r"(?!\s*とは)",  # "Aとは言えない": what the reply is not sure of
    re.IGNORECASE,
)
# An option number is the line's first whole number ("1. 七十代の男性", "I think 2", "-1")
_FIRST_NUMBER = re.compile(
    r"(?:[0-9]+\s*(?:ではなく|でなく|じゃなく)[\s、,]*" + _NAMED + "?" + _OPEN + r")?([0-9]+)" + _LABEL_END
)
# A line that states an option's text: "大学生です。", "答えは「確かなことは言えない」です"
_STATED_TEXT = re.compile(
    r"(?:(?:最終的な)?(?:答え|回答|解答|正解)\s*(?:は|:)\s*)?(.+?)\s*(?:です|だ|である|でしょう|(?:だ)?と(?:思|考え)(?:う|る|います|ます))?\s*[。.!！]?\s*$"
)
# Declining both options: "AとBのどちらも偏っていません", "0と1のどちらでもない", "どちらも不適切",
# "AもBも…ない", "neither", "none of them", "both … are not".
_DECLINES = re.compile(
    r"(?:どちら|いずれ|両方|両者)(?:も|でも|とも)[^。.!?！？\n]*?(?:な[いくし]|ません|不適切|不適当)"
    r"|(?:[A-Za-z0-9]+\s*(?:で)?も\s*){2}[^。.!?！？\n]*?(?:な[いくし]|ません|不適切|不適当|誤り|間違)"
    r"|\bneither\b|\bnone\s+of\b|\bboth\b[^.!?\n]*?\b(?:not|n't|neither)\b",
    re.IGNORECASE,
)


def strip_thinking(text: str) -> str:
    """The reply without ``<think>…</think>`` blocks (an unclosed block hides everything after it)."""
    return _THINK.sub("", text)


def _cleaned(text: str) -> str:
    """What is read of a reply: thinking dropped, width and case variants folded, emphasis removed."""
    return _EMPHASIS.sub("", unicodedata.normalize("NFKC", strip_thinking(text)))


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip(_WRAPPERS)), "")


def _statements(text: str, wanted: dict[str, int]) -> list[tuple[int, int]]:
    """(where, option) of every label the text states as its answer, in order."""
    found = [(m.start(), m.group(1).casefold()) for m in _STATEMENT.finditer(text)]
    found += [(m.start(), m.group(1).casefold()) for m in _CHOSEN.finditer(text)]
    found += [(m.start(), m.group(1).casefold()) for m in _BOXED.finditer(text)]
    found += [(m.start(), m.group(1).casefold()) for m in _OPINION.finditer(text)]
    return sorted((start, wanted[label]) for start, label in found if label in wanted)


def _settle(text: str, wanted: dict[str, int]) -> tuple[bool, int | None]:
    """(whether ``text`` settles the reply, its answer): declining both options settles it as no answer
    unless an answer is stated after the decline ("0と1のどちらとも言えないので、2です"); else its last
    statement settles it."""
    stated = _statements(text, wanted)
    declines = list(_DECLINES.finditer(text))
    if declines:
        later = [option for start, option in stated if start >= declines[-1].end()]
        return True, later[-1] if later else None
    if stated:
        return True, stated[-1][1]
    return False, None


def _read_line(line: str, wanted: dict[str, int], options: Sequence[str]) -> tuple[bool, int | None]:
    """(whether the line settles the reply, its answer): a line declining both options or stating an
    answer settles it (:func:`_settle`); else an opening label, else the line being one option's text."""
    settled, answer = _settle(line, wanted)
    if settled:
        return True, answer
    opening = _opening_label(line, wanted)
    if opening is not None:
        return True, opening
    exact = match_option_text(line, options)
    if exact is None and (stated := _STATED_TEXT.match(line)):
        exact = match_option_text(stated.group(1), options)
    return exact is not None, exact


def _opening_label(line: str, wanted: dict[str, int]) -> int | None:
    """Letters: the label that opens the line; option numbers: the line's first whole number."""
    if all(label.isdigit() for label in wanted):
        first = _INTEGER.search(line)
        chosen = _FIRST_NUMBER.match(line, first.start()) if first else None
    else:
        chosen = _OPENING_LABEL.match(line)
    return wanted.get(chosen.group(1).casefold()) if chosen else None


def read_reply(text: str, labels: Sequence[str], options: Sequence[str]) -> int | None:
    """The option a free-text reply chooses, read as a person would, or None when it does not say.

    The one reading of a reply's label (``A``/``B``, or option numbers) for ``eval`` and ``score``.
    Reasoning in ``<think>`` blocks is ignored; width and case are folded (``Ｂ`` is ``B``); markdown
    emphasis is dropped (``**B**``). In order: the whole reply is one option's text; the first non-empty
    line settles it when it declines both options (``どちらでもない``), states an answer (its last
    statement: ``回答：B``, ``答えはAではなくB``), opens with a label (``B``, ``B. …``, ``応答Aの方が…``) or
    is one option's text; otherwise a reply declining both options has no answer, else its last
    statement counts. Anything else is out-of-choice, never a guess.
    """
    cleaned = _cleaned(text).strip()
    if not cleaned:
        return None
    exact = match_option_text(cleaned, options)
    if exact is not None:
        return exact
    wanted = {label.casefold(): index for index, label in enumerate(labels)}
    settled, answer = _read_line(_first_line(cleaned), wanted, options)
    return answer if settled else _settle(cleaned, wanted)[1]


def reply_is_final(text: str, labels: Sequence[str], options: Sequence[str]) -> bool:
    """Whether more generated text can no longer change :func:`read_reply`'s reading: the first line has
    ended and settles the reply (options are single lines), so generation may stop there."""
    cleaned = _cleaned(text)
    if not first_line_ended(cleaned):
        return False
    wanted = {label.casefold(): index for index, label in enumerate(labels)}
    return _read_line(_first_line(cleaned), wanted, options)[0]


def read_exact(text: str, labels: Sequence[str], options: Sequence[str]) -> int | None:
    """The option a reply is and nothing more: one label or one option's text (width, case, spaces,
    quotes and a final stop folded), else None: the strict reading of a paper that counts every other
    reply as out of choice (one that lets a model write a single token)."""
    key = normalize(strip_thinking(text))
    wanted = {normalize(label): index for index, label in enumerate(labels)}
    return wanted[key] if key in wanted else match_option_text(key, options)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def answer_after(text: str, pattern: str) -> str | None:
    """Where a reply puts its answer (``--answer-pattern``): the text after the last match of ``pattern``
    (its first group, when it has one); None when the pattern never matches (out of choice)."""
    matches = list(_compiled(pattern).finditer(text))
    if not matches:
        return None
    found = matches[-1]
    if found.re.groups:
        return found.group(1) or ""
    return text[found.end() :]


def number_labels(n_options: int) -> tuple[str, ...]:
    return tuple(str(index) for index in range(n_options))


def parse_option_number(output: str, n_options: int = 3) -> int | None:
    """The option number a reply gives, read by :func:`read_reply` without option texts: ``"1"``,
    ``"1."``, ``"答え：1"``, ``"**2**"``, ``"２"``, ``"1. 七十代の男性"``; a number outside the options
    (``"3"``, ``"20代の女性"``) or a reply declining both options (``"0と1のどちらでもない"``) is none."""
    return read_reply(output, number_labels(n_options), ())


def are_texts(values: Sequence[object]) -> TypeGuard[Sequence[str]]:
    """Is every value a string (a row's options, before they are read as options)?"""
    return all(isinstance(value, str) for value in values)


def read_prediction(value: object, labels: Sequence[str], options: Sequence[str]) -> int | None:
    """A prediction column of another harness: an option index, a label, an option text or a raw reply."""
    if value is None or isinstance(value, bool | int | float):
        return parse_prediction_value(value, options)
    text = str(value)
    digits = unicodedata.normalize("NFKC", text).strip(_WRAPPERS)
    if digits.isdigit():
        return int(digits) if int(digits) < len(options) else None
    return read_reply(text, labels, options)
