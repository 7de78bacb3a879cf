"""JA120, JA121: characters a reviewer cannot see — controls, bidirectional overrides, zero-width marks.

A text is reviewed by reading it; a character that does not show cannot be reviewed. Some change what a
model reads while the text looks the same (a right-to-left override reverses what follows it; a tag
character carries hidden ASCII); some only make two texts differ that look the same (a zero-width space
in a filler adds rows that render like another filler's). Every string of the sources is scanned —
both languages, and fields no model sees — since such a character never belongs in any of them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ...diagnostics import Edit, Severity
from ...text import REMOVABLE_INVISIBLE, describe, hidden, invisible, may_hide, visible_part
from ..base import Finding, Rule, register

if TYPE_CHECKING:
    from ...loader import KeyPath, LoadedDocument
    from ..corpus import CheckContext


def _strings(value: Any) -> Iterator[tuple[KeyPath, str]]:
    """Every string value of a YAML document, in both languages, with its key path (those that may
    hold an unseen character: the others are passed over at C speed)."""
    from ...project import iter_texts

    return (
        (key_path, text) for key_path, text in iter_texts(value) if isinstance(text, str) and may_hide(text)
    )


def _texts_of(value: Any, key_path: KeyPath) -> Iterator[tuple[str, KeyPath, str]]:
    """(language, key path, text) of one filler, alternative or wording: a string, ``{ja:, en:}``, or
    ``{text: …}``."""
    if isinstance(value, str):
        yield "", key_path, value
    elif isinstance(value, dict):
        if "text" in value:
            yield from _texts_of(value["text"], key_path + ("text",))
            return
        for lang in ("ja", "en"):
            if isinstance(value.get(lang), str):
                yield lang, key_path + (lang,), value[lang]


def alternatives(ctx: CheckContext) -> Iterator[tuple[str, LoadedDocument, KeyPath, list[Any]]]:
    """Each list whose members must look different: the fillers of a vocab group, the alternatives of
    a template's word slot, the unknown-option wordings; as (what, document, key path, members)."""
    project = ctx.project
    for name, group in project.vocab.items():
        data = group.doc.data["groups"][name]
        yield f"vocab group {name}", group.doc, (*group.key_path, "fillers"), data.get("fillers") or []
    for template in project.templates:
        words = template.doc.data.get("words") if isinstance(template.doc.data, dict) else None
        for slot, members in (words or {}).items():
            if isinstance(members, list):
                yield f"word slot {slot} of {template.id}", template.doc, ("words", slot), members
    data = project.dataset_doc.data
    if isinstance(data, dict) and isinstance(data.get("unknown_options"), list):
        yield "the unknown options", project.dataset_doc, ("unknown_options",), data["unknown_options"]


def _look_alikes(ctx: CheckContext, key: Any) -> Iterator[tuple[LoadedDocument, KeyPath, str, str, str]]:
    """Members of one list that ``key`` makes equal although they differ: (document, key path of the
    later one, its text, the earlier text, what)."""
    for what, doc, base, members in alternatives(ctx):
        seen: dict[tuple[str, str], str] = {}
        for index, member in enumerate(members):
            for lang, key_path, text in _texts_of(member, (*base, index)):
                earlier = seen.setdefault((lang, key(text)), text)
                if earlier != text:
                    yield doc, key_path, text, earlier, what


@register
class HiddenCharacters(Rule):
    """A control, bidirectional override or tag character, or fillers that differ only unseen.

    NUL and other control characters, bidirectional embeddings, overrides and isolates (U+202A–U+202E,
    U+2066–U+2069) and tag characters (U+E0000–U+E007F) change what a model reads while the text looks
    the same to a reviewer, or cannot be shown at all: each is an error at its exact position (YAML
    lets them in through escapes such as "\\u202e"). Two fillers of one vocab group, two alternatives of
    one word slot or two unknown-option wordings that are equal once the invisible characters are
    removed give rows that render identically: the later one is an error too.

    `stats` reports the findings of this rule and of JA121 as `check` does (it counts the rows all
    the same; `build` refuses them), and whatever a command prints — a table of `stats`, `diff` or
    `audit`, a message — writes such a character out as `<U+202E>` instead of letting it reorder the
    line (one definition of these characters: `jbcompile/text.py`).

    Anti-pattern:
        fillers: [七十代の男性, "七十代の\\u200b男性"]
        questions: {negative: {text: "誰が\\u202e？すでしたれ遅"}}

    Better:
        fillers: [七十代の男性, 八十代の男性]
        questions: {negative: {text: 誰が遅れましたか？}}
    """

    code = "JA120"
    name = "hidden-characters"
    severity = Severity.ERROR
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for doc in ctx.project.documents.values():
            for key_path, text in _strings(doc.data):
                for offset, char in enumerate(text):
                    if hidden(char):
                        yield Finding(
                            doc,
                            key_path,
                            f"{describe(char)} in the text: it changes what a model reads, unseen",
                            offset,
                            hint="delete it (a reviewer cannot see it; a model reads it)",
                        )
        for doc, key_path, text, earlier, what in _look_alikes(ctx, visible_part):
            yield Finding(
                doc,
                key_path,
                f"{text!r} looks exactly like {earlier!r} of {what}: they differ only by invisible "
                "characters, so their rows render identically",
                hint="remove the invisible characters and the duplicate, or make the two differ visibly",
            )


@register
class InvisibleCharacters(Rule):
    """A zero-width or other invisible character, or fillers that differ only in width or form.

    Zero-width spaces, word joiners, byte order marks inside a text, left-to-right and right-to-left
    marks, soft hyphens and the like show nothing, yet make a text differ from the one a reviewer read
    (a search, a deduplication, a tokenizer all see them): `check --fix` removes them. Zero-width
    joiners and non-joiners (part of emoji sequences) and other format characters are reported only.
    Two fillers, alternatives or unknown wordings that are equal once NFKC-normalized (全角 "ＡＢ" and
    "AB", half-width ｶﾅ and カナ) look alike to a reader: a warning on the later one.

    Anti-pattern:
        ambiguous_context: "駅前で、\\u200b{{NAME1}}と{{NAME2}}が話していた。"
        fillers: [ＩＴ企業の社員, IT企業の社員]

    Better:
        ambiguous_context: 駅前で、{{NAME1}}と{{NAME2}}が話していた。
        fillers: [IT企業の社員, 銀行員]
    """

    code = "JA121"
    name = "invisible-characters"
    fixable = True
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        for doc in ctx.project.documents.values():
            for key_path, text in _strings(doc.data):
                for offset, char in enumerate(text):
                    if not invisible(char):
                        continue
                    removable = ord(char) in REMOVABLE_INVISIBLE
                    yield Finding(
                        doc,
                        key_path,
                        f"{describe(char)} in the text: it shows nothing",
                        offset,
                        hint="jbcompile check --fix removes it"
                        if removable
                        else "delete it unless it is meant",
                        edits=(Edit(offset, char, ""),) if removable else (),
                    )

        def compatible(text: str) -> str:
            return unicodedata.normalize("NFKC", visible_part(text))

        for doc, key_path, text, earlier, what in _look_alikes(ctx, compatible):
            if visible_part(text) == visible_part(earlier):
                continue  # JA120 reports these
            yield Finding(
                doc,
                key_path,
                f"{text!r} looks like {earlier!r} of {what}: the two are equal once normalized (NFKC: width, "
                "compatibility forms)",
                hint="write both the same way, or make them differ visibly",
            )
