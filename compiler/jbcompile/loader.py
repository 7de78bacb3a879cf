"""Read YAML into plain data while remembering where every value stood.

The fast path (every build) composes nodes with libyaml and keeps a position table keyed by the value's
key path, so that schema errors and lint findings can name ``file:line:col``. Round-trip editing for
``check --fix`` lives in :mod:`jbcompile.yamledit`, which uses ruamel.yaml to keep comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import reading
from .diagnostics import Diagnostic, DiagnosticError
from .limits import MAX_DEPTH, MAX_EXPANSION, MAX_NODES, MAX_TEXT_CHARS
from .text import describe

try:  # libyaml is an order of magnitude faster; fall back to the pure-Python loader if absent.
    _BaseLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader


class SourceLoader(_BaseLoader):
    """PyYAML reads YAML 1.1, where ``off``, ``no`` and ``y`` are booleans, ``1:30`` is 90 and ``010`` is
    8: a probe's ``off: true`` became the key ``false``, a rule's ``JA107: off`` a boolean. Sources are read
    with YAML 1.2's core types, as ruamel.yaml (``check --fix``) reads them: booleans are true/false only,
    integers decimal (or 0x/0o), dates as before (a changelog's), anything else a string; a key is the
    name as written."""


_YAML_BOOL, _YAML_INT, _YAML_FLOAT = (f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float"))
SourceLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag not in (_YAML_BOOL, _YAML_INT, _YAML_FLOAT)]
    for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}
SourceLoader.add_implicit_resolver(
    _YAML_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
SourceLoader.add_implicit_resolver(
    _YAML_INT, re.compile(r"^(?:[-+]?[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$"), list("-+0123456789")
)
SourceLoader.add_implicit_resolver(
    _YAML_FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


# The types a source value may have; YAML's other tags (!!binary, !!set, !!omap …) make bytes, sets or
# pairs the checks would not read as text. (`<<` and `=` keys resolve to tags of their own, left to the
# composer.)
_SOURCE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp", "merge", "value")
)


def _tag_name(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


def _construct_core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """YAML 1.2's integers: ``010`` is ten and ``0o17`` octal (PyYAML reads a leading 0 as octal)."""
    text = node.value
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


SourceLoader.add_constructor(_YAML_INT, _construct_core_int)
_Loader = SourceLoader

KeyPath = tuple[str | int, ...]

# The bounds on what a source file may hold (MAX_DEPTH …) are constants of jbcompile.limits, checked
# before anything (MeCab included) reads a value: a source file is hand-written, so anything beyond them
# is a mistake or an attack (an alias bomb, a million-character line, nesting that would exhaust the C
# stack of libyaml's composer).
# Below this many possible nesting indicators, libyaml's recursive composer is safe on any stack.
_SAFE_NESTING_BOUND = 4_000


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
        self.nodes = 0
        self.written: set[int] = set()  # the distinct nodes: what the file itself spells out
        self.active: set[int] = set()  # collection nodes on the path being built (recursive aliases)

    def _pos(self, node: yaml.Node) -> Position:
        style = getattr(node, "style", None) if isinstance(node, yaml.ScalarNode) else None
        return Position(node.start_mark.line + 1, node.start_mark.column + 1, style or None)

    def build(self, node: yaml.Node, key_path: KeyPath, loader: yaml.Loader) -> Any:
        self.nodes += 1
        self.written.add(id(node))
        if self.nodes > MAX_NODES and self.nodes > MAX_EXPANSION * len(self.written):
            raise _Stop(
                self._problem(
                    node,
                    "Y007",
                    f"more than {MAX_NODES:,} values once aliases are expanded",
                    hint="write the values out, or use fewer nested aliases (*name)",
                )
            )
        if len(key_path) > MAX_DEPTH:
            raise _Stop(
                self._problem(
                    node, "Y008", f"nested more than {MAX_DEPTH} levels deep", hint="flatten the structure"
                )
            )
        self.doc.values[key_path] = self._pos(node)
        if node.tag not in _SOURCE_TAGS:
            raise _Stop(
                self._problem(
                    node,
                    "Y011",
                    f"a value tagged {_tag_name(node.tag)}: sources hold text, numbers, true/false, lists "
                    "and mappings (a !!binary text would hide its characters from every check)",
                    hint="write the value out as plain text, without the tag",
                )
            )
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            if id(node) in self.active:
                raise _Stop(
                    self._problem(
                        node,
                        "Y009",
                        "recursive alias: this anchor's value contains an alias to itself",
                        hint="an alias (*name) may only refer to a value defined before and outside it",
                    )
                )
            self.active.add(id(node))
            try:
                return self._collection(node, key_path, loader)
            finally:
                self.active.discard(id(node))
        return self._scalar(node, loader)

    def _collection(self, node: yaml.Node, key_path: KeyPath, loader: yaml.Loader) -> Any:
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, key_path + (i,), loader) for i, item in enumerate(node.value)]
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self._scalar(key_node, loader) if isinstance(key_node, yaml.ScalarNode) else None
            if key is None:
                brace = isinstance(key_node, yaml.MappingNode) and key_node.flow_style
                self.problems.append(
                    self._problem(
                        key_node,
                        "Y003",
                        "a mapping key must be a plain value",
                        hint=QUOTE_BRACES_HINT if brace else "write the key as a plain word or string",
                    )
                )
                continue
            if not isinstance(key, str):  # a key is a name: `1.50:` is "1.50", `true:` is "true"
                key = key_node.value
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

    def _scalar(self, node: yaml.Node, loader: yaml.Loader) -> Any:
        if len(node.value) > MAX_TEXT_CHARS:
            raise _Stop(
                self._problem(
                    node,
                    "Y010",
                    f"a value of {len(node.value):,} characters (at most {MAX_TEXT_CHARS:,})",
                    hint="source texts are short sentences; split or shorten this one",
                )
            )
        return loader.construct_object(node, deep=True)

    def _problem(self, node: yaml.Node, code: str, message: str, hint: str) -> Diagnostic:
        pos = self._pos(node)
        return Diagnostic(
            code=code, message=message, path=self.doc.path, line=pos.line, col=pos.col, hint=hint
        )


