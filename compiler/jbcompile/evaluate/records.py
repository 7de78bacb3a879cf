"""What a predictions file's rows must hold to be counted: our own records (``score``, and a resume
reading its log back) and another harness's rows; and which design a row belongs to when nothing else
says. A damaged value is refused with its line, never counted as another."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..diagnostics import Diagnostic
from .kind import RAW_REPLY, EvalKind, EvalOptions, Record, option_index
from .predictions import has_example_id
from .registered import all_eval_kinds


def has_category(row: Record) -> bool:
    return isinstance(row.get("category"), str) and row["category"] != ""


def record_kind(record: Record) -> str | None:
    """The kind whose prediction records carry every field this one has."""
    return next(
        (k.name for k in all_eval_kinds() if k.record_fields and set(k.record_fields) <= set(record)), None
    )


def row_kind(row: Record) -> str | None:
    """The kind a foreign row belongs to, from its columns; None when they do not tell."""
    return next((k.name for k in all_eval_kinds() if k.recognises_row(row)), None)


# What to do about each problem of a line of our predictions.jsonl: it is a file eval wrote.
_OUR_RECORD_HINTS = {
    "EV127": "score one task's predictions at a time",
    "EV129": "write the value as null (JSON has no NaN or Infinity), or rerun the eval that wrote the file",
}


def non_finite(value: Any, name: str = "") -> list[str]:
    """The fields of a row (``option_logprobs[2]``) that hold NaN or ±Infinity: Python's json reads them,
    but they are no JSON, would pass into every file written from the row, and count as no number."""
    if isinstance(value, float) and not math.isfinite(value):
        return [name]
    if isinstance(value, dict):
        return [
            found
            for key, item in value.items()
            for found in non_finite(item, f"{name}.{key}" if name else str(key))
        ]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in non_finite(item, f"{name}[{i}]")]
    return []


def _non_finite_problem(row: Record) -> str | None:
    fields = non_finite(row)
    if not fields:
        return None
    shown = ", ".join(fields[:5]) + (f" and {len(fields) - 5} more" if len(fields) > 5 else "")
    return f"{shown} {'holds' if len(fields) == 1 else 'hold'} NaN or Infinity, which is no JSON number"


_WRITTEN_BY_EVAL = (
    "score predictions.jsonl as eval wrote it; for another tool's file name its answer column with "
    "--prediction-field"
)


def check_our_records(
    kind: EvalKind, rows: Sequence[Record], lines: Sequence[int], path: str
) -> list[Diagnostic]:
    """Our predictions.jsonl (scored, or read back to resume a run): each line names its row and
    category, its answers are options, and its label fields are what the kind's metrics count with."""
    n_options = len(kind.option_labels)
    problems = []
    for row, line in zip(rows, lines, strict=True):
        found: list[tuple[str, str]] = []
        if not has_example_id(row):
            found.append(("EV124", "a prediction without an example_id"))
        if not has_category(row):
            found.append(("EV122", "a prediction without a category"))
        if row.get("pred") is not None and not option_index(row.get("pred"), n_options):
            found.append(
                (
                    "EV120",
                    f"pred must be an option index 0–{n_options - 1} or null, found {row.get('pred')!r}",
                )
            )
        if not option_index(row.get("gold"), n_options):
            found.append(
                ("EV123", f"gold must be an option index 0–{n_options - 1}, found {row.get('gold')!r}")
            )
        lacking = [
            name
            for name in kind.record_fields
            if name not in row and name not in ("example_id", "category")  # EV124, EV122
        ]
        if lacking:
            found.append(("EV126", f"not a {kind.name} prediction: it lacks {', '.join(lacking)}"))
        found += [("EV125", problem) for problem in kind.record_problems(row)]
        if (not_a_number := _non_finite_problem(row)) is not None:
            found.append(("EV129", not_a_number))
        if row.get("task") != rows[0].get("task"):
            found.append(
                ("EV127", f"task {row.get('task')!r} differs from the first line's {rows[0].get('task')!r}")
            )
        problems += [
            Diagnostic(
                code, message, path=path, line=line, hint=_OUR_RECORD_HINTS.get(code, _WRITTEN_BY_EVAL)
            )
            for code, message in found
        ]
    return problems


def check_foreign_rows(
    kind: EvalKind, rows: Sequence[Record], lines: Sequence[int], path: str
) -> list[Diagnostic]:
    """Another harness's rows: each has a category, and its labels are what the kind can count with."""
    problems = []
    for row, line in zip(rows, lines, strict=True):
        if not has_category(row):
            problems.append(
                Diagnostic(
                    "EV122",
                    "a row without a category",
                    path=path,
                    line=line,
                    hint="give each row its category",
                )
            )
            continue
        problems += [
            Diagnostic(
                "EV125",
                message,
                path=path,
                line=line,
                hint="fix the row's labels, or name the design of the file with --kind",
            )
            for message in kind.foreign_row_problems(row)
        ]
        if (not_a_number := _non_finite_problem(row)) is not None:
            problems.append(
                Diagnostic("EV129", not_a_number, path=path, line=line, hint=_OUR_RECORD_HINTS["EV129"])
            )
    return problems


def resolve_predictions(
    kind: EvalKind, rows: list[Record], field_name: str, reading: EvalOptions | None = None
) -> dict[str, Any]:
    """Each row's prediction as an option index (or None), read from an index, a label, an option text
    or a raw reply as ``eval`` reads one of ``reading``'s task and setting under its protocol
    (:meth:`.kind.EvalKind.read_prediction`; by default a qa reply, read leniently); returns the raw
    values by example id."""
    reading = reading or EvalOptions(setting=None, scoring="generate")
    from .parsing import are_texts

    raw: dict[str, Any] = {}
    n_options = len(kind.option_labels)
    for row in rows:
        if field_name not in row:
            continue
        value = row.get(RAW_REPLY, row[field_name])
        raw[str(row.get("example_id"))] = value
        options = row_options(row, n_options)
        if are_texts(options) and not isinstance(row[field_name], int):
            row[field_name] = kind.read_prediction(row[field_name], options, reading)
    return raw


def row_options(row: Record, count: int) -> list[Any]:
    """A release-format row's options as its ``ans0``… fields hold them (None where one is missing)."""
    return [row.get(f"ans{i}") for i in range(count)]
