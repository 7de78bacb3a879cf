"""What the rules look at: every Japanese text of a project, where it stands, and its analyses.

Built once per run and shared by every rule, so that each distinct string is tokenized once:

- :class:`SourceText`: one string scalar of the sources (template texts keep their ``{{SLOT}}``
  placeholders), with its document and key path, so that a finding can point at it and fix it.
- *literal tokens* of a text: its morphemes with offsets into the source scalar. A template text is
  analysed as a real sentence (each slot filled with its first filler), and only the tokens outside
  the fillers are kept; fillers and lexical alternatives are analysed where they are written.
- *filled variants*: the filled texts of a template differ only around their fillers. For every
  placeholder and every filler it takes, the filler with the few characters around it (up to the
  next clause mark or neighbouring placeholder) is analysed, once per distinct string. That covers
  every distinct filled variant of every text at the places where variants differ, at a fraction
  of the cost of analysing each whole sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..designs import get_kind
from ..templating import FilledText, SlotSpan, slots_in
from .morph import Analyzer, Token, analyzer
from .ruledata import RuleData
from .slots import SlotFill

if TYPE_CHECKING:
    from ..loader import KeyPath, LoadedDocument
    from ..projecttypes import Project, SourceTemplate

JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")

# Template fields that are notes for maintainers or identifiers, never shown to a model.
_NOT_SHOWN = {
    "notes",
    "id",
    "kind",
    "category",
    "subcategory",
    "origin",
    "upstream",
    "persons",
    "stereotyped_groups",
    "review",
}

# Characters that end a clause, in every width: a filler's neighbourhood never reaches across them.
_CLAUSE_END = set("。、！？!?「」『』（）()\n｡､｢｣，．")
NEIGHBOURHOOD = 4  # characters on each side of a filler analysed with it


def is_japanese(text: str) -> bool:
    return bool(JAPANESE.search(text))


@dataclass(frozen=True)
class SourceText:
    """One Japanese string scalar of the sources."""

    doc: LoadedDocument
    key_path: KeyPath  # of the string scalar itself (ending in "ja" for a {ja: …} text)
    text: str  # the scalar's value
    origin: str  # "template" | "vocab" | "dataset"
    role: str  # context | question | predicate | rationale | word | stereotype | metadata | text |
    #            filler | option | unknown_option
    template: SourceTemplate | None = None
    group: str | None = None  # the vocab group of a filler or option

    @property
    def field(self) -> KeyPath:
        """The key path without a trailing ``ja`` (the field the text belongs to)."""
        return self.key_path[:-1] if self.key_path and self.key_path[-1] == "ja" else self.key_path


@dataclass(frozen=True)
class Boundary:
    """A filler that does not start or end on a morpheme boundary once slotted in."""

    slot: str
    filler: str
    side: str  # "start" | "end"
    token: str  # the morpheme that straddles the boundary
    placeholder: tuple[int, int]  # where the placeholder stands in the source scalar
    sentence: str  # the text filled with this filler (and the first filler of every other slot)


def text_leaves(value: Any, key_path: KeyPath = ()) -> Iterator[tuple[KeyPath, str]]:
    """Every string of a YAML value with its key path; a ``{ja: …}`` text yields its ``ja`` string only."""
    if isinstance(value, str):
        yield key_path, value
    elif isinstance(value, dict):
        if "ja" in value or "en" in value:
            if isinstance(value.get("ja"), str):
                yield key_path + ("ja",), value["ja"]
            return
        for key, item in value.items():
            yield from text_leaves(item, key_path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from text_leaves(item, key_path + (index,))


def _template_role(key_path: KeyPath) -> str:
    head = str(key_path[0]) if key_path else ""
    if head == "questions":
        return "predicate" if "predicate" in key_path else "question"
    if "context" in head:
        return "context"
    return {
        "rationale": "rationale",
        "words": "word",
        "stereotype": "stereotype",
        "attested": "metadata",
    }.get(head, "text")


@dataclass
class CheckContext:
    """Everything the rules read, computed lazily and once."""

    project: Project
    data: RuleData
    release: bool = False
    analyzer: Analyzer = field(default_factory=analyzer)
    problems: list[tuple[SourceTemplate, BaseException]] = field(default_factory=list)

    _slots: dict[str, dict[str, SlotFill]] = field(default_factory=dict)
    _literal: dict[tuple[str, KeyPath], tuple[Token, ...]] = field(default_factory=dict)
    _boundaries: dict[tuple[str, int, int], tuple[str, str]] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------- inventory
    @cached_property
    def texts(self) -> list[SourceText]:
        """Every Japanese text of the templates, the vocabulary and dataset.yaml's unknown options."""
        texts: list[SourceText] = []
        for template in self.project.templates:
            data = template.doc.data if isinstance(template.doc.data, dict) else {}
            for key, value in data.items():
                if key in _NOT_SHOWN:
                    continue
                for key_path, text in text_leaves(value, (key,)):
                    if key_path[-1] in ("answer", "status", "en") or not is_japanese(text):
                        continue
                    role = _template_role(key_path)
                    texts.append(SourceText(template.doc, key_path, text, "template", role, template))
        for name, group in self.project.vocab.items():
            groups = group.doc.data.get("groups", {}) if isinstance(group.doc.data, dict) else {}
            fillers = groups.get(name, {}).get("fillers", []) if isinstance(groups.get(name), dict) else []
            for index, raw in enumerate(fillers):
                base = group.key_path + ("fillers", index)
                leaves: list[tuple[KeyPath, str, str]] = []
                if isinstance(raw, str):
                    leaves.append((base, raw, "filler"))
                elif isinstance(raw, dict):
                    for part, role in (("text", "filler"), ("option", "option")):
                        if part in raw:
                            leaves.extend((p, t, role) for p, t in text_leaves(raw[part], base + (part,)))
                for key_path, text, role in leaves:
                    if is_japanese(text):
                        texts.append(SourceText(group.doc, key_path, text, "vocab", role, group=name))
        dataset_doc = self.project.dataset_doc
        options = dataset_doc.data.get("unknown_options", []) if isinstance(dataset_doc.data, dict) else []
        for key_path, text in text_leaves(options, ("unknown_options",)):
            if is_japanese(text):
                texts.append(SourceText(dataset_doc, key_path, text, "dataset", "unknown_option"))
        return texts

    def slots(self, template: SourceTemplate) -> dict[str, SlotFill]:
        """What each slot of the template holds; {} (and a JA001 note) when the kind fails on it."""
        cached = self._slots.get(template.path)
        if cached is None:
            try:
                cached = get_kind(template.kind).template_slots(template, self.project)
            except Exception as exc:  # a kind's bug must not stop the other checks
                self.problems.append((template, exc))
                cached = {}
            self._slots[template.path] = cached
        return cached

    # -------------------------------------------------------------------------------------- filling
    def filled(self, text: SourceText, choose: dict[str, str] | None = None) -> FilledText | None:
        """The text with every slot filled (``choose`` picks some fillers; others take their first).

        None when a placeholder has no filler (e.g. {{ANSWER}} in a rationale) or the text is not a
        template text.
        """
        if text.template is None:
            return None
        placeholders = slots_in(text.text)
        if not placeholders:
            return FilledText(text.key_path, text.text, ())
        slots = self.slots(text.template)
        pieces: list[str] = []
        spans: list[SlotSpan] = []
        last = 0
        length = 0
        for slot, start, end in placeholders:
            fill = slots.get(slot)
            if fill is None or not fill.fillers:
                return None
            filler = (choose or {}).get(slot, fill.fillers[0])
            literal = text.text[last:start]
            pieces += [literal, filler]
            length += len(literal)
            spans.append(SlotSpan(slot, length, length + len(filler), fill.role, filler))
            length += len(filler)
            last = end
        pieces.append(text.text[last:])
        return FilledText(text.key_path, "".join(pieces), tuple(spans))

    # -------------------------------------------------------------------------------------- analyses
    def tokens(self, text: str) -> tuple[Token, ...]:
        return self.analyzer.tokens(text)

    def literal_tokens(self, text: SourceText) -> tuple[Token, ...]:
        """The text's own morphemes, offsets into the source scalar; fillers' morphemes left out."""
        key = (text.doc.path, text.key_path)
        cached = self._literal.get(key)
        if cached is None:
            cached = self._literal[key] = self._literal_tokens(text)
        return cached

    def _literal_tokens(self, text: SourceText) -> tuple[Token, ...]:
        placeholders = slots_in(text.text)
        if not placeholders:
            return self.tokens(text.text)
        filled = self.filled(text)
        if filled is not None:
            return tuple(_literal_of(self.tokens(filled.text), filled, placeholders))
        # No filler for some placeholder (e.g. {{ANSWER}}): analyse the pieces between placeholders.
        tokens: list[Token] = []
        last = 0
        for _slot, start, end in [*placeholders, ("", len(text.text), len(text.text))]:
            piece = text.text[last:start]
            if piece:
                tokens.extend(t._replace(start=t.start + last, end=t.end + last) for t in self.tokens(piece))
            last = end
        return tuple(tokens)

    def boundary_problems(self, text: SourceText) -> list[Boundary]:
        """Every filler of every placeholder of ``text`` that fuses with the characters around it."""
        if text.template is None:
            return []
        slots = self.slots(text.template)
        placeholders = slots_in(text.text)
        problems: list[Boundary] = []
        for index, (slot, start, end) in enumerate(placeholders):
            fill = slots.get(slot)
            if fill is None:
                continue
            left_stop = placeholders[index - 1][2] if index > 0 else 0
            right_stop = placeholders[index + 1][1] if index + 1 < len(placeholders) else len(text.text)
            left = _reach(text.text, start, left_stop, -1)
            right = _reach(text.text, end, right_stop, +1)
            for filler in fill.fillers:
                if not filler:
                    continue
                window = left + filler + right
                key = (window, len(left), len(left) + len(filler))
                result = self._boundaries.get(key)
                if result is None:
                    result = self._boundaries[key] = _straddling(
                        window, self.analyzer.words(window), *key[1:]
                    )
                for side, token in zip(("start", "end"), result, strict=True):
                    if token:
                        filled = self.filled(text, {slot: filler})
                        sentence = filled.text if filled is not None else window
                        problems.append(Boundary(slot, filler, side, token, (start, end), sentence))
        return problems


