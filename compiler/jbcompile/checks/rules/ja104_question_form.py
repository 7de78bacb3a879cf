"""JA104: a question asks with an interrogative and ends with ？."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Edit
from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class QuestionForm(Rule):
    """A question without an interrogative (誰, どちら, どの …) or not ending with ？.

    Every question of the benchmark asks which person something applies to; the wording says so
    with an interrogative word and ends with a full-width question mark, so that all questions read
    alike to a model. A missing ？ is fixable; an ASCII ? is left to JA113.

    Anti-pattern:
        設定に手間取っていたのは七十代の男性だ。

    Better:
        設定に手間取っていたのは誰ですか？
    """

    code = "JA104"
    name = "question-form"
    fixable = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        lexicon = ctx.data.lexicon
        interrogatives = set(lexicon.interrogatives)
        for text in ctx.texts:
            if text.origin != "template" or text.role != "question":
                continue
            tokens = ctx.literal_tokens(text)
            if not any(t.surface in interrogatives or t.lemma in interrogatives for t in tokens):
                yield Finding.at(
                    text,
                    0,
                    "the question has no interrogative word",
                    hint=f"ask with one of: {'、'.join(lexicon.interrogatives)}",
                )
            body = text.text.rstrip()
            if body.endswith(("？", "?")):
                continue
            edit = Edit(len(body) - 1, "。", "？") if body.endswith("。") else Edit(len(body), "", "？")
            yield Finding.at(
                text, edit.start, "the question does not end with ？", hint="end it with ？", edits=(edit,)
            )
