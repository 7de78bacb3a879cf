"""Exact ``line:col`` of a character inside a YAML string scalar: folded, block and quoted scalars,
escapes included.

The loader records where each scalar starts; for a token inside a multi-line scalar, or after an escape
(``\\u3000``, ``''``, an escaped line break), that is not enough. Files with findings are re-read once,
and each value offset is mapped onto the file by :func:`jbcompile.yamledit.value_sources`, the map whose
verbatim runs ``--fix`` splices into.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import DiagnosticError
from ..loader import value_at
from ..reading import SOURCE, read_text

if TYPE_CHECKING:
    from ..loader import KeyPath, LoadedDocument


@dataclass
class _File:
    text: str
    line_starts: list[int]
    nodes: dict[Any, Any]


@dataclass
class Locator:
    """Positions of characters in scalars, one parse per file that has findings."""

    _files: dict[str, _File | None] = field(default_factory=dict)

    def _file(self, doc: LoadedDocument) -> _File | None:
        if doc.path not in self._files:
            self._files[doc.path] = _read(Path(doc.path))
        return self._files[doc.path]

    def locate(
        self, doc: LoadedDocument, key_path: KeyPath, offset: int | None
    ) -> tuple[int | None, int | None]:
        """1-based (line, col) of character ``offset`` of the scalar at ``key_path`` (its start if None)."""
        if offset is not None:
            exact = self._exact(doc, tuple(key_path), offset)
            if exact is not None:
                return exact
            pos = doc.text_position(key_path, offset)
        else:
            pos = doc.position(key_path)
        return (pos.line, pos.col) if pos else (None, None)

    def _exact(self, doc: LoadedDocument, key_path: KeyPath, offset: int) -> tuple[int, int] | None:
        from ..yamledit import value_sources

        source = self._file(doc)
        node = source.nodes.get(key_path) if source else None
        if source is None or node is None:
            return None
        value = value_at(doc.data, key_path)
        if not isinstance(value, str) or not 0 <= offset <= len(value):
            return None
        sources = value_sources(source.text, node, value)
        if sources is None:
            return None
        index = sources[offset]
        line = bisect.bisect_right(source.line_starts, index) - 1
        return line + 1, index - source.line_starts[line] + 1


def _read(path: Path) -> _File | None:
    from ..yamledit import scalar_nodes

    try:
        text = read_text(path, SOURCE)
    except (OSError, UnicodeDecodeError, DiagnosticError):  # the loader reported it
        return None
    text = text.removeprefix("\ufeff")
    try:
        nodes = scalar_nodes(text)
    except Exception:  # the loader already reported malformed YAML
        return None
    starts = [0]
    starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")
    return _File(text, starts, nodes)
