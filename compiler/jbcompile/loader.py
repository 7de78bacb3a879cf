"""Read YAML into plain data while remembering where every value stood.

The fast path (every build) composes nodes with libyaml and keeps a position table keyed by the value's
key path, so that schema errors and lint findings can name ``file:line:col``. Round-trip editing for
``check --fix`` lives in :mod:`jbcompile.yamledit`, which uses ruamel.yaml to keep comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .diagnostics import Diagnostic, DiagnosticError

try:  # libyaml is an order of magnitude faster; fall back to the pure-Python loader if absent.
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    col: int  # 1-based
    style: str | None = None  # scalar style: None (plain), "'", '"', "|", ">"


@dataclass
class LoadedDocument:
    """One YAML file as plain data plus the position of every key and value in it."""

    path: str
    data: Any
    values: dict[KeyPath, Position] = field(default_factory=dict)
    keys: dict[KeyPath, Position] = field(default_factory=dict)

    def position(self, key_path: KeyPath) -> Position | None:
        """Position of the value at ``key_path``, or of its nearest ancestor that exists."""
        key_path = tuple(key_path)
        while True:
            if key_path in self.values:
                return self.values[key_path]
            if not key_path:
                return None
            key_path = key_path[:-1]

    def key_position(self, key_path: KeyPath) -> Position | None:
        return self.keys.get(tuple(key_path)) or self.position(key_path)

    def text_position(self, key_path: KeyPath, offset: int) -> Position | None:
        """Position of character ``offset`` inside the string scalar at ``key_path``.

        Exact for one-line plain and quoted scalars (escapes aside); for block and folded scalars the
        first content line is assumed, which is where lint findings in short template texts fall.
        """
        start = self.values.get(tuple(key_path))
        if start is None:
            return self.position(key_path)
        value = value_at(self.data, key_path)
        if not isinstance(value, str):
            return start
        if start.style in ("|", ">"):
            line_index = value.count("\n", 0, offset) if start.style == "|" else 0
            line_start = value.rfind("\n", 0, offset) + 1 if start.style == "|" else 0
            return Position(start.line + 1 + line_index, start.col + 2 + (offset - line_start), start.style)
        quote = 1 if start.style in ("'", '"') else 0
        return Position(start.line, start.col + quote + offset, start.style)

    def diagnostic(self, key_path: KeyPath, code: str, message: str, **kwargs: Any) -> Diagnostic:
        pos = self.position(key_path)
        return Diagnostic(
            code=code,
            message=message,
            path=self.path,
            line=pos.line if pos else None,
            col=pos.col if pos else None,
            key_path=tuple(key_path),
            **kwargs,
        )


def value_at(data: Any, key_path: KeyPath) -> Any:
    """The value at a key path in plain YAML data, or None when the path does not exist."""
    for key in key_path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


class _Builder:
    def __init__(self, doc: LoadedDocument):
        self.doc = doc
        self.problems: list[Diagnostic] = []

    def _pos(self, node: yaml.Node) -> Position:
        style = getattr(node, "style", None) if isinstance(node, yaml.ScalarNode) else None
        return Position(node.start_mark.line + 1, node.start_mark.column + 1, style or None)

    def build(self, node: yaml.Node, key_path: KeyPath, loader: yaml.Loader) -> Any:
        self.doc.values[key_path] = self._pos(node)
        if isinstance(node, yaml.MappingNode):
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node, deep=True)
                if isinstance(key, (dict, list)) or key is None:
                    self.problems.append(
                        self._problem(key_node, "Y003", "a mapping key must be a plain value")
                    )
                    continue
                if not isinstance(key, str):
                    key = str(key) if not isinstance(key, bool) else str(key).lower()
                if key in result:
                    self.problems.append(
                        self._problem(
                            key_node,
                            "Y002",
                            f"duplicate key {key!r} (the later value would silently win)",
                            hint="keep one of the two entries",
                        )
                    )
                    continue
                self.doc.keys[key_path + (key,)] = self._pos(key_node)
                result[key] = self.build(value_node, key_path + (key,), loader)
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, key_path + (i,), loader) for i, item in enumerate(node.value)]
        return loader.construct_object(node, deep=True)

    def _problem(self, node: yaml.Node, code: str, message: str, hint: str | None = None) -> Diagnostic:
        pos = self._pos(node)
        return Diagnostic(
            code=code, message=message, path=self.doc.path, line=pos.line, col=pos.col, hint=hint
        )


def parse_yaml(text: str, path: str) -> LoadedDocument:
    """Parse one YAML document; raise DiagnosticError with positions for anything malformed."""
    doc = LoadedDocument(path=path, data=None)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            doc.data = None
            return doc
        builder = _Builder(doc)
        doc.data = builder.build(node, (), loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "malformed YAML"
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y001",
                    message=f"malformed YAML: {problem}",
                    path=path,
                    line=mark.line + 1 if mark else None,
                    col=mark.column + 1 if mark else None,
                    hint="fix the YAML syntax at this position (indentation, quotes, colons)",
                )
            ]
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as exc:
        raise DiagnosticError(
            [Diagnostic(code="Y001", message=f"malformed YAML: {exc}", path=path, hint="fix the YAML syntax")]
        ) from None
    finally:
        loader.dispose()
    if builder.problems:
        raise DiagnosticError(builder.problems)
    return doc


def load_yaml(path: Path, display_path: str | None = None) -> LoadedDocument:
    shown = display_path or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DiagnosticError(
            [Diagnostic(code="Y004", message=f"cannot read file: {exc.strerror}", path=shown)]
        ) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y005",
                    message=f"not UTF-8 text (byte {exc.start})",
                    path=shown,
                    hint="save the file as UTF-8",
                )
            ]
        ) from None
    return parse_yaml(text, shown)
