"""Template texts and seeded choices: the ``{{SLOT}}`` syntax, filling a text, and the stable hashes that
are a build's only source of randomness. Shared by the designs, the linter, translation and importers."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .loader import KeyPath

SLOT_PATTERN = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


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