class _Stop(Exception):
    """A bound was exceeded: building stops at once with this one diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _nesting_bound(text: str) -> int:
    """An upper bound of the nesting depth: every level needs a line break or an indicator character."""
    return sum(text.count(mark) for mark in ("\n", "[", "{", "-", "?", ":")) + 1


def _too_deep(text: str, path: str) -> Diagnostic | None:
    """Find nesting beyond MAX_DEPTH from the parser's events, stopping as soon as it is reached.

    Only run when the cheap bound cannot rule it out: libyaml's composer recurses in C and would
    crash the process (not raise) on a file nested tens of thousands of levels deep.
    """
    depth = 0
    opening = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    closing = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, opening):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                return Diagnostic(
                    code="Y008",
                    message=f"nested more than {MAX_DEPTH} levels deep",
                    path=path,
                    line=mark.line + 1,
                    col=mark.column + 1,
                    hint="flatten the structure",
                )
        elif isinstance(event, closing):
            depth -= 1
    return None


QUOTE_BRACES_HINT = (
    "a value that starts with { is read as a YAML mapping: quote the whole text, "
    'e.g. key: "{{NAME1}}と{{NAME2}}が…"'
)
# a line whose value (after `key:` or a list's `- `) starts with a brace that opens no `{key: …}` mapping
_BRACE_VALUE = re.compile(r"^\s*(?:-\s+)*(?:[^\s#'\"{\[-][^#]*?:\s+(?:-\s+)*)?\{(?!\s*[\w.-]+\s*:)")


def _value_starts_with_brace(text: str, lines: set[int]) -> bool:
    """Does a value on one of these lines (0-based) start with ``{``: a slot meant as text?"""
    all_lines = text.splitlines()
    return any(_BRACE_VALUE.match(all_lines[n]) for n in lines if 0 <= n < len(all_lines))


# Characters YAML (1.1, which PyYAML and libyaml read) takes for line breaks, though most editors do not: a
# value holding one is cut in two, and YAML's line numbers after it are not the editor's.
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset, lines ended by ``\n`` only (as an editor counts)."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _reader_offset(text: str, exc: yaml.reader.ReaderError) -> int:
    """The character offset of the character a reader refused: libyaml reports a byte offset into the
    text's UTF-8, the Python reader a character offset; the one that points at that character wins."""
    char = chr(exc.character) if isinstance(exc.character, int) else str(exc.character)
    as_bytes = len(text.encode("utf-8", "surrogatepass")[: exc.position].decode("utf-8", "ignore"))
    for offset in (as_bytes, exc.position):
        if 0 <= offset < len(text) and text[offset] == char:
            return offset
    found = text.find(char)
    return found if found >= 0 else min(exc.position, len(text))


def _yaml_only_break(text: str, marks: list[yaml.Mark]) -> tuple[int, str] | None:
    """The character YAML alone reads as a line break that most likely caused an error at these marks:
    the last one before the problem, on an (editor's) line of a mark or the line before the problem's —
    one further up, e.g. kept in a quoted value, is no cause; and its name."""
    if not marks:
        return None
    end = min(marks[0].index + 1, len(text))
    found = list(_YAML_ONLY_BREAKS.finditer(text, 0, end))
    if not found:
        return None
    lines = {_line_col(text, min(mark.index, len(text)))[0] for mark in marks}
    lines.add(_line_col(text, min(marks[0].index, len(text)))[0] - 1)
    last = found[-1]
    if _line_col(text, last.start())[0] not in lines:
        return None
    return last.start(), "U+0085 NEXT LINE" if last.group() == "\x85" else describe(last.group())


def parse_yaml(text: str, path: str) -> LoadedDocument:
    """Parse one YAML document; raise DiagnosticError with positions for anything malformed."""
    doc = LoadedDocument(path=path, data=None)
    nel = text.find("\x85")
    if nel >= 0:  # a C1 control that YAML reads as a line break, in quotes too (there it becomes a space)
        line, col = _line_col(text, nel)
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y001",
                    message="malformed YAML: character U+0085 NEXT LINE is not allowed (YAML reads it as a "
                    "line break, and in quotes as a space; most editors show neither)",
                    path=path,
                    line=line,
                    col=col,
                    hint="remove the character (control characters cannot stand in YAML text)",
                )
            ]
        )
    builder = _Builder(doc)
    loader = _Loader(text)
    try:
        if _nesting_bound(text) > _SAFE_NESTING_BOUND:
            deep = _too_deep(text, path)
            if deep is not None:
                raise DiagnosticError([deep])
        node = loader.get_single_node()
        if node is None:  # an empty document (or comments only): what is said of it points at its start
            doc.data = None
            doc.values[()] = Position(1, 1, None)
            return doc
        doc.data = builder.build(node, (), loader)
    except _Stop as stop:
        raise DiagnosticError([stop.diagnostic]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "malformed YAML"
        lines = {m.line for m in (exc.problem_mark, exc.context_mark) if m is not None}
        hint = (
            QUOTE_BRACES_HINT
            if _value_starts_with_brace(text, lines)
            else "fix the YAML syntax at this position (indentation, quotes, colons)"
        )
        # positions as an editor counts lines (YAML also breaks them at U+2028 …), from the mark's offset
        where = _line_col(text, min(mark.index, len(text))) if mark else None
        odd = _yaml_only_break(text, [m for m in (exc.problem_mark, exc.context_mark) if m is not None])
        if "tag:yaml.org,2002:merge" in problem:  # `<<:`, whatever follows it (a `{…}` mapping too)
            problem = "a merge key (<<), which the sources' YAML (1.2, core types) does not have"
            hint = "write the keys out in this mapping (an alias *name may stand for a whole value)"
        if mark is not None and text[mark.index : mark.index + 1] == "\t" and odd is None:
            # YAML's words ("found character that cannot start any token") do not name the character
            problem = "a tab, where YAML allows spaces only (to indent, and after a list's -)"
            hint = "replace the tab with spaces: indent with spaces"
        if odd is not None:  # most likely the cause: name the character, where it stands
            at = f" (at {where[0]}:{where[1]})" if where else ""
            problem = (
                f"{problem}{at}, after character {odd[1]}, which YAML reads as a line break (most "
                "editors do not)"
            )
            where = _line_col(text, odd[0])
            hint = "remove the character, or put the value in double quotes (where it is kept as it is)"
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y001",
                    message=f"malformed YAML: {problem}",
                    path=path,
                    line=where[0] if where else None,
                    col=where[1] if where else None,
                    hint=hint,
                )
            ]
        ) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow: positioned by offset
        line, col = _line_col(text, _reader_offset(text, exc))
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y001",
                    message=f"malformed YAML: character U+{exc.character:04X} is not allowed ({exc.reason})",
                    path=path,
                    line=line,
                    col=col,
                    hint="remove the character (control characters cannot stand in YAML text)",
                )
            ]
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y001",
                    message=f"malformed YAML: {first_line}",
                    path=path,
                    hint="fix the YAML syntax",
                )
            ]
        ) from None
    finally:
        loader.dispose()
    if builder.problems:
        raise DiagnosticError(builder.problems)
    return doc


