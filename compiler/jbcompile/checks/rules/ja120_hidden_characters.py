"""JA120, JA121: characters a reviewer cannot see — controls, bidirectional overrides, zero-width marks.

A text is reviewed by reading it; a character that does not show cannot be reviewed. Some change what a
model reads while the text looks the same (a right-to-left override reverses what follows it; a tag
character carries hidden ASCII); some only make two texts differ that look the same (a zero-width space
in a filler adds rows that render like another filler's). Every string of the sources is scanned —
both languages, and fields no model sees — since such a character never belongs in any of them.

What a reviewer reads is the file, not only its values: every text file of the sources that jbcompile
reads (:func:`jbcompile.sourcefiles.text_files`: the YAML sources, the rules, the translations,
CHANGELOG.md, README.md) is scanned whole too, so that a character written in a comment, a key or
anywhere else outside a value is found where it stands (the "Trojan Source" class). The values of every
YAML file are scanned as values (an escape such as "\\u202e" counts there); outside them, what is
written counts (an escape in a key shows). A character is reported once, where it is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ...diagnostics import DiagnosticError, Edit, Severity
from ...loader import LoadedDocument, parse_yaml, read_source_text
from ...paths import display_path
from ...sourcefiles import SOURCE_SUFFIX, text_files, text_kind
from ...text import (
    REMOVABLE_INVISIBLE,
    compatible,
    describe,
    hidden,
    invisible,
    line_and_column,
    may_hide,
    unseen_in_file,
    visible_part,
)
from ...yamledit import content_span, written_scalars
from ..base import Finding, Rule, register

if TYPE_CHECKING:
    from ...loader import KeyPath
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


@dataclass(frozen=True)
class Unseen:
    """One hidden or invisible character of the sources, and where it is written."""

    char: str
    doc: LoadedDocument
    key_path: KeyPath  # the value holding it, or the key; () elsewhere
    where: str  # "in the text", "in a comment", "in the key 'x'", …
    offset: int | None = None  # its place in the value at ``key_path``
    position: tuple[int, int] | None = None  # (line, col) where it stands outside any value
    row_text: bool = False  # a value of the dataset, a vocab or a template file: what rows are made of


def unseen_characters(ctx: CheckContext) -> Iterator[Unseen]:
    """Every hidden or invisible character of the sources, once each: in the values of the project's
    documents, then in every text file jbcompile reads, whatever stands outside those values."""
    project = ctx.project
    for document in project.documents.values():
        yield from _in_values(document, row_text=True)
    for path in text_files(project.root):
        shown = display_path(path)
        yaml_file = path.suffix == SOURCE_SUFFIX
        try:
            text = read_source_text(path, text_kind(path), shown)
        except DiagnosticError:
            continue  # unreadable: the check runner reports it (sourcefiles.text_file_problems)
        doc = project.documents.get(shown)
        found = list(unseen_in_file(text))
        if doc is None and yaml_file and (found or "\\" in text):  # an escape may stand for one
            doc = _parsed(text, shown)
            if doc is not None:
                yield from _in_values(doc, row_text=False)
        if found:
            yield from _outside_values(doc, text, found, shown)


def _parsed(text: str, shown: str) -> LoadedDocument | None:
    """A YAML file the project's own loading does not keep (rules, translations), or None when it is
    not valid YAML: the command that reads it says so, and the file is scanned as text."""
    try:
        return parse_yaml(text, shown)
    except DiagnosticError:
        return None


def _in_values(doc: LoadedDocument, *, row_text: bool) -> Iterator[Unseen]:
    for key_path, text in _strings(doc.data):
        for offset, char in enumerate(text):
            if hidden(char) or invisible(char):
                yield Unseen(char, doc, key_path, "in the text", offset, row_text=row_text)


class _Written(NamedTuple):
    """Where one scalar's content is written in a file's text."""

    start: int
    end: int
    is_key: bool
    key_path: KeyPath


def _outside_values(
    doc: LoadedDocument | None, text: str, found: list[tuple[int, str]], shown: str
) -> Iterator[Unseen]:
    """The characters of ``found`` (index in ``text``) that stand outside the values of ``doc`` (all of
    them when it is None: a Markdown file, or YAML that does not parse); a value's own are reported with
    it."""
    scalars = [
        _Written(*content_span(text, node), is_key, key_path)
        for is_key, key_path, node in (written_scalars(text) if doc is not None else ())
    ]
    for index, char in found:
        scalar = next((s for s in scalars if s.start <= index < s.end), None)
        if scalar is not None and not scalar.is_key:
            continue  # in a value: reported with the value (escapes included)
        line_start = text.rfind("\n", 0, index) + 1
        position = line_and_column(text, index)
        if scalar is not None:
            where, key_path = f"in the key {scalar.key_path[-1]!r}", scalar.key_path
        elif doc is None:
            where, key_path = "in the file", ()
        elif _commented(text, line_start, index, scalars):
            where, key_path = "in a comment", ()
        else:
            where, key_path = "outside any value", ()
        yield Unseen(char, doc or LoadedDocument(shown, None), key_path, where, position=position)


def _commented(text: str, line_start: int, index: int, scalars: list[_Written]) -> bool:
    """Does a YAML comment (``#`` after a blank or at the line's start, outside any scalar) hold ``index``?"""
    return any(
        text[at] == "#"
        and (at == line_start or text[at - 1] in " \t")
        and not any(s.start <= at < s.end for s in scalars)
        for at in range(line_start, index)
    )


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

    Not only the values: every text file of the sources that jbcompile reads — dataset.yaml, vocab,
    templates, the project's own rules, the translations, CHANGELOG.md and README.md — is read whole,
    and such a character written in a comment (a block scalar's header line included), a key or
    anywhere else outside a value is reported where it stands, once ("Trojan Source": a right-to-left
    override in a comment reorders what a reviewer sees of the line). It is an error there too, as in a
    value: a reviewer reads the comments and the keys, and a character that cannot be seen never
    belongs in them. Outside the values only what is written counts: a key spelled with an escape
    ("\\u200b", in a rule about that character) shows and is not reported. A line's inline
    suppression silences a finding in its comment.

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
        for found in unseen_characters(ctx):
            if not hidden(found.char):
                continue
            reader = "a model" if found.row_text else "a reviewer"
            yield Finding(
                found.doc,
                found.key_path,
                f"{describe(found.char)} {found.where}: it changes what {reader} reads, unseen",
                found.offset,
                hint="delete it (a reviewer cannot see it; a model reads it)"
                if found.row_text
                else "delete it (a reviewer cannot see it)",
                position=found.position,
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

    Like JA120, it reads every text file of the sources whole: such a character in a comment, a key or
    elsewhere outside a value is a warning too, as in a value, but `--fix` leaves it to the author
    (it edits values only; a key is a name other files use). The values of the rules and translation
    files are fixed as the others are.

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
        for found in unseen_characters(ctx):
            if not invisible(found.char):
                continue
            removable = ord(found.char) in REMOVABLE_INVISIBLE
            fixed = removable and found.offset is not None  # --fix edits values, never a comment or a key
            yield Finding(
                found.doc,
                found.key_path,
                f"{describe(found.char)} {found.where}: it shows nothing",
                found.offset,
                hint="delete it"
                if fixed
                else "delete it (`check --fix` edits values only)"
                if removable
                else "delete it unless it is meant",
                edits=(Edit(found.offset, found.char, ""),) if fixed and found.offset is not None else (),
                position=found.position,
            )

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
