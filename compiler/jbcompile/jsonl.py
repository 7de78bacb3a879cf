"""The one reader of JSON Lines and JSON files in the tool: the rows ``score`` is given, the predictions
log ``eval`` resumes from, the releases ``import`` brings in, the run, results and manifest records.

Every file is bounded before it is read (:mod:`jbcompile.reading`: its kind's size limit, regular
files only). Every record keeps the line it came from, and every unreadable line becomes a positioned
diagnostic (``file:line:col CODE``) instead of an exception: bytes that are not UTF-8, text that is not
JSON, nesting too deep for the parser, a line that is not an object, an object that holds one key twice
(F003: ``json`` would silently keep the later value, so ``{"pred": 1, "pred": 2}`` would be scored as 2).
Nothing is dropped silently; the caller decides whether a problem stops the run. Each area of the tool
reports these problems under its own codes (:class:`JsonCodes`); what counts as which problem is decided
here, once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import reading
from .diagnostics import Diagnostic, DiagnosticError
from .reading import FileKind

MAX_REPORTED = 20  # diagnostics listed per file by ``limited``; the last one says how many more there are
_DECODER = json.JSONDecoder()
# the members of a JSON object that list its rows: a script's ``entries``, an inspect log's ``samples``
ROW_LISTS = ("entries", "samples")
_WHITESPACE = " \t\n\r"


@dataclass(frozen=True)
class JsonCodes:
    """The code each kind of unreadable input is reported under, in the caller's area."""

    not_json: str  # text that is not JSON
    too_deep: str  # JSON nested deeper than the parser can go
    not_text: str  # bytes that are not UTF-8, or a NUL: a binary file
    not_object: str  # a line, or an element of an array, that is not a JSON object
    not_rows: str  # a JSON document that is neither a list of rows nor an object with ``entries``


@dataclass
class Lines:
    """The objects of a file with their 1-based line numbers, and what could not be read."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    cut_tail: bool = False  # the last line has no line break (a write that an interruption cut short)
    # a JSON object's members beside its rows (an inspect log's ``status`` and ``error``): a reader may
    # need to know how the file's writer ended
    members: dict[str, Any] = field(default_factory=dict)


def _problem(
    code: str, message: str, path: Path, line: int, col: int | None = None, *, hint: str
) -> Diagnostic:
    return Diagnostic(code, message, path=str(path), line=line, col=col, hint=hint)


class DuplicateKey(ValueError):
    """A JSON object holds the same key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return result


class LoneSurrogate(ValueError):
    """A JSON string escapes half of a UTF-16 surrogate pair (``"\\ud800"``): no character, and text
    that cannot be written as UTF-8 anywhere later."""

    def __init__(self) -> None:
        super().__init__("a \\u escape of half a surrogate pair, which is no character")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads(text: str | bytes) -> Any:
    """``json.loads``, but an object with one key twice raises :class:`DuplicateKey` and a lone
    surrogate :class:`LoneSurrogate` (both ValueErrors) instead of keeping the later value or passing
    text that is not Unicode on: the one JSON parser of the tool."""
    value = json.loads(text, object_pairs_hook=_unique_keys)
    shown = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    if _SURROGATE_ESCAPE.search(shown):  # rare: only then is the value walked
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise LoneSurrogate from None
    return value


def dumps(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """The one JSON writer of the tool (files, lines, documents on stdout): text as it is, not ``\\u``
    escapes, and never NaN or Infinity, which are not JSON — strict readers (JavaScript, jq, Go, a
    database) refuse the whole file; a value holding one raises ValueError instead of being written."""
    return json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys, allow_nan=False)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')


def duplicate_key_offset(text: str) -> tuple[int, str] | None:
    """Where the first key held twice by one object of ``text`` (JSON but for that) stands, and the
    key; walked without recursion, so any depth the parser took is fine here too."""
    stack: list[set[str] | None] = []  # per open container: the keys of an object, None for an array
    previous = ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "{":
            stack.append(set())
        elif token == "[":
            stack.append(None)
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif token.startswith('"') and previous in ("{", ",") and stack and stack[-1] is not None:
            key = json.loads(token)
            if key in stack[-1]:
                return match.start(), key
            stack[-1].add(key)
        previous = token
    return None


