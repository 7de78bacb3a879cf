"""JA106: a filler starts and ends on a morpheme boundary once slotted in."""

from __future__ import annotations

from collections.abc import Iterable

from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class SlotBoundaries(Rule):
    """A filler fuses with the text around its slot into one word.

    After filling, MeCab should see the filler as word(s) of its own. When a filler's last
    characters and the next characters of the template form a different word (or its first
    characters join the preceding ones), the filled sentence reads differently from what the
    template meant. Every distinct filled variant is checked, around each filler; the finding quotes
    the filled sentence.

    Anti-pattern:
        {{WORD1}}性の検査を受けた。   with WORD1 = 男 → 男性の検査 (男性 "man", not 男 + 性)

    Better:
        {{WORD1}}の検査を受けた。
    """

    code = "JA106"
    name = "slot-boundary"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        seen: set[tuple] = set()
        for text in ctx.texts:
            if text.origin != "template":
                continue
            for problem in ctx.boundary_problems(text):
                key = (text.doc.path, text.key_path, problem.slot, problem.filler, problem.side)
                if key in seen:
                    continue
                seen.add(key)
                start, end = problem.placeholder
                where = "following" if problem.side == "end" else "preceding"
                yield Finding.at(
                    text,
                    end if problem.side == "end" else start,
                    f"filler 「{problem.filler}」 of {{{{{problem.slot}}}}} fuses with the {where} text into "
                    f"「{problem.token}」: 「{problem.sentence}」",
                    hint="separate the slot with a particle or rephrase, or change the filler",
                )
