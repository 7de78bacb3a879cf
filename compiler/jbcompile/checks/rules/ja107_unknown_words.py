"""JA107: words MeCab does not know (catches typos)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..base import Finding, Rule, register
from ..corpus import CheckContext

_ASCII = re.compile(r"^[\x00-\x7f\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]+$")
_HALFWIDTH = re.compile(r"[\uff65-\uff9f]")  # left to JA113, which widens it
_SYMBOLS = ("補助記号", "記号", "空白")


@register
class UnknownWords(Rule):
    """A word MeCab's dictionary does not know: often a typo.

    Every template text, filler, lexical alternative and unknown-option wording is analysed; a token
    that MeCab had to guess is reported. Latin letters, digits and symbols are not. Correct words the
    dictionary lacks go into rules/lexicon.yaml known_words. Half-width katakana is left to JA113.

    Anti-pattern:
        新しいタブレトの設定について聞いていた。

    Better:
        新しいタブレットの設定について聞いていた。
    """

    code = "JA107"
    name = "unknown-word"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        known = set(ctx.data.lexicon.known_words)
        for text in ctx.texts:
            for token in ctx.literal_tokens(text):
                if not token.unknown or token.surface in known or _ASCII.match(token.surface):
                    continue
                if _HALFWIDTH.search(token.surface):
                    continue
                if any(token.has_pos(p) for p in _SYMBOLS):
                    continue
                yield Finding.at(
                    text,
                    token.start,
                    f"unknown word 「{token.surface}」 (not in MeCab's dictionary)",
                    hint="check the spelling; if the word is right, add it to rules/lexicon.yaml known_words",
                )