def duplicate_key_problem(text: str, error: DuplicateKey, path: Path | str, line: int = 1) -> Diagnostic:
    """F003 at the second occurrence of the key (``line``: where ``text`` starts in the file)."""
    found = duplicate_key_offset(text)
    offset, key = found if found is not None else (0, error.key)
    return _problem(
        "F003",
        f"the key {key!r} appears twice in one object: which value counts would be a guess",
        Path(path),
        line + text.count("\n", 0, offset),
        offset - (text.rfind("\n", 0, offset) + 1) + 1,
        hint="keep one of the two",
    )


def decode_error_text(error: json.JSONDecodeError, line: int = 1) -> str:
    """What the JSON decoder says, whole. Some of its messages end in "at" ("Unterminated string starting
    at"), the position being kept apart: it is added here, in the file's lines when the text spans several
    (``line``: the file line the text starts on), else as the column of the one line."""
    if not error.msg.endswith(" at"):
        return error.msg
    if "\n" in error.doc:
        return f"{error.msg} line {line + error.lineno - 1} column {error.colno}"
    return f"{error.msg} column {error.colno}"


def parse_value(
    text: str, path: Path, line: int, codes: JsonCodes, hint: str = "fix the JSON at this position"
) -> tuple[Any, Diagnostic | None]:
    """One JSON value; a decoding problem (syntax, nesting too deep, a key twice) comes back as a
    diagnostic, ``hint`` saying what to do about a syntax error where the value stands."""
    try:
        return loads(text), None
    except DuplicateKey as error:
        return None, duplicate_key_problem(text, error, path, line)
    except LoneSurrogate as error:
        found = _SURROGATE_ESCAPE.search(text)
        offset = found.start() if found else 0
        return None, _problem(
            codes.not_text,
            f"not text: {error}",
            path,
            line + text.count("\n", 0, offset),
            offset - (text.rfind("\n", 0, offset) + 1) + 1,
            hint="write the character itself, or a complete surrogate pair",
        )
    except json.JSONDecodeError as error:
        return None, _problem(
            codes.not_json,
            f"not JSON: {decode_error_text(error, line)}",
            path,
            line + error.lineno - 1,
            error.colno,
            hint=hint,
        )
    except RecursionError:
        return None, _problem(
            codes.too_deep,
            "JSON nested too deeply to read",
            path,
            line,
            hint="write each record as a flat object",
        )


def read_json_lines(path: Path, codes: JsonCodes, kind: FileKind, *, tail_may_be_cut: bool = False) -> Lines:
    """Every line of a JSON Lines file of ``kind`` (bounded: DiagnosticError beyond its limit, or for a
    file that is not a regular file); blank lines are skipped. Only a line break ends a line (a JSON
    string may hold U+2028 or a form feed).

    With ``tail_may_be_cut`` (our own append-only predictions log), a last line without its line break
    is reported through ``cut_tail`` instead of as a problem: it is the write an interruption cut short.
    """
    return _json_lines(path, reading.read_bytes(path, kind), codes, tail_may_be_cut)


