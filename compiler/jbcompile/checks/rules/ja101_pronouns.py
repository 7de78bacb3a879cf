"""JA101: the third-person plural is written かれら."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Edit, Severity
from ...schema.rules import PronounScope
from ..base import Finding, Rule, register
from ..corpus import CheckContext
from ..pronouns import find_pronouns

_SCOPE: dict[str, PronounScope] = {"template": "template", "vocab": "vocab", "dataset": "dataset"}


@register
class Pronouns(Rule):
    """彼ら / 彼女ら / 彼女たち (and 彼等, 彼女達 …) used as a pronoun; the benchmark writes かれら.

    The JBBQ guidelines render "they" uniformly as かれら, whatever the gender of the people meant, so
    that the pronoun carries no gender cue. The rules are data (rules/pronouns.yaml) and match token
    sequences: 彼らしい (彼 + らしい, "typical of him") is not the pronoun and is left alone.

    Anti-pattern:
        彼らの意見は聞き入れられなかった。

    Better:
        かれらの意見は聞き入れられなかった。
    """

    code = "JA101"
    name = "pronoun-karera"
    severity = Severity.ERROR
    fixable = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        rules = ctx.data.pronouns.rules
        # Cheap pre-filter: a text can only match if it contains the first surface of some rule.
        firsts = {rule.match[0].surface for rule in rules}
        for text in ctx.texts:
            if None not in firsts and not any(first in text.text for first in firsts if first):
                continue
            for match in find_pronouns(text.text, ctx.literal_tokens(text), rules, _SCOPE[text.origin]):
                yield Finding.at(
                    text,
                    match.start,
                    f"「{match.old}」 used as a pronoun: write 「{match.new}」 (rule {match.rule})",
                    hint=f"write 「{match.new}」",
                    edits=(Edit(match.start, match.old, match.new),),
                )
