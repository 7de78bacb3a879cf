"""JA105: the negative and non-negative questions of a template form a minimal pair."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher

from ...text import compatible
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText


@register
class QuestionPair(Rule):
    """The negative and non-negative questions differ in more than a negation or an antonym.

    The two questions of a template are a minimal pair: the same sentence with one predicate negated
    or turned into its opposite, so that the only thing that changes between them is the polarity.
    The rule compares the two token sequences (lemmas): it warns when they share less than
    question_pair_min_similarity of their tokens, or differ in more than question_pair_max_changes
    separate places (rules/lexicon.yaml); identical questions are reported too, and so are questions
    that differ only in width or form (ＩＴ and IT, ？ and ?: equal once NFKC-normalized, as JA121
    compares).

    Anti-pattern:
        negative: 設定に手間取っていたのは誰ですか？
        non_negative: 店員に褒められたのはどちらの客ですか？

    Better:
        negative: 設定に手間取っていたのは誰ですか？
        non_negative: 設定をすぐに終えたのは誰ですか？
    """

    code = "JA105"
    name = "question-pair"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        threshold = ctx.data.lexicon.question_pair_min_similarity
        max_changes = ctx.data.lexicon.question_pair_max_changes
        pairs: dict[str, dict[str, SourceText]] = {}
        for text in ctx.texts:
            field = text.field
            if (
                text.origin == "template"
                and text.role == "question"
                and len(field) == 3
                and field[2] == "text"
            ):
                pairs.setdefault(text.doc.path, {})[str(field[1])] = text
        for questions in pairs.values():
            negative, non_negative = questions.get("negative"), questions.get("non_negative")
            if negative is None or non_negative is None:
                continue
            a = [t.lemma or t.surface for t in ctx.literal_tokens(negative)]
            b = [t.lemma or t.surface for t in ctx.literal_tokens(non_negative)]
            if compatible(negative.text).strip() == compatible(non_negative.text).strip():
                yield Finding.at(
                    non_negative,
                    0,
                    "the negative and the non-negative question are the same",
                    hint="negate the predicate or use its antonym",
                )
                continue
            matcher = SequenceMatcher(None, a, b, autojunk=False)
            similarity = matcher.ratio()
            changes = sum(1 for op, *_ in matcher.get_opcodes() if op != "equal")
            if similarity < threshold or changes > max_changes:
                yield Finding.at(
                    non_negative,
                    0,
                    f"the two questions differ in more than a negation or an antonym (they differ in "
                    f"{changes} place(s) and share {similarity:.0%} of their words; expected at most "
                    f"{max_changes} and at least {threshold:.0%})",
                    hint="reuse the negative question's wording and change only its predicate",
                )
