"""JA103: person mentions in a disambiguating context refer back with その / この."""

from __future__ import annotations

from collections.abc import Iterable

from ...templating import slots_in
from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class Demonstratives(Rule):
    """A person is mentioned in a disambiguating context without a demonstrative (その/この).

    The disambiguating context follows the ambiguous one and speaks about the same two people. JBBQ
    inserts a demonstrative before each mention so that the reader takes them as the people already
    introduced, not as new ones. The fix is suggested in the hint, not applied: the sentence may need
    rephrasing around it.

    Anti-pattern:
        {{NAME1}}は説明を聞いただけで設定を終えた。

    Better:
        その{{NAME1}}は説明を聞いただけで設定を終えた。
    """

    code = "JA103"
    name = "demonstrative"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        demonstratives = set(ctx.data.lexicon.demonstratives)
        for text in ctx.texts:
            if text.origin != "template" or not text.key_path or text.key_path[0] != "disambiguating_context":
                continue
            filled = ctx.filled(text)
            if filled is None:
                continue
            ends = {t.end for t in ctx.tokens(filled.text) if t.surface in demonstratives}
            for span, (_slot, start, _end) in zip(filled.spans, slots_in(text.text), strict=True):
                if span.role != "person" or span.start in ends:
                    continue
                if span.start in {other.end for other in filled.spans if other.role == "person"}:
                    continue  # right after another person slot: one mention ({{NAME1}}{{GEN1}})
                if any(span.filler.startswith(d) for d in demonstratives):
                    continue
                yield Finding.at(
                    text,
                    start,
                    f"{{{{{span.slot}}}}} is mentioned without a demonstrative in the disambiguating context",
                    hint=f"write その{{{{{span.slot}}}}} (a person of the ambiguous context)",
                )
