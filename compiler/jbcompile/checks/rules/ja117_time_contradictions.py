"""JA117: a lexical alternative sets the story at a time of year another text of the template rules out."""

from __future__ import annotations

from collections.abc import Iterable

from ..base import Finding, Rule, register
from ..corpus import CheckContext


@register
class TimeContradictions(Rule):
    """A lexical alternative names an event whose time of year contradicts a time another text gives.

    Every alternative of a WORD slot must fit every other text of the template: a 新年会 (January)
    cannot happen "this spring", so 「この春に入社したばかりの後輩」 with WORD1 = 新年会 tells a reader the
    story does not hold together. The events and phrases, with their months, are data in
    rules/lexicon.yaml (``event_months``, ``time_deixis``); an alternative is reported when none of its
    months is a month the phrase allows.

    Anti-pattern:
        words: {WORD1: [歓迎会, 新年会]}
        ambiguous_context: 職場の{{WORD1}}で、この春に入社した後輩と同じテーブルになった。

    Better:
        words: {WORD1: [歓迎会, 懇親会]}
    """

    code = "JA117"
    name = "time-contradictions"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        events = ctx.data.lexicon.event_months
        deixis = ctx.data.lexicon.time_deixis
        by_template: dict[str, list] = {}
        for text in ctx.texts:
            if text.template is not None:
                by_template.setdefault(text.template.path, []).append(text)
        for texts in by_template.values():
            anchors = [
                (text, phrase, set(months))
                for text in texts
                if text.role != "word"
                for phrase, months in deixis.items()
                if phrase in text.text
            ]
            if not anchors:
                continue
            for word in (text for text in texts if text.role == "word"):
                for event, months in events.items():
                    start = word.text.find(event)
                    if start == -1:
                        continue
                    for anchor, phrase, allowed in anchors:
                        if allowed.isdisjoint(months):
                            where = ".".join(str(part) for part in anchor.key_path)
                            yield Finding.at(
                                word,
                                start,
                                f"「{event}」 (month {'/'.join(map(str, months))}) contradicts 「{phrase}」 "
                                f"in {where}",
                                hint="choose alternatives that fit every text of the template, "
                                "or change the time in the other text",
                            )
                            break
