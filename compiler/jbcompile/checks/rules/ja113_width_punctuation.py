"""JA113: full-width punctuation and katakana in Japanese text."""

from __future__ import annotations

from collections.abc import Iterable

from ..base import Finding, Rule, register
from ..corpus import CheckContext
from ..normalize import normalization_edits


@register
class WidthPunctuation(Rule):
    """ASCII ? ! , ( ), half-width katakana or punctuation (｡ ｢ ｣ ､), or mixed 。/． in Japanese text.

    Japanese text uses full-width punctuation and katakana, and one full stop and one comma
    throughout. The table is rules/normalization.yaml (what to replace, what to keep between digits,
    whether to widen half-width katakana; the half-width ｡ ｢ ｣ ､ ･ are widened in any case). English
    texts are never touched, nor is English quoted in a Japanese text (two Latin words apart by a space,
    "Excuse me, is this seat free?", or 1, 2, 3): its comma stays a comma.

    Anti-pattern:
        ｽﾏｰﾄﾌｫﾝの設定に手間取ったのは誰ですか?

    Better:
        スマートフォンの設定に手間取ったのは誰ですか？
    """

    code = "JA113"
    name = "width-punctuation"
    fixable = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        table = ctx.data.normalization
        for text in ctx.texts:
            for edit in normalization_edits(text.text, table):
                yield Finding.at(
                    text,
                    edit.start,
                    f"「{edit.old}」 in Japanese text: write 「{edit.new}」",
                    hint=f"write 「{edit.new}」",
                    edits=(edit,),
                )