def _json_lines(path: Path, data: bytes, codes: JsonCodes, tail_may_be_cut: bool = False) -> Lines:
    result = Lines()
    chunks = data.split(b"\n")
    last = len(chunks) - 1
    for index, chunk in enumerate(chunks):
        number = index + 1
        if index == last:
            if not chunk.strip():
                break
            if tail_may_be_cut:
                result.cut_tail = True
                break
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as error:
            result.problems.append(
                _problem(
                    codes.not_text,
                    f"bytes that are not UTF-8 (byte {error.start + 1} of the line)"
                    + ("; this looks like a binary file" if b"\0" in chunk else ""),
                    path,
                    number,
                    error.start + 1,
                    hint="give a UTF-8 JSON Lines file",
                )
            )
            continue
        if index == 0:
            text = text.removeprefix("\ufeff")
        if not text.strip():
            continue
        if "\0" in text:
            result.problems.append(
                _problem(
                    codes.not_text,
                    "a NUL character: this looks like a binary file",
                    path,
                    number,
                    hint="give a UTF-8 JSON Lines file",
                )
            )
            continue
        value, problem = parse_value(text, path, number, codes, hint=_ONE_OBJECT_PER_LINE)
        if problem is not None:
            if not result.records and _looks_like_csv(text):
                problem = replace(
                    problem,
                    message="not JSON: this looks like CSV",
                    hint=f"convert it to JSON Lines: {_ONE_OBJECT_PER_LINE}",
                )
            result.problems.append(problem)
            continue
        if not isinstance(value, dict):
            result.problems.append(
                _problem(
                    codes.not_object,
                    f"a line must be a JSON object, found {type(value).__name__}",
                    path,
                    number,
                    hint=_ONE_OBJECT_PER_LINE,
                )
            )
            continue
        result.records.append((number, value))
    return result


def repeated(keys: Iterable[Hashable | None]) -> dict[Hashable, list[int]]:
    """The keys that occur more than once, each with the positions (from 0) where it does, in the order
    of their second occurrence; a None key names nothing and never repeats. The one place where rows are
    found to repeat: ``score`` and ``eval`` refuse an example id on two lines (EV121), an import skips a
    repeated release row (IM064)."""
    where: dict[Hashable, list[int]] = {}
    for position, key in enumerate(keys):
        if key is not None:
            where.setdefault(key, []).append(position)
    found = {key: places for key, places in where.items() if len(places) > 1}
    return dict(sorted(found.items(), key=lambda item: item[1][1]))


def limited(problems: list[Diagnostic]) -> list[Diagnostic]:
    """The first ``MAX_REPORTED`` problems, and one more saying how many were left out."""
    if len(problems) <= MAX_REPORTED:
        return problems
    rest = len(problems) - MAX_REPORTED
    last = problems[MAX_REPORTED]
    return [
        *problems[:MAX_REPORTED],
        Diagnostic(
            last.code,
            f"… and {rest} more problem(s) like these",
            path=last.path,
            line=last.line,
            hint=last.hint or "fix the problems above, then run the command again to see the rest",
        ),
    ]


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def object_members(text: str) -> Iterator[tuple[str, int, Any]]:
    """The top-level members of a JSON object as (key, offset of the value, value), in file order.

    Lets a reader give the line of each element of a big array (e.g. ``entries``) without a parser of
    its own; the text must already be known to be valid JSON.
    """
    pos = _skip(text, 0)
    if not text.startswith("{", pos):
        return
    pos = _skip(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, _skip(text, pos) + 1)  # the colon
        start = pos
        value, pos = _DECODER.raw_decode(text, pos)
        yield key, start, value
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)


def array_offsets(text: str, start: int) -> list[int]:
    """Offsets of the elements of the JSON array that begins at ``start`` (valid JSON assumed)."""
    offsets = []
    pos = _skip(text, start + 1)
    while pos < len(text) and text[pos] != "]":
        offsets.append(pos)
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
    return offsets


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@dataclass
class Document:
    """A whole JSON file, parsed: its text and value, or the problem that stopped it."""

    text: str = ""
    value: Any = None
    problem: Diagnostic | None = None

    def element_lines(self, start: int | None = None) -> list[int]:
        """The line of each element of the array that begins at ``start`` (default: the document)."""
        begin = _skip(self.text, 0) if start is None else start
        return [line_of(self.text, offset) for offset in array_offsets(self.text, begin)]


def read_json_document(path: Path, codes: JsonCodes, kind: FileKind) -> Document:
    """One JSON document (a release that is one JSON list), bounded by ``kind``; a problem is positioned."""
    return _parse_document(path, reading.read_bytes(path, kind), codes)


