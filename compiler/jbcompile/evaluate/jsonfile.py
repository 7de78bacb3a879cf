"""The JSON Lines and JSON files that users hand to ``score`` and that ``eval`` resumes from: read by the
tool's one reader (:mod:`jbcompile.jsonl`), every unreadable line reported under the evaluator's codes."""

from __future__ import annotations

from pathlib import Path

from .. import jsonl, reading
from ..jsonl import JsonCodes, Lines, limited
from ..reading import FileKind

CODES = JsonCodes(not_json="EV061", too_deep="EV111", not_text="EV112", not_object="EV061", not_rows="EV114")


def read_json_lines(path: Path, *, tail_may_be_cut: bool = False) -> Lines:
    """Every line of a predictions or requests log (see :func:`jbcompile.jsonl.read_json_lines`)."""
    return jsonl.read_json_lines(path, CODES, reading.PREDICTIONS, tail_may_be_cut=tail_may_be_cut)


def read_json_records(path: Path, kind: FileKind = reading.PREDICTIONS) -> Lines:
    """The rows of a JSON Lines file, a JSON array or an ``{"entries": [...]}`` object: predictions by
    default, a release file (``reading.RELEASE``) for ``--dataset``."""
    return jsonl.read_json_records(path, CODES, kind)


__all__ = ["CODES", "Lines", "limited", "read_json_lines", "read_json_records"]
