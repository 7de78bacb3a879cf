"""The interface every benchmark design (kind) implements; the pipeline never branches on kind."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pyarrow as pa
    from pydantic import BaseModel

    from ..diagnostics import Diagnostic
    from ..loader import KeyPath
    from ..project import Project, SourceTemplate

Row = dict[str, Any]

SLOT_PATTERN = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class ConfigSpec:
    """One dataset config a kind contributes (e.g. ``lite``), with its arrow schema."""

    name: str
    description: str
    schema_factory: Any  # () -> pa.Schema, so pyarrow is imported only when writing
    default: bool = False

    @property
    def schema(self) -> pa.Schema:
        return self.schema_factory()


@dataclass(frozen=True)
class SlotSpan:
    slot: str
    start: int
    end: int
    role: str  # "person" | "word"
    filler: str


@dataclass(frozen=True)
class FilledText:
    """One template text with its slots filled, and where each filler landed (for token-level lints)."""

    key_path: KeyPath
    text: str
    spans: tuple[SlotSpan, ...] = field(default=())


@dataclass
class TemplateRows:
    """What one template contributes: rows per config, and problems found while building them.

    A config's rows may be made lazily (a template can make hundreds of thousands), so the pipeline
    holds only a batch of them at a time. It consumes them in one fixed order, which a kind may rely
    on: config by config in the order of ``rows``, each iterated once, to its end. ``diagnostics`` is
    complete once every config's rows have been consumed (a kind may find problems while expanding).
    """

    rows: dict[str, Iterable[Row]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


class Verifier(Protocol):
    """The invariants of one whole config (balance, coverage), checked while its rows stream past.

    ``add`` sees every row of the config once, in build order, one batch at a time, and keeps only the
    summaries its checks need (counts, cells, the ids of rows that break a rule), never the rows; so a
    build's memory does not grow with its rows. Which example ids repeat is the one check that needs
    every row: the pipeline finds those (see ``build.RepeatedIds``) and hands them to ``finish``.
    """

    def add(self, rows: Sequence[Row]) -> None:
        """Take the next rows of the config."""

    def finish(self, repeated: Mapping[str, int]) -> list[Diagnostic]:
        """Every problem of the config, given the example ids that occur more than once (id → count)."""


class Kind(Protocol):
    name: str
    template_model: type[BaseModel]
    configs: Sequence[ConfigSpec]

    def validate(self, template: SourceTemplate, project: Project) -> list[Diagnostic]:
        """Cross-reference problems of one template (unknown slots, unknown vocab groups …)."""

    def build(self, template: SourceTemplate, project: Project) -> TemplateRows:
        """All rows of every config this template contributes (see ``TemplateRows`` for the order they
        are consumed in); depends on this template alone."""

    def expand(self, template: SourceTemplate, project: Project) -> list[Row]:
        """Every row of the template (the largest config)."""

    def verifier(self, config: str, project: Project) -> Verifier:
        """A fresh check of a whole config's invariants; the build refuses output that breaks them."""

    def filled_texts(self, template: SourceTemplate, project: Project) -> Iterable[FilledText]:
        """Every distinct filled variant of each template text."""

    def language_coverage(self, template: SourceTemplate, lang: str) -> str:
        """ "all", "some" or "none" of the template's texts exist in ``lang``."""


def config_problem(
    code: str, config: str, message: str, project: Project, hint: str | None = None
) -> Diagnostic:
    """A problem of a whole config (a build invariant), reported at the dataset file: ``[config] message``."""
    from ..diagnostics import Diagnostic

    return Diagnostic(code=code, message=f"[{config}] {message}", path=project.dataset_doc.path, hint=hint)


def repeated_id_problems(
    code: str, config: str, repeated: Mapping[str, int], project: Project
) -> list[Diagnostic]:
    """One diagnostic per example id that occurs more than once in ``config``."""
    return [
        config_problem(code, config, f"example_id {example_id} occurs {count} times", project)
        for example_id, count in repeated.items()
    ]


def stable_hash(*parts: object) -> int:
    """A 64-bit hash of stable ids: the only source of randomness in a build."""
    digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def stable_id(*parts: object) -> str:
    return hashlib.blake2b("\x1f".join(str(p) for p in parts).encode("utf-8"), digest_size=6).hexdigest()


def join_contexts(first: str, second: str) -> str:
    """Japanese sentences join without a space; English ones with one."""
    if not first or not second:
        return first + second
    separator = "" if first[-1] in "。！？」』）" else " "
    return f"{first}{separator}{second}"


def slots_in(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(1), m.start(), m.end()) for m in SLOT_PATTERN.finditer(text)]


@dataclass(frozen=True)
class CompiledText:
    """A template text split once into literals and slots, so filling it is a join, not a regex."""

    parts: tuple[tuple[bool, str], ...]  # (is_slot, literal text or slot name)

    @classmethod
    def parse(cls, text: str) -> CompiledText:
        parts: list[tuple[bool, str]] = []
        last = 0
        for match in SLOT_PATTERN.finditer(text):
            if match.start() > last:
                parts.append((False, text[last : match.start()]))
            parts.append((True, match.group(1)))
            last = match.end()
        if last < len(text):
            parts.append((False, text[last:]))
        return cls(tuple(parts))

    @property
    def slots(self) -> list[str]:
        return [value for is_slot, value in self.parts if is_slot]

    def fill(self, values: dict[str, str]) -> str:
        return "".join(values[value] if is_slot else value for is_slot, value in self.parts)

    def fill_with_spans(self, values: dict[str, str], roles: dict[str, str]) -> FilledText:
        pieces: list[str] = []
        spans: list[SlotSpan] = []
        offset = 0
        for is_slot, value in self.parts:
            piece = values[value] if is_slot else value
            if is_slot:
                spans.append(SlotSpan(value, offset, offset + len(piece), roles.get(value, "word"), piece))
            pieces.append(piece)
            offset += len(piece)
        return FilledText((), "".join(pieces), tuple(spans))
