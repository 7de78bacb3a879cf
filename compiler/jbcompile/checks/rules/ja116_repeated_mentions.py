"""JA116: the same person (or pair) opens two consecutive sentences by name."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ...text import sentences
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText

# A sentence that opens with a slot mention (or two joined by と) as its topic or subject.
_OPENING = re.compile(
    r"^(?:その|この)?\{\{(?P<a>\w+)\}\}(?:さん)?(?:と(?:その|この)?\{\{(?P<b>\w+)\}\}(?:さん)?)?(?:は|が|も)"
)
# The contexts that come first; any other context of the template follows one of them.
_LEADS = ("ambiguous_context", "background_context")


def _openings(text: str) -> Iterator[tuple[int, frozenset[str]]]:
    """(offset, slots) of every sentence of ``text`` that opens with a slot mention."""
    start = 0
    for sentence in sentences(text):
        offset = text.find(sentence, start)
        start = offset + len(sentence)
        match = _OPENING.match(sentence)
        if match:
            yield offset, frozenset(slot for slot in match.group("a", "b") if slot)
        else:
            yield offset, frozenset()


def _whole_context(field: tuple) -> bool:
    """A context field, or one part of a context given in parts (per-person ``statements``, each of
    which follows the ambiguous context in one of the two orders)."""
    return len(field) == 1 or (len(field) == 3 and field[1] == "statements")


@register
class RepeatedMentions(Rule):
    """Two consecutive sentences both open by naming the same person or the same pair.

    Japanese does not name the topic again in the next sentence: 「佐藤さんと鈴木さんは…。佐藤さんと鈴木さんは
    …」 reads like a list of facts pasted together. Write 二人は, かれらは, drop the repeated topic, or join
    the sentences. The check reads each context after the one it follows (a disambiguating context after
    the ambiguous one — each per-person statement of a two-order context on its own —, a problem's context
    after the shared background).

    Anti-pattern:
        background_context: {{NAME1}}さんと{{NAME2}}さんは、同じ中学校に通っていた幼なじみだ。
        culture_context: {{NAME1}}さんと{{NAME2}}さんは、今年の成人式にそろって出席した。

    Better:
        culture_context: 二人は今年の成人式にそろって出席した。
    """

    code = "JA116"
    name = "repeated-mentions"
    japanese = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        by_template: dict[str, dict[str, SourceText]] = {}
        for text in ctx.texts:
            if text.template is not None and text.role == "context" and _whole_context(text.field):
                by_template.setdefault(text.template.path, {})[".".join(map(str, text.field))] = text
        for contexts in by_template.values():
            leads = [contexts[key] for key in _LEADS if key in contexts]
            followers = [text for key, text in contexts.items() if key not in _LEADS]
            found: dict[tuple, Finding] = {}
            for lead in leads:
                for finding in self._within(lead, None):
                    found.setdefault((finding.key_path, finding.offset), finding)
            endings = [list(_openings(lead.text))[-1][1] if lead.text.strip() else None for lead in leads]
            for follower in followers:
                for ending in endings or [None]:
                    for finding in self._within(follower, ending):
                        found.setdefault((finding.key_path, finding.offset), finding)
            yield from found.values()

    def _within(self, text: SourceText, before: frozenset[str] | None) -> Iterator[Finding]:
        previous = before
        for offset, slots in _openings(text.text):
            if slots and slots == previous:
                names = "と".join(f"{{{{{slot}}}}}" for slot in sorted(slots))
                yield Finding.at(
                    text,
                    offset,
                    f"{names} opens this sentence and the one before it",
                    hint="write 二人は / かれらは, leave the topic out, or join the two sentences",
                )
            previous = slots
