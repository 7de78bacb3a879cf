"""JA115: a quotation inside a quotation is written 『』, not 「「…」」."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Edit
from ..base import Finding, Rule, register
from ..corpus import CheckContext

# The half-width ｢｣ are the same brackets (JA113 widens them).
_OPENING, _CLOSING = "「｢", "」｣"


def nested_quote_edits(text: str) -> list[Edit]:
    """Edits turning every 「」 pair nested inside another 「」 into 『』; none when brackets do not pair."""
    edits: list[Edit] = []
    stack: list[int] = []
    for index, char in enumerate(text):
        if char in _OPENING:
            stack.append(index)
        elif char in _CLOSING:
            if not stack:
                return []
            start = stack.pop()
            if stack:
                edits += [Edit(start, text[start], "『"), Edit(index, char, "』")]
    if stack:
        return []
    return sorted(edits, key=lambda edit: edit.start)


@register
class NestedQuotes(Rule):
    """A 「」 quotation stands inside another 「」 quotation.

    Japanese writes a quotation inside a quotation with 『』 (二重かぎかっこ): 「「…」」 reads as two
    quotations side by side, and a reader (or a model) loses where the outer one ends. The fix turns
    every nested pair into 『』; unpaired brackets are left for a person to mend. Half-width ｢｣ count
    as 「」.

    Anti-pattern:
        文脈に「その{{NAME2}}は「体力的にきつい」と言った」とあるので、答えは「{{ANSWER}}」です。

    Better:
        文脈に「その{{NAME2}}は『体力的にきつい』と言った」とあるので、答えは「{{ANSWER}}」です。
    """

    code = "JA115"
    name = "nested-quotes"
    fixable = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for text in ctx.texts:
            edits = nested_quote_edits(text.text)
            for opening, closing in zip(edits[::2], edits[1::2], strict=True):
                yield Finding.at(
                    text,
                    opening.start,
                    "a 「」 quotation inside another: write the inner one as 『』",
                    hint="write the inner quotation with 『』",
                    edits=(opening, closing),
                )