def read_json(path: Path, kind: FileKind, shown: str | None = None) -> Any:
    """One JSON file the tool wrote or reads whole (run.json, results.json, manifest.json …).

    Raises DiagnosticError for a file beyond ``kind``'s bounds (F001, F002) and for a key held twice
    (F003, positioned); OSError when it cannot be read; ValueError when it is not UTF-8 JSON (nesting
    too deep included): the caller says what the file was for.
    """
    shown = shown or str(path)
    text = reading.read_bytes(path, kind, shown).decode("utf-8").removeprefix("\ufeff")
    try:
        return loads(text)
    except DuplicateKey as error:
        raise DiagnosticError([duplicate_key_problem(text, error, shown)]) from None
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


def _parse_document(path: Path, data: bytes, codes: JsonCodes) -> Document:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return Document(
            problem=_problem(
                codes.not_text, "bytes that are not UTF-8", path, line, col, hint="give a UTF-8 file"
            )
        )
    value, problem = parse_value(text, path, 1, codes)
    if problem is not None:
        last = max(1, len(text.rstrip().splitlines()))  # an unexpected end is on the last line with text
        if problem.line is not None and problem.line > last:
            problem = replace(
                problem,
                message=problem.message + " (the file ends here)",
                line=last,
                col=None,
                hint="complete the JSON document: a bracket or brace is not closed",
            )
        return Document(text, problem=problem)
    return Document(text, value)


_ONE_OBJECT_PER_LINE = 'write one JSON object per line ({"id": …, …})'


def _looks_like_csv(line: str) -> bool:
    """A header or row of comma- or tab-separated values: a file given where JSON Lines are read."""
    stripped = line.strip()
    return stripped[:1] not in ("{", "[", '"') and ("," in stripped or "\t" in stripped)


def read_json_records(path: Path, codes: JsonCodes, kind: FileKind) -> Lines:
    """The rows of a JSON Lines file, of a JSON array of objects, or of a JSON object's ``entries`` (or
    ``samples``) array (an evaluation script may write one object ``{"score": …, "entries": [...]}``, an
    inspect JSON log ``{"samples": [...]}``, indented or on one line); bounded by ``kind``."""
    data = reading.read_bytes(path, kind)
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    first_line = next((line.strip() for line in data.split(b"\n") if line.strip()), b"")
    first_line = first_line.removeprefix(b"\xef\xbb\xbf")
    if head == b"[" or (head == b"{" and not _complete_object(first_line)):
        return _read_rows_document(path, data, codes)
    lines = _json_lines(path, data, codes)
    if (
        len(lines.records) == 1
        and not lines.problems
        and any(isinstance(lines.records[0][1].get(key), list) for key in ROW_LISTS)
    ):
        return _read_rows_document(path, data, codes)  # a script's object (an inspect log) on one line
    return lines


def _complete_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8", errors="replace")), dict)
    except (ValueError, RecursionError):
        return False


def _read_rows_document(path: Path, data: bytes, codes: JsonCodes) -> Lines:
    result = Lines()
    document = _parse_document(path, data, codes)
    if document.problem is not None:
        result.problems.append(document.problem)
        return result
    value, text = document.value, document.text
    if isinstance(value, list):
        elements, start = value, _skip(text, 0)
    elif isinstance(value, dict) and any(isinstance(value.get(key), list) for key in ROW_LISTS):
        key = next(key for key in ROW_LISTS if isinstance(value.get(key), list))
        elements = value[key]
        start = [offset for name, offset, _ in object_members(text) if name == key][-1]
        result.members = {name: member for name, member in value.items() if name != key}
    else:
        result.problems.append(
            _problem(
                codes.not_rows,
                "a JSON document that is neither a list of rows nor an object with an `entries` or `samples` "
                "list",
                path,
                1,
                hint="give JSON Lines (one row per line)",
            )
        )
        return result
    for number, (line, element) in enumerate(zip(document.element_lines(start), elements, strict=True), 1):
        if isinstance(element, dict):
            result.records.append((line, element))
        else:
            result.problems.append(
                _problem(
                    codes.not_object,
                    f"a row must be a JSON object, found {type(element).__name__} (row {number} of the list)",
                    path,
                    line,
                    hint='give a list of JSON objects ([{"id": …, …}, …])',
                )
            )
    return result
