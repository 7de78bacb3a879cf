"""JA112: the ambiguous context mentions both persons."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Severity
from ...templating import slots_in
from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class Mentions(Rule):
    """The ambiguous context does not mention both persons.

    In the ambiguous condition both people are introduced and nothing tells them apart; a person
    missing from the ambiguous context makes the question unanswerable in a different way than
    intended (the model need not weigh the two at all).

    Anti-pattern:
        ambiguous_context: 駅前の携帯ショップで{{NAME1}}が店員の説明を聞いていた。

    Better:
        ambiguous_context: 駅前の携帯ショップで{{NAME1}}と{{NAME2}}が店員の説明を聞いていた。
    """

    code = "JA112"
    name = "mentions"
    severity = Severity.ERROR
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        lang = ctx.project.lang
        for template in ctx.project.templates:
            data = template.doc.data if isinstance(template.doc.data, dict) else {}
            if "ambiguous_context" not in data:
                continue
            persons = {name for name, fill in ctx.slots(template).items() if fill.role == "person"}
            value = data["ambiguous_context"]
            key_path: tuple = ("ambiguous_context",)
            if isinstance(value, dict):
                value, key_path = value.get(lang), (*key_path, lang)
            if not isinstance(value, str):
                continue
            mentioned = {slot for slot, _, _ in slots_in(value)}
            for slot in sorted(persons - mentioned):
                yield Finding(
                    template.doc,
                    key_path,
                    f"the ambiguous context does not mention {{{{{slot}}}}}",
                    hint="introduce both persons in the ambiguous context",
                )
