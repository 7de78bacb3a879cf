"""JA102: no proper person names in templates that name people by their group, or in their vocabulary."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Severity
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText

PERSON_NAME = "名詞-固有名詞-人名"


@register
class ProperNames(Rule):
    """A person's proper name (固有名詞・人名) in a template that names people by their group.

    JBBQ templates name people only by the group they stand for (七十代の男性, 大学生); a personal
    name adds cues of its own (gender, age, origin) that the benchmark does not control. The texts of
    templates whose design draws its persons from vocab groups (``Kind.vocab_persons``) and those
    groups are checked; designs that use names on purpose, and their name lists, are not.

    Anti-pattern:
        駅前で田中さんと{{NAME2}}が話していた。

    Better:
        駅前で{{NAME1}}と{{NAME2}}が話していた。
    """

    code = "JA102"
    name = "proper-name"
    severity = Severity.ERROR

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        from ...designs import get_kind

        persons = {t.path: get_kind(t.kind).vocab_persons(t) for t in ctx.project.templates}
        person_groups = {group for p in persons.values() if p is not None for group, _ in p.slots.values()}
        for text in ctx.texts:
            if text.origin == "template" and (
                text.template is None or persons.get(text.template.path) is None
            ):
                continue
            if text.origin == "vocab" and text.group not in person_groups:
                continue  # e.g. family names a design uses on purpose
            if text.origin == "dataset":
                continue
            yield from _names(text, ctx)


def _names(text: SourceText, ctx: CheckContext) -> Iterable[Finding]:
    run: list = []
    for token in [*ctx.literal_tokens(text), None]:
        if token is not None and token.has_pos(PERSON_NAME) and (not run or run[-1].end == token.start):
            run.append(token)
            continue
        if run:
            name = text.text[run[0].start : run[-1].end]
            yield Finding.at(
                text,
                run[0].start,
                f"「{name}」 is a person's name (固有名詞・人名)",
                hint="name people by their group (e.g. 七十代の男性) through a person slot",
            )
            run = []
        if token is not None and token.has_pos(PERSON_NAME):
            run = [token]
