"""The run folder's files: ``predictions.jsonl`` (append-only while running, so a run can resume) and
atomically written JSON / text files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import reading
from ..diagnostics import Diagnostic, DiagnosticError
from ..fsio import write_atomic
from ..jsonl import read_json
from ..outputs import is_own_name
from .jsonfile import limited, read_json_lines

PREDICTIONS = "predictions.jsonl"
RESULTS = "results.json"
RUN = "run.json"
REPORT = "report.md"
OVERWRITING = (
    ".predictions.overwrite.jsonl"  # an --overwrite run's log, until its results replace the old run
)
RUN_KEYS = frozenset({"model", "dataset", "config", "options", "template_sha256"})  # what run.json holds


def has_example_id(record: Mapping[str, Any]) -> bool:
    """Does the record name its row (a string or an integer id, not a bool)?"""
    example_id = record.get("example_id")
    return isinstance(example_id, str | int) and not isinstance(example_id, bool)


@contextmanager
def writing(out: Path) -> Iterator[None]:
    """A failed write of the run folder (read-only place, full disk, file size limit) as a diagnostic."""
    try:
        yield
    except OSError as error:
        where = error.filename or out
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV102",
                    f"cannot write the run folder: {error.strerror or error}",
                    path=str(where),
                    hint="choose an --out you can write to, with free space",
                )
            ]
        ) from None


def dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def append_records(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Append one JSON line per record and flush to disk (the unit of resumption is one batch)."""
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    if not lines:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(lines)
        handle.flush()
        os.fsync(handle.fileno())


def read_records(
    path: Path,
    check: Callable[[list[dict[str, Any]], list[int]], list[Diagnostic]] | None = None,
) -> list[dict[str, Any]]:
    """Every record of a predictions log, to resume from; a last line cut short by an interruption is
    ignored (its row is redone). Any other unreadable line, or one ``check`` (given the records that
    name their row, and their line numbers) refuses, stops the run with its file and line, and the file
    is left as it is: nothing the run had computed is thrown away. A path that is there but no file
    (a FIFO, a device) is refused (F002), never appended to."""
    if not path.exists():
        return []
    lines = read_json_lines(path, tail_may_be_cut=True)
    problems = list(lines.problems)
    named: list[tuple[int, dict[str, Any]]] = []
    for number, record in lines.records:
        if not has_example_id(record):
            problems.append(
                Diagnostic("EV115", "a prediction without an example_id", path=str(path), line=number)
            )
        else:
            named.append((number, record))
    if check is not None and named:
        problems += check([record for _, record in named], [number for number, _ in named])
    if problems:
        refused = {p.line for p in problems} & {number for number, _ in lines.records}
        kept = len(lines.records) - len(refused)
        hint = (
            f"fix or delete the line (the {kept} readable predictions are kept and reused when you run "
            "again), or add --overwrite to start over"
        )
        raise DiagnosticError([replace(p, hint=hint) for p in limited(problems)])
    return [record for _, record in lines.records]


def repair(path: Path) -> int:
    """Drop a trailing line cut short by an interruption, so appends start on a clean line.

    Returns how many complete records the file keeps; raises (changing nothing) on unreadable lines.
    """
    if not path.exists():
        return 0
    records = read_records(path)
    data = reading.read_bytes(path, reading.PREDICTIONS)
    if data and not data.endswith(b"\n"):
        write_atomic(path, data[: data.rfind(b"\n") + 1])
    return len(records)


def is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a run of ``eval`` or ``score``, recognized by the content of its
    ``run.json`` (a run's settings) or ``results.json`` (our results schema), not by file names."""
    settings = json_object(folder / RUN)
    if settings is not None and set(settings) >= RUN_KEYS:
        return True
    results = json_object(folder / RESULTS)
    return (
        results is not None
        and isinstance(results.get("schema_version"), int)
        and isinstance(results.get("metrics"), dict)
        and ("model" in results or "source" in results)
    )


def json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object a run's record holds; None for anything else (not there, not a bounded regular
    file, not JSON, a key twice)."""
    try:
        value = read_json(path, reading.RECORD)
    except (OSError, ValueError, DiagnosticError):
        return None
    return value if isinstance(value, dict) else None


def check_out_folder(
    folder: Path,
    is_ours: Callable[[Path], bool] = is_run_folder,
    what: str = "jbcompile run",
) -> list[Diagnostic]:
    """Problems with writing into ``folder``: it must be new, empty, or hold what ``is_ours`` recognizes
    (a run, a comparison), so that a user's own files (a ``report.md`` of theirs) are never overwritten."""
    if folder.exists() and not folder.is_dir():
        return [
            Diagnostic(
                "EV100",
                "--out names an existing file, not a folder",
                path=str(folder),
                hint="give a new folder name",
            )
        ]
    # what a killed run of ours left there (its next claim of the folder removes it) is not a user's file
    theirs = folder.is_dir() and any(not is_own_name(entry.name) for entry in folder.iterdir())
    if theirs and not is_ours(folder):
        return [
            Diagnostic(
                "EV101",
                f"--out is a folder that holds other files and no {what}; writing there could overwrite them",
                path=str(folder),
                hint=f"give a new or empty folder, or the folder of an earlier {what}",
            )
        ]
    return []


def held_run(folder: Path) -> tuple[str, str | None] | None:
    """Which command's run ``folder`` holds: ``("eval", None)``, ``("score", <the scored file as
    results.json names it>)``, or None (no run)."""
    if not is_run_folder(folder):
        return None
    settings = json_object(folder / RUN)
    results = json_object(folder / RESULTS) or {}
    if (settings is not None and set(settings) >= RUN_KEYS) or "model" in results:
        return ("eval", None)
    source = results.get("source")
    scored = source.get("predictions") if isinstance(source, dict) else None
    return ("score", scored if isinstance(scored, str) else None)


def _same_file(named: str | None, path: Path) -> bool:
    if named is None:
        return False
    return named == str(path) or Path(named).expanduser().resolve() == path.resolve()


def check_other_run(folder: Path, command: str, scored: Path | None = None) -> list[Diagnostic]:
    """A run folder holding another command's run, or the scores of another file, is not replaced
    without ``--overwrite`` (eval's own settings are compared by :mod:`.resume`, EV007 too)."""
    held = held_run(folder) if folder.is_dir() else None
    if held is None:
        return []
    if held[0] != command:
        problem = f"this output folder holds a run of `jbcompile {held[0]}`, not of `{command}`"
    elif command == "score" and scored is not None and not _same_file(held[1], scored):
        problem = f"this output folder holds the scores of another file ({held[1]})"
    else:
        return []
    return [
        Diagnostic(
            "EV007",
            problem,
            path=str(folder),
            hint="choose another --out, or add --overwrite to replace that run",
        )
    ]


def latest_by_id(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last record of each example (a redone row supersedes the earlier one)."""
    latest: dict[str, dict[str, Any]] = {}
    for record in records:
        latest[str(record["example_id"])] = dict(record)
    return latest


def records_text(records: Iterable[Mapping[str, Any]]) -> str:
    """A predictions file's text: one JSON line per record."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