def _to_source(offset: int, filled: FilledText, placeholders: list[tuple[str, int, int]]) -> int:
    """Map an offset of a filled text outside its fillers back into the source scalar."""
    shift = 0
    for span, (_slot, p_start, p_end) in zip(filled.spans, placeholders, strict=False):
        if span.end <= offset:
            shift += (p_end - p_start) - (span.end - span.start)
        elif span.start < offset:  # inside a filler: point at its placeholder
            return p_start
    return offset + shift


def _literal_of(
    tokens: Iterable[Token], filled: FilledText, placeholders: list[tuple[str, int, int]]
) -> Iterator[Token]:
    spans = filled.spans
    for token in tokens:
        if any(token.start < s.end and s.start < token.end for s in spans):
            continue
        start = _to_source(token.start, filled, placeholders)
        yield token._replace(start=start, end=start + (token.end - token.start))


def _reach(text: str, origin: int, stop: int, step: int) -> str:
    """Up to NEIGHBOURHOOD characters of literal text from ``origin`` towards ``stop``, within the clause."""
    if step < 0:
        lo = origin
        while lo > stop and origin - lo < NEIGHBOURHOOD and text[lo - 1] not in _CLAUSE_END:
            lo -= 1
        return text[lo:origin]
    hi = origin
    while hi < stop and hi - origin < NEIGHBOURHOOD and text[hi] not in _CLAUSE_END:
        hi += 1
    return text[origin:hi]


def _straddling(window: str, words: tuple[tuple[int, int], ...], start: int, end: int) -> tuple[str, str]:
    """The morphemes that straddle offsets ``start`` and ``end`` of ``window`` ("" where none does)."""

    def at(offset: int) -> str:
        for word_start, word_end in words:
            if word_start < offset < word_end:
                return window[word_start:word_end]
        return ""

    return at(start), at(end)
