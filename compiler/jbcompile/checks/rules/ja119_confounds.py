"""JA119: the two persons of a pair differ in an attribute their template does not test."""

from __future__ import annotations

from collections.abc import Iterable

from ...audit.attributes import AttributeReader
from ..base import Finding, Rule, register
from ..corpus import CheckContext
from .ja109_options import person_pairs

SHOWN = 3  # pairs named in a finding


@register
class ConfoundedPairs(Rule):
    """Two persons a row sets side by side differ in an attribute their template does not test.

    A template tests one attribute (age, in an Age template). When its two persons also differ in another
    — 七十代の男性 against 三十代の女性 also sets a man against a woman — a model can answer from that
    attribute's stereotype, and the rows no longer measure the bias they are about. Which words mark
    which attribute is data (rules/attributes.yaml); the shortcut audit counts the rows
    (`jbcompile audit`, probe attribute-confound).

    Anti-pattern:
        NAME1: {group: age_old, target: true, only: [七十代の男性]}
        NAME2: {group: age_young, only: [三十代の女性]}

    Better:
        NAME1: {group: age_old, target: true, only: [七十代の男性]}
        NAME2: {group: age_young, only: [三十代の男性]}
    """

    code = "JA119"
    name = "confounded-pair"
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        from ...designs import get_kind

        reader = AttributeReader(ctx.data.attributes)
        for template in ctx.project.templates:
            persons = get_kind(template.kind).vocab_persons(template)
            if persons is None:
                continue
            category = str(getattr(template.model, "category", ""))
            pairs = list(person_pairs(ctx.project, persons))
            found = [
                (first.text, second.text, differences)
                for first, second in pairs
                if (differences := reader.differences(first.text, second.text, category))
            ]
            if not found:
                continue
            shown = "; ".join(
                f"{first} / {second} ({', '.join(f'{name} {a}/{b}' for name, a, b in differences)})"
                for first, second, differences in found[:SHOWN]
            )
            yield Finding(
                template.doc,
                ("persons",),
                f"{len(found)} of the {len(pairs)} person pairs differ in an attribute that category "
                f"{category} "
                f"does not test: {shown}" + (" …" if len(found) > SHOWN else ""),
                hint="limit the persons with `only:` to wordings that agree in every other attribute",
            )
