"""JA117: a lexical alternative sets the story at a time of year another text of the template rules out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText


@dataclass(frozen=True)
class _Mention:
    """An event or a time phrase found in one text of a template."""

    text: SourceText
    start: int
    words: str  # the event or phrase
    months: frozenset[int]
    event: bool  # an event (held in these months), else a time phrase (said in these months)

    @property
    def alternative(self) -> tuple[str, object] | None:
        """(slot, index) when the text is an alternative of a WORD slot; None for a text every row shows."""
        path = self.text.key_path
        return (str(path[1]), path[2]) if self.text.role == "word" and len(path) > 2 else None

    def shown_with(self, other: _Mention) -> bool:
        """Whether some row shows both: two alternatives of one slot never stand in the same row."""
        mine, theirs = self.alternative, other.alternative
        return mine is None or theirs is None or mine[0] != theirs[0] or mine == theirs


def _mentions(texts: list[SourceText], table: dict[str, list[int]], event: bool) -> Iterator[_Mention]:
    for text in texts:
        for words, months in table.items():
            start = text.text.find(words)
            if start != -1:
                yield _Mention(text, start, words, frozenset(months), event)


@register
class TimeContradictions(Rule):
    """A lexical alternative names an event whose time of year contradicts a time another text gives.

    Every alternative of a WORD slot must fit every other text of the template: a 新年会 (January)
    cannot happen "this spring", so 「この春に入社したばかりの後輩」 with WORD1 = 新年会 tells a reader the
    story does not hold together. The event and the time phrase may stand anywhere a row shows them
    together, as long as one is an alternative: one in an alternative and the other in the context
    (either way round), or in alternatives of two different slots, which rows combine. Two texts every
    row shows are the story as written (この秋、成人式の前撮りをした) and are not compared. The events
    and phrases, with their months, are data in rules/lexicon.yaml (``event_months``, ``time_deixis``:
    この春, 今春, 今年の春 …; 来春 or 去年の春 can be said in any month and rule nothing out); a pair is
    reported when none of the event's months is a month the phrase allows, at the alternative (at the
    event when both are alternatives).

    Anti-pattern:
        words: {WORD1: [歓迎会, 新年会]}
        ambiguous_context: 職場の{{WORD1}}で、この春に入社した後輩と同じテーブルになった。

    Better:
        words: {WORD1: [歓迎会, 懇親会]}
    """

    code = "JA117"
    name = "time-contradictions"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        lexicon = ctx.data.lexicon
        by_template: dict[str, list[SourceText]] = {}
        for text in ctx.texts:
            if text.template is not None:
                by_template.setdefault(text.template.path, []).append(text)
        for texts in by_template.values():
            phrases = list(_mentions(texts, lexicon.time_deixis, event=False))
            if not phrases:
                continue
            clashes: dict[tuple, tuple[_Mention, list[_Mention]]] = {}
            for event in _mentions(texts, lexicon.event_months, event=True):
                for phrase in phrases:
                    if not (event.alternative or phrase.alternative):
                        continue  # the template's own texts: what they say is the story, not a choice
                    if not event.shown_with(phrase) or not phrase.months.isdisjoint(event.months):
                        continue
                    at, other = (
                        (phrase, event) if phrase.alternative and not event.alternative else (event, phrase)
                    )
                    key = (at.text.doc.path, at.text.key_path, at.start, at.words)
                    clashes.setdefault(key, (at, []))[1].append(other)
            for at, others in clashes.values():
                against = "; ".join(
                    f"{_described(other)} in {'.'.join(str(part) for part in other.text.key_path)}"
                    for other in others
                )
                yield Finding.at(
                    at.text,
                    at.start,
                    f"{_described(at)} contradicts {against}",
                    hint="choose alternatives that fit every text of the template, "
                    "or change the time in the other text",
                )


def _described(mention: _Mention) -> str:
    months = "/".join(map(str, sorted(mention.months)))
    return f"「{mention.words}」 ({'held' if mention.event else 'said'} in month {months})"