def load_yaml(path: Path, display_path: str | None = None) -> LoadedDocument:
    shown = display_path or str(path)
    return parse_yaml(read_source_text(path, reading.SOURCE, shown), shown)


def read_source_text(path: Path, kind: reading.FileKind, shown: str) -> str:
    """A text file of the sources, whole (a YAML source, README.md, CHANGELOG.md): bounded by ``kind``
    (Y006, F001), a device or a FIFO refused unopened (F002), unreadable Y004, not UTF-8 Y005 at its
    line and column. The one reading of them, so every command says the same of the same file."""
    try:
        raw = reading.read_bytes(path, kind, shown)
    except OSError as exc:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y004",
                    message=f"cannot read file: {exc.strerror}",
                    path=shown,
                    hint="check that the file exists and can be read",
                )
            ]
        ) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = byte_position(raw, exc.start)
        raise DiagnosticError(
            [
                Diagnostic(
                    code="Y005",
                    message=f"not UTF-8 text (byte 0x{raw[exc.start]:02x})",
                    path=shown,
                    line=line,
                    col=col,
                    hint="save the file as UTF-8",
                )
            ]
        ) from None


def byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte ``offset``, for a diagnostic on undecodable bytes."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    before = raw[line_start:offset].decode("utf-8", errors="replace").lstrip("\ufeff")
    return raw.count(b"\n", 0, offset) + 1, len(before) + 1
