"""Reading JSON Lines and JSON files that users hand to ``score`` and that ``eval`` resumes from.

Every record keeps the line it came from, and every unreadable line becomes a positioned diagnostic
(``file:line:col CODE``) instead of an exception: bytes that are not UTF-8, text that is not JSON,
nesting too deep for the parser, a line that is not an object. Nothing is dropped silently; the caller
decides whether a problem stops the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic

MAX_REPORTED = 20  # diagnostics listed per file; the last one says how many more there are
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


@dataclass
class Lines:
    """The objects of a file with their 1-based line numbers, and what could not be read."""

    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    cut_tail: bool = False  # the last line has no line break (a write that an interruption cut short)


def _problem(code: str, message: str, path: Path, line: int, col: int | None = None, hint: str | None = None):
    return Diagnostic(code, message, path=str(path), line=line, col=col, hint=hint)


def parse_value(text: str, path: Path, line: int) -> tuple[Any, Diagnostic | None]:
    """One JSON value; a decoding problem (syntax, nesting too deep) comes back as a diagnostic."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, _problem(
            "EV061",
            f"not JSON: {error.msg}",
            path,
            line + error.lineno - 1,
            error.colno,
        )
    except RecursionError:
        return None, _problem(
            "EV111", "JSON nested too deeply to read", path, line, hint="write each record as a flat object"
        )


def read_json_lines(path: Path, *, tail_may_be_cut: bool = False) -> Lines:
    """Every line of a JSON Lines file; blank lines are skipped.

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
                    "EV112",
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
                _problem("EV112", "a NUL character: this looks like a binary file", path, number)
            )
            continue
        value, problem = parse_value(text, path, number)
        if problem is not None:
            result.problems.append(problem)
            continue
        if not isinstance(value, dict):
            result.problems.append(
                _problem("EV061", f"a line must be a JSON object, found {type(value).__name__}", path, number)
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


def read_json_records(path: Path) -> Lines:
    """The rows of a JSON Lines file, of a JSON array of objects, or of a JSON object's ``entries`` array
    (an evaluation script may write one object ``{"score": …, "entries": [...]}``)."""
    data = path.read_bytes()
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    first_line = next((line.strip() for line in data.split(b"\n") if line.strip()), b"")
    first_line = first_line.removeprefix(b"\xef\xbb\xbf")
    if head == b"[" or (head == b"{" and not _complete_object(first_line)):
        return _read_document(path, data)
    lines = read_json_lines(path)
    if (
        len(lines.records) == 1
        and not lines.problems
        and isinstance(lines.records[0][1].get("entries"), list)
    ):
        return _read_document(path, data)  # the script's object written on one line
    return lines


def _complete_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8", errors="replace")), dict)
    except (ValueError, RecursionError):
        return False


def _read_document(path: Path, data: bytes) -> Lines:
    result = Lines()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        result.problems.append(_problem("EV112", "bytes that are not UTF-8", path, line, col))
        return result
    value, problem = parse_value(text, path, 1)
    if problem is not None:
        last = max(1, len(text.rstrip().splitlines()))  # an unexpected end is on the last line with text
        if problem.line is not None and problem.line > last:
            problem = Diagnostic(
                problem.code, problem.message + " (the file ends here)", path=str(path), line=last
            )
        result.problems.append(problem)
        return result
    if isinstance(value, list):
        elements, start = value, _skip(text, 0)
    elif isinstance(value, dict) and isinstance(value.get("entries"), list):
        elements = value["entries"]
        start = [offset for key, offset, _ in object_members(text) if key == "entries"][-1]
    else:
        result.problems.append(
            _problem(
                "EV114",
                "a JSON document that is neither a list of rows nor an object with an `entries` list",
                path,
                1,
                hint="give JSON Lines (one row per line)",
            )
        )
        return result
    for offset, element in zip(array_offsets(text, start), elements, strict=True):
        line = line_of(text, offset)
        if isinstance(element, dict):
            result.records.append((line, element))
        else:
            result.problems.append(
                _problem("EV061", f"a row must be a JSON object, found {type(element).__name__}", path, line)
            )
    return result
