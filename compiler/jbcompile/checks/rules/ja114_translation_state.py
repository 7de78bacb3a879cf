"""JA114: machine translations are reviewed before a release."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...diagnostics import Severity
from ..base import Finding, Rule, register
from ..corpus import CheckContext


def _machine_texts(value: Any, key_path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    if isinstance(value, dict):
        if value.get("status") == "machine" and ("ja" in value or "en" in value):
            yield key_path, value
            return
        for key, item in value.items():
            yield from _machine_texts(item, key_path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _machine_texts(item, key_path + (index,))


@register
class TranslationState(Rule):
    """A machine translation not yet reviewed (status: machine); an error under --release.

    `jbcompile translate` writes DeepL output with status: machine. A person reads it, fixes it and
    sets status: reviewed; until then the text is a draft. Drafts may be built and tried, but
    `jbcompile build --release` (and `check --release`) refuses them whatever the checks setting.

    Anti-pattern:
        stereotype: {en: Old people forget things., ja: 老人は物忘れする。, status: machine}

    Better:
        stereotype: {en: Old people forget things., ja: 高齢者は物忘れが多い。, status: reviewed}
    """

    code = "JA114"
    name = "translation-state"
    japanese = False
    release_error = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for doc in ctx.project.documents.values():
            for key_path, value in _machine_texts(doc.data):
                shown = str(value.get("ja") or value.get("en") or "")
                if len(shown) > 30:
                    shown = shown[:30] + "…"
                yield Finding(
                    doc,
                    key_path + ("status",),
                    f"machine translation not reviewed: 「{shown}」",
                    hint="review the text, then set status: reviewed",
                    severity=Severity.ERROR if ctx.release else None,
                )
