"""Write values back into YAML sources without disturbing what people wrote around them.

Two ways in, both atomic (temp file in the same folder, then ``os.replace``):

- :func:`apply_edits` splices lint fixes (:class:`~jbcompile.diagnostics.Edit`) into the raw text of the
  file, so everything outside the edited characters stays byte-for-byte as it was. It needs the exact
  source range of each scalar, which it gets by reparsing the file; when a scalar's source is not a
  verbatim copy of its value around the edit (escapes, a fold inside the edited span) it falls back to
- :func:`set_values`, a ruamel.yaml round trip that keeps comments, key order, quoting and the file's
  indentation style, and sets values at key paths (creating mapping keys as needed). The translator
  writes its results with it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .diagnostics import DiagnosticError, Edit
from .fsio import write_atomic
from .loader import SourceLoader, value_at

KeyPath = tuple[str | int, ...]

_BOM = "\ufeff"


# --------------------------------------------------------------------------------------------- io


def _read_text(path: Path) -> tuple[str, bool]:
    from .reading import SOURCE, read_text

    raw = read_text(path, SOURCE)
    if raw.startswith(_BOM):
        return raw[1:], True
    return raw, False


# ------------------------------------------------------------------------------------ set_values


def _detect_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset of block sequences) as written in the file; defaults 2 and 0."""
    mapping: int | None = None
    offset: int | None = None
    previous: tuple[int, str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if previous is not None and previous[1].endswith(":") and indent > previous[0]:
            step = indent - previous[0]
            if stripped.startswith("- ") or stripped == "-":
                offset = step if offset is None else offset
            else:
                mapping = step if mapping is None else mapping
        if mapping is not None and offset is not None:
            break
        previous = (indent, stripped.split(" #")[0].rstrip())
    return mapping or 2, offset or 0


def _round_trip_yaml(text: str) -> Any:
    from ruamel.yaml import YAML

    mapping, offset = _detect_indent(text)
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 100_000  # never re-fold a line that was not folded before
    rt.indent(mapping=mapping, sequence=max(mapping, offset + 2), offset=offset)

    def represent_none(representer: Any, _data: None) -> Any:
        return representer.represent_scalar("tag:yaml.org,2002:null", "null")

    rt.representer.add_representer(type(None), represent_none)
    return rt


def _to_round_trip(value: Any) -> Any:
    """Plain dicts and lists become ruamel's commented containers, so they dump in block style."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        result = CommentedMap()
        for key, item in value.items():
            result[key] = _to_round_trip(item)
        return result
    if isinstance(value, (list, tuple)):
        return CommentedSeq(_to_round_trip(item) for item in value)
    return value


def _same_style(old: Any, new: Any) -> Any:
    """Give a new plain string the quoting / block style of the string it replaces."""
    from ruamel.yaml import scalarstring

    if type(new) is not str:
        return new
    blocks = (scalarstring.FoldedScalarString, scalarstring.LiteralScalarString)
    quoted = (scalarstring.SingleQuotedScalarString, scalarstring.DoubleQuotedScalarString)
    for style in blocks + quoted:
        if isinstance(old, style):
            if style in blocks and new.endswith("\n") != str(old).endswith("\n"):
                return new
            return style(new)
    return new


def _set_in(root: Any, key_path: KeyPath, value: Any) -> None:
    from ruamel.yaml.comments import CommentedMap

    if not key_path:
        raise KeyError("cannot replace the whole document")
    node = root
    for depth, key in enumerate(key_path[:-1]):
        following = key_path[depth + 1]
        if isinstance(node, list):
            if not isinstance(key, int) or not -len(node) <= key < len(node):
                raise KeyError(f"no item {key!r} at {key_path[:depth]!r}")
            node = node[key]
            continue
        if not isinstance(node, dict):
            raise KeyError(f"{key_path[:depth]!r} is not a mapping")
        if key not in node or node[key] is None:
            if isinstance(following, int):
                raise KeyError(f"no list at {key_path[: depth + 1]!r}")
            node[key] = CommentedMap()
        node = node[key]
    last = key_path[-1]
    if isinstance(node, list):
        if not isinstance(last, int) or not -len(node) <= last <= len(node):
            raise KeyError(f"no item {last!r} at {key_path[:-1]!r}")
        if last == len(node):
            node.append(_to_round_trip(value))
        else:
            node[last] = _same_style(node[last], _to_round_trip(value))
        return
    if not isinstance(node, dict):
        raise KeyError(f"{key_path[:-1]!r} is not a mapping")
    node[last] = _same_style(node.get(last), _to_round_trip(value))


def set_values(path: Path, changes: Sequence[tuple[KeyPath, Any]]) -> None:
    """Set each value at its key path and rewrite the file, keeping comments, key order and quoting.

    Mapping keys on the way are created as needed; a list index may equal the list's length to append.
    Values are strings or plain dicts / lists. Raises KeyError for a path that cannot exist (and then
    writes nothing).
    """
    if changes:
        write_atomic(Path(path), with_values(path, changes))


def with_values(path: Path, changes: Sequence[tuple[KeyPath, Any]]) -> str:
    """The text of the file ``path`` with each value set at its key path (see :func:`set_values`);
    nothing is written, so that several files can change in one commit."""
    path = Path(path)
    text, bom = _read_text(path)
    rt = _round_trip_yaml(text)
    data = rt.load(text)
    if data is None:
        from ruamel.yaml.comments import CommentedMap

        data = CommentedMap()
    for key_path, value in changes:
        _set_in(data, tuple(key_path), value)
    out = io.StringIO()
    rt.dump(data, out)
    new_text = out.getvalue()
    if "\r\n" in text and "\r\n" not in new_text:
        new_text = new_text.replace("\n", "\r\n")
    return (_BOM if bom else "") + new_text


# ----------------------------------------------------------------------------------- apply_edits


@dataclass
class EditOutcome:
    """What :func:`apply_edits` did with each edit it was given."""

    spliced: list[tuple[KeyPath, Edit]] = field(default_factory=list)  # byte-exact splices
    rewritten: list[tuple[KeyPath, Edit]] = field(default_factory=list)  # via the ruamel round trip
    skipped: list[tuple[KeyPath, Edit]] = field(default_factory=list)  # already applied, stale, overlapping

    @property
    def changed(self) -> bool:
        return bool(self.spliced or self.rewritten)


@dataclass(frozen=True)
class Segment:
    """``value[value_start:value_start+length]`` is written verbatim at ``source_start`` in the file."""

    value_start: int
    source_start: int
    length: int


def written_scalars(text: str) -> Iterator[tuple[bool, KeyPath, yaml.ScalarNode]]:
    """Every scalar of the document as (is a key, key path, node), keys spelled as :mod:`jbcompile.loader`
    does: a value's key path is where it stands, a key's is the path of the value it names."""
    loader = SourceLoader(text)

    def walk(node: yaml.Node, key_path: KeyPath) -> Iterator[tuple[bool, KeyPath, yaml.ScalarNode]]:
        if isinstance(node, yaml.ScalarNode):
            yield False, key_path, node
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                yield from walk(item, key_path + (index,))
        elif isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node, deep=True)
                if not isinstance(key, str):  # as the loader names it
                    key = key_node.value
                if isinstance(key_node, yaml.ScalarNode):
                    yield True, key_path + (key,), key_node
                yield from walk(value_node, key_path + (key,))

    try:
        root = loader.get_single_node()
        if root is not None:
            yield from walk(root, ())
    finally:
        loader.dispose()


def scalar_nodes(text: str) -> dict[KeyPath, yaml.ScalarNode]:
    """Every value scalar of the document by key path (keys spelled as :mod:`jbcompile.loader` does)."""
    return {key_path: node for is_key, key_path, node in written_scalars(text) if not is_key}


def content_span(text: str, node: yaml.ScalarNode) -> tuple[int, int]:
    """Where the scalar's content is written in ``text``: without its quotes, and without the header line
    of a block scalar (``|-  # a comment``), which holds no content."""
    start, end = node.start_mark.index, node.end_mark.index
    style = node.style or ""
    if style in ("'", '"'):
        return start + 1, end - 1
    if style in ("|", ">"):
        header_end = text.find("\n", start, end)
        return (header_end + 1, end) if header_end >= 0 else (end, end)
    return start, end


_LINE_INDENT = re.compile(r"[ \t]*")


def scalar_segments(text: str, node: yaml.ScalarNode, value: str) -> list[Segment] | None:
    """Map the scalar's value onto its source: the runs of characters written verbatim.

    Works for plain, quoted and block scalars alike: the source lines (indentation and quotes
    stripped, block header skipped) must appear in the value in order, separated only by the line
    breaks or spaces that YAML folding turns them into. A quoted scalar is read as YAML reads it
    (:func:`value_sources`), so its escapes (``\\u3000``, ``''``, an escaped line break) only end a run.
    None when the source does not read as the value.
    """
    style = node.style or ""
    if style in ("'", '"'):
        read = _read_quoted(text, node, value)
        return None if read is None else _verbatim_runs(*read)
    start, end = content_span(text, node)
    segments: list[Segment] = []
    cursor = 0
    position = start
    for line in text[start:end].split("\n"):
        line_start = position
        position += len(line) + 1
        indent = _LINE_INDENT.match(line).end()  # type: ignore[union-attr]
        content = line[indent:].rstrip("\r")
        if style not in ("'", '"', "|", ">"):
            content = content.rstrip(" \t")
        if not content:
            continue
        while cursor < len(value) and value[cursor] in " \t\n" and not value.startswith(content, cursor):
            cursor += 1
        if not value.startswith(content, cursor):
            return None
        segments.append(Segment(cursor, line_start + indent, len(content)))
        cursor += len(content)
    if value[cursor:].strip(" \t\n"):
        return None
    return segments


def value_sources(text: str, node: yaml.ScalarNode, value: str) -> list[int] | None:
    """Where each character of the scalar's value is written in ``text``, and one more entry for the
    end of the value: a character an escape or a fold makes maps to where that escape or fold starts.

    The one map from value offsets to file offsets (a finding's ``line:col``); None when the source
    does not read as ``value``.
    """
    if (node.style or "") in ("'", '"'):
        return _quoted_sources(text, node, value)
    segments = scalar_segments(text, node, value)
    if segments is None:
        return None
    sources: list[int] = []
    last = content_span(text, node)[0]
    for segment in segments:
        sources.extend([last] * (segment.value_start - len(sources)))  # a fold: where the line ended
        sources.extend(range(segment.source_start, segment.source_start + segment.length))
        last = segment.source_start + segment.length
    sources.extend([last] * (len(value) + 1 - len(sources)))
    return sources


_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_ESCAPE_DIGITS = {"x": 2, "u": 4, "U": 8}
_BREAKS = "\r\n\x85\u2028\u2029"


def _quoted_sources(text: str, node: yaml.ScalarNode, value: str) -> list[int] | None:
    """:func:`value_sources` of a single- or double-quoted scalar."""
    read = _read_quoted(text, node, value)
    return None if read is None else read[0]


def _read_quoted(text: str, node: yaml.ScalarNode, value: str) -> tuple[list[int], list[bool]] | None:
    """Read a single- or double-quoted scalar as PyYAML's scanner does (escapes, ``''``, folded and
    escaped line breaks): per value character, where it is written and whether it is written as itself;
    None when the source does not read as ``value``."""
    start, end = content_span(text, node)
    double = node.style == '"'
    chars: list[str] = []
    sources: list[int] = []
    verbatim: list[bool] = []

    def put(piece: str, at: int, as_itself: bool = False) -> None:
        chars.append(piece)
        sources.extend([at] * len(piece))
        verbatim.extend([as_itself] * len(piece))

    def line_break(at: int) -> tuple[str, int]:
        """The line break at ``at`` as YAML reads it, and where the next line starts."""
        if text.startswith("\r\n", at):
            return "\n", at + 2
        return ("\n" if text[at] in "\r\n\x85" else text[at]), at + 1

    def fold(at: int, first: str | None, fold_at: int) -> int:
        """The line breaks from ``at`` on, each line's indentation skipped; ``first``: the break already
        read, which becomes a space unless more follow (None after an escaped line break)."""
        more: list[tuple[str, int]] = []
        while True:
            while at < end and text[at] in " \t":
                at += 1
            if at >= end or text[at] not in _BREAKS:
                break
            brk, after = line_break(at)
            more.append((brk, at))
            at = after
        if first is not None and first != "\n":
            put(first, fold_at)
        elif first is not None and not more:
            put(" ", fold_at)
        for brk, where in more:
            put(brk, where)
        return at

    i = start
    while i < end:
        ch = text[i]
        if ch in " \t":
            j = i
            while j < end and text[j] in " \t":
                j += 1
            if j < end and text[j] in _BREAKS:  # white space before a line break is dropped
                brk, after = line_break(j)
                i = fold(after, brk, i)
            else:
                for k in range(i, j):
                    put(text[k], k, True)
                i = j
        elif ch in _BREAKS:
            brk, after = line_break(i)
            i = fold(after, brk, i)
        elif not double and text.startswith("''", i):
            put("'", i)
            i += 2
        elif double and ch == "\\":
            code = text[i + 1] if i + 1 < end else ""
            if code in _ESCAPES:
                put(_ESCAPES[code], i)
                i += 2
            elif code in _ESCAPE_DIGITS:
                digits = text[i + 2 : i + 2 + _ESCAPE_DIGITS[code]]
                try:
                    put(chr(int(digits, 16)), i)
                except ValueError:
                    return None
                i += 2 + len(digits)
            elif code and code in _BREAKS:
                _, after = line_break(i + 1)
                i = fold(after, None, i)
            else:
                return None
        else:
            put(ch, i, True)
            i += 1
    if "".join(chars) != value:
        return None
    sources.append(end)
    return sources, verbatim


def _verbatim_runs(sources: list[int], verbatim: list[bool]) -> list[Segment]:
    """The runs of value characters written as themselves at consecutive places of the source."""
    segments: list[Segment] = []
    run: int | None = None
    for index in range(len(verbatim) + 1):
        extends = (
            index < len(verbatim)
            and verbatim[index]
            and run is not None
            and sources[index - 1] + 1 == sources[index]
        )
        if run is not None and not extends:
            segments.append(Segment(run, sources[run], index - run))
            run = None
        if run is None and index < len(verbatim) and verbatim[index]:
            run = index
    return segments


def _source_offset(segments: list[Segment], start: int, length: int) -> int | None:
    """Source offset of ``value[start:start+length]`` when it lies inside one verbatim run."""
    for segment in segments:
        if segment.value_start <= start and start + length <= segment.value_start + segment.length:
            return segment.source_start + (start - segment.value_start)
    return None


def _reads_as(text: str, path: Path, expected: dict[KeyPath, str]) -> bool:
    """Does ``text`` parse, with exactly the expected values at the edited key paths?"""
    from .loader import parse_yaml

    try:
        data = parse_yaml(text, str(path)).data
    except DiagnosticError:
        return False
    return all(value_at(data, key_path) == value for key_path, value in expected.items())


def _choose(value: str, edits: list[Edit]) -> tuple[list[Edit], list[Edit]]:
    """Split one scalar's edits into (to apply, to skip): stale, already applied, no-op, overlapping."""
    chosen: list[Edit] = []
    skipped: list[Edit] = []
    last_end = -1
    for edit in sorted(set(edits)):
        in_place = value[edit.start : edit.start + len(edit.old)] == edit.old
        inserted_already = not edit.old and value.startswith(edit.new, edit.start)
        if not in_place or inserted_already or edit.old == edit.new or edit.start < last_end:
            skipped.append(edit)
            continue
        chosen.append(edit)
        last_end = edit.start + len(edit.old)
    return chosen, skipped


def _edited(value: str, edits: list[Edit]) -> str:
    for edit in sorted(edits, reverse=True):
        value = value[: edit.start] + edit.new + value[edit.start + len(edit.old) :]
    return value


def apply_edits(path: Path, edits: Sequence[tuple[KeyPath, Edit]]) -> EditOutcome:
    """Apply lint fixes to the string scalars of one YAML file; nothing else in the file changes.

    An edit whose ``old`` text is no longer at ``start`` (already applied, or the file changed since
    it was checked) is skipped, so applying the same edits twice changes nothing the second time.
    Overlapping edits on one scalar keep the first by position. Raises DiagnosticError when the file
    does not parse.
    """
    from .loader import parse_yaml

    path = Path(path)
    outcome = EditOutcome()
    if not edits:
        return outcome
    text, bom = _read_text(path)
    data = parse_yaml(text, str(path)).data
    nodes = scalar_nodes(text)

    by_scalar: dict[KeyPath, list[Edit]] = {}
    for key_path, edit in edits:
        by_scalar.setdefault(tuple(key_path), []).append(edit)

    splices: list[tuple[int, int, str]] = []  # (source start, source end, new text)
    spliced: dict[KeyPath, tuple[str, list[Edit]]] = {}
    fallback: dict[KeyPath, tuple[str, list[Edit]]] = {}
    for key_path, scalar_edits in by_scalar.items():
        value = value_at(data, key_path)
        node = nodes.get(key_path)
        if not isinstance(value, str) or node is None:
            outcome.skipped.extend((key_path, e) for e in scalar_edits)
            continue
        chosen, skipped = _choose(value, scalar_edits)
        outcome.skipped.extend((key_path, e) for e in skipped)
        if not chosen:
            continue
        new_value = _edited(value, chosen)
        segments = scalar_segments(text, node, value)
        offsets = [
            None if segments is None else _source_offset(segments, e.start, len(e.old)) for e in chosen
        ]
        if any(offset is None for offset in offsets):
            fallback[key_path] = (new_value, chosen)
            continue
        splices.extend(
            (offset, offset + len(e.old), e.new)
            for e, offset in zip(chosen, offsets, strict=True)
            if offset is not None
        )
        spliced[key_path] = (new_value, chosen)

    if splices:
        new_text = text
        for source_start, source_end, new in sorted(splices, reverse=True):
            new_text = new_text[:source_start] + new + new_text[source_end:]
        if _reads_as(new_text, path, {key_path: value for key_path, (value, _) in spliced.items()}):
            write_atomic(path, (_BOM if bom else "") + new_text)
            for key_path, (_, chosen) in spliced.items():
                outcome.spliced.extend((key_path, e) for e in chosen)
        else:  # a splice changed how YAML reads the scalar (e.g. a plain scalar now needs quotes)
            fallback.update(spliced)
    if fallback:
        set_values(path, [(key_path, value) for key_path, (value, _) in fallback.items()])
        for key_path, (_, chosen) in fallback.items():
            outcome.rewritten.extend((key_path, e) for e in chosen)
    return outcome
