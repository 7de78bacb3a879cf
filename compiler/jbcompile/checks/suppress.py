"""Inline suppression of one finding, with a reason, written as a YAML comment next to the text::

    disambiguating_context: >-  # jbcompile: ignore[JA103] 二人目は「後者」で指している
      その{{NAME1}}は……、{{NAME2}}は……

The comment goes on the line where the text's key (or the text itself) starts, or on a comment line of
its own directly above it. It names the codes it silences and must give a reason. A suppression that
silences nothing is reported, so stale ones do not pile up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import DiagnosticError
from ..reading import SOURCE, read_text

if TYPE_CHECKING:
    from ..loader import KeyPath, LoadedDocument

MARKER = "jbcompile:"
_PATTERN = re.compile(r"#\s*jbcompile:\s*ignore\s*\[(?P<codes>[^\]]*)\]\s*[-—:]?\s*(?P<reason>.*?)\s*$")


@dataclass
class Suppression:
    path: str
    line: int  # where the comment is (1-based)
    col: int
    target_line: int  # the line whose texts it silences
    codes: tuple[str, ...]
    reason: str
    used: set[str] = field(default_factory=set)


def parse_suppressions(path: str, text: str) -> list[Suppression]:
    """Every ``# jbcompile: ignore[...]`` comment of one file."""
    if MARKER not in text:
        return []
    lines = text.splitlines()
    found: list[Suppression] = []
    for index, line in enumerate(lines):
        match = _PATTERN.search(line)
        if match is None:
            continue
        codes = tuple(c.strip().upper() for c in match.group("codes").split(",") if c.strip())
        target = index
        if line.lstrip().startswith("#"):  # a comment line of its own: it speaks about the next text line
            target = next(
                (
                    j
                    for j in range(index + 1, len(lines))
                    if lines[j].strip() and not lines[j].lstrip().startswith("#")
                ),
                index,
            )
        found.append(
            Suppression(path, index + 1, match.start() + 1, target + 1, codes, match.group("reason"))
        )
    return found


@dataclass
class Suppressions:
    """The suppressions of the files a run looked at, read on first use."""

    by_path: dict[str, list[Suppression]] = field(default_factory=dict)

    def of(self, path: str) -> list[Suppression]:
        if path not in self.by_path:
            try:
                text = read_text(path, SOURCE, encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError, DiagnosticError):  # the loader reported it
                text = ""
            self.by_path[path] = parse_suppressions(path, text)
        return self.by_path[path]

    def silences(self, code: str, doc: LoadedDocument, key_path: KeyPath | None, line: int | None) -> bool:
        """Is a finding of ``code`` at the text at ``key_path`` (None: at ``line`` alone) silenced?"""
        entries = self.of(doc.path)
        if not entries:
            return False
        lines = _lines_of(doc, key_path) if key_path is not None else set()
        if line is not None:
            lines.add(line)
        for entry in entries:
            if entry.target_line in lines and code in entry.codes and entry.reason:
                entry.used.add(code)
                return True
        return False

    def all(self) -> Iterable[Suppression]:
        for entries in self.by_path.values():
            yield from entries


def _lines_of(doc: LoadedDocument, key_path: KeyPath) -> set[int]:
    """Lines where the text at ``key_path`` (or the field holding its ``ja:``) is written."""
    paths = [tuple(key_path)]
    if key_path and key_path[-1] in ("ja", "text", "option"):
        paths.append(tuple(key_path[:-1]))
    if len(key_path) > 1 and key_path[-1] == "ja" and key_path[-2] in ("text", "option"):
        paths.append(tuple(key_path[:-2]))
    lines: set[int] = set()
    for path in paths:
        for table in (doc.keys, doc.values):
            position = table.get(path)
            if position is not None:
                lines.add(position.line)
    return lines
