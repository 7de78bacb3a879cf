"""The one reader of JSON Lines and JSON files in the tool: the rows ``score`` is given, the predictions
log ``eval`` resumes from, the releases ``import`` brings in.

Every record keeps the line it came from, and every unreadable line becomes a positioned diagnostic
(``file:line:col CODE``) instead of an exception: bytes that are not UTF-8, text that is not JSON,
nesting too deep for the parser, a line that is not an object. Nothing is dropped silently; the caller
decides whether a problem stops the run. Each area of the tool reports these problems under its own
codes (:class:`JsonCodes`); what counts as which problem is decided here, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic

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


def _problem(code: str, message: str, path: Path, line: int, col: int | None = None, hint: str | None = None):
    return Diagnostic(code, message, path=str(path), line=line, col=col, hint=hint)


def parse_value(text: str, path: Path, line: int, codes: JsonCodes) -> tuple[Any, Diagnostic | None]:
    """One JSON value; a decoding problem (syntax, nesting too deep) comes back as a diagnostic."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, _problem(
            codes.not_json,
            f"not JSON: {error.msg}",
            path,
            line + error.lineno - 1,
            error.colno,
        )
    except RecursionError:
        return None, _problem(
            codes.too_deep,
            "JSON nested too deeply to read",
            path,
            line,
            hint="write each record as a flat object",
        )


def read_json_lines(path: Path, codes: JsonCodes, *, tail_may_be_cut: bool = False) -> Lines:
    """Every line of a JSON Lines file; blank lines are skipped. Only a line break ends a line (a JSON
    string may hold U+2028 or a form feed).

    With ``tail_may_be_cut`` (our own append-only predictions log), a last line without its line break
    is reported through ``cut_tail`` instead of as a problem: it is the write an interruption cut short.
    """
    result = Lines()
    data = path.read_bytes()
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
                _problem(codes.not_text, "a NUL character: this looks like a binary file", path, number)
            )
            continue
        value, problem = parse_value(text, path, number, codes)
        if problem is not None:
            result.problems.append(problem)
            continue
        if not isinstance(value, dict):
            result.problems.append(
                _problem(
                    codes.not_object,
                    f"a line must be a JSON object, found {type(value).__name__}",
                    path,
                    number,
                )
            )
            continue
        result.records.append((number, value))
    return result


def limited(problems: list[Diagnostic]) -> list[Diagnostic]:
    """The first ``MAX_REPORTED`` problems, and one more saying how many were left out."""
    if len(problems) <= MAX_REPORTED:
        return problems
    rest = len(problems) - MAX_REPORTED
    last = problems[MAX_REPORTED]
    return [
        *problems[:MAX_REPORTED],
        Diagnostic(last.code, f"… and {rest} more problem(s) like these", path=last.path, line=last.line),
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


def read_json_document(path: Path, codes: JsonCodes) -> Document:
    """One JSON document (a release that is one JSON list); a problem is positioned."""
    return _parse_document(path, path.read_bytes(), codes)


def _parse_document(path: Path, data: bytes, codes: JsonCodes) -> Document:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return Document(problem=_problem(codes.not_text, "bytes that are not UTF-8", path, line, col))
    value, problem = parse_value(text, path, 1, codes)
    if problem is not None:
        last = max(1, len(text.rstrip().splitlines()))  # an unexpected end is on the last line with text
        if problem.line is not None and problem.line > last:
            problem = Diagnostic(
                problem.code, problem.message + " (the file ends here)", path=str(path), line=last
            )
        return Document(text, problem=problem)
    return Document(text, value)


def read_json_records(path: Path, codes: JsonCodes) -> Lines:
    """The rows of a JSON Lines file, of a JSON array of objects, or of a JSON object's ``entries`` array
    (an evaluation script may write one object ``{"score": …, "entries": [...]}``)."""
    data = path.read_bytes()
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    first_line = next((line.strip() for line in data.split(b"\n") if line.strip()), b"")
    first_line = first_line.removeprefix(b"\xef\xbb\xbf")
    if head == b"[" or (head == b"{" and not _complete_object(first_line)):
        return _read_rows_document(path, data, codes)
    lines = read_json_lines(path, codes)
    if (
        len(lines.records) == 1
        and not lines.problems
        and isinstance(lines.records[0][1].get("entries"), list)
    ):
        return _read_rows_document(path, data, codes)  # the script's object written on one line
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
    for line, element in zip(document.element_lines(start), elements, strict=True):
        if isinstance(element, dict):
            result.records.append((line, element))
        else:
            result.problems.append(
                _problem(
                    codes.not_object,
                    f"a row must be a JSON object, found {type(element).__name__}",
                    path,
                    line,
                )
            )
    return result
