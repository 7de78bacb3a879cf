"""JA104: a question asks with an interrogative and ends with ？."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence

from ...diagnostics import Edit
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText
from ..morph import Token

# How a question may end, by the character's compatibility form (NFKC): a question mark of another form
# (︖, ﹖) and a full stop (。, ｡, ．) become ？; an exclamation or a doubled mark (！, ⁉, ‼ …) is the
# author's to change, never rewritten.
_QUESTION_MARK = "?"
_FULL_STOPS = ("。", ".")
_OTHER_ENDS = frozenset("!?‽❓❔❗❕")


def _ending(text: str) -> tuple[str, str]:
    """(what the question says, the white space after it): a line break of a block scalar is no ending."""
    body = text.rstrip("\n").rstrip()
    return body, text.rstrip("\n")[len(body) :]


def _indefinite(tokens: Sequence[Token], index: int) -> bool:
    """An interrogative made indefinite or universal by the particle after it: 誰か, 何か, どこか, いつか,
    どれか, どちらか (someone, something …), 誰も, 何も, 誰でも — a yes/no question, not a wh-question."""
    after = tokens[index + 1 : index + 3]
    if not after:
        return False
    if after[0].surface == "か" and after[0].has_pos("助詞-副助詞"):
        return True
    if after[0].surface == "も" and after[0].has_pos("助詞-係助詞"):
        return True
    return len(after) == 2 and after[0].surface == "で" and after[1].surface == "も"


@register
class QuestionForm(Rule):
    """A question without an interrogative (誰, どちら, どの …) or not ending with ？.

    Every question of the benchmark asks which person something applies to; the wording says so
    with an interrogative word and ends with a full-width question mark, so that all questions read
    alike to a model. An interrogative followed by か, も or でも (誰か, 何か, どちらか, 誰も …) names
    someone indefinite and asks nothing: the question is a yes/no question. A final 。 or another
    form of the question mark (︖, ﹖) is fixable, and so is white space after ？; a final ！ (or ⁉, ‼ …)
    is reported for the author to reword; an ASCII ? is left to JA113.

    Anti-pattern:
        設定に手間取っていたのは七十代の男性だ。
        誰かに設定を手伝ってもらったのですか？

    Better:
        設定に手間取っていたのは誰ですか？
        設定を人に手伝ってもらったのは誰ですか？
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
            if not any(
                (t.surface in interrogatives or t.lemma in interrogatives) and not _indefinite(tokens, i)
                for i, t in enumerate(tokens)
            ):
                yield Finding.at(
                    text,
                    0,
                    "the question has no interrogative word (誰か, 何か … ask a yes/no question)",
                    hint=f"ask with one of: {'、'.join(lexicon.interrogatives)}",
                )
            yield from _ending_findings(text)


def _ending_findings(text: SourceText) -> Iterator[Finding]:
    body, trailing = _ending(text.text)
    last = body[-1:]
    form = unicodedata.normalize("NFKC", last)
    if last in ("？", "?"):
        if trailing:
            edit = Edit(len(body), trailing, "")
            yield Finding.at(
                text,
                edit.start,
                "the question ends with white space after ？",
                hint="delete the white space",
                edits=(edit,),
            )
        return
    if form == _QUESTION_MARK or form in _FULL_STOPS:
        edit = Edit(len(body) - 1, last + trailing, "？")
    elif form and all(char in _OTHER_ENDS for char in form):
        yield Finding.at(
            text,
            len(body) - 1,
            f"the question ends with 「{last}」, not ？",
            hint=f"end it with ？ instead of 「{last}」",
        )
        return
    else:
        edit = Edit(len(body), trailing, "？")
    yield Finding.at(
        text,
        edit.start,
        "the question does not end with ？",
        hint="end it with ？",
        edits=(edit,),
    )
