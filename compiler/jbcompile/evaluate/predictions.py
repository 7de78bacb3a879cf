"""The run folder's files: ``predictions.jsonl`` (append-only while running, so a run can resume) and
atomically written JSON / text files."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import reading
from ..diagnostics import Diagnostic, DiagnosticError
from ..fsio import write_atomic
from ..jsonl import dumps, read_json
from ..outputs import is_own_name
from ..redaction import redact_data
from ..text import shown_name
from .jsonfile import limited, read_json_lines

PREDICTIONS = "predictions.jsonl"
RESULTS = "results.json"
RUN = "run.json"
REPORT = "report.md"
OVERWRITING = (
    ".predictions.overwrite.jsonl"  # an --overwrite run's log, until its results replace the old run
)
REQUESTS = "requests.jsonl"  # a remote backend's request cache, in the run folder
# one sample's run of an `eval --samples` run, or one epoch's of `score` of an inspect log of several
SAMPLE_FOLDER = re.compile(r"(sample|epoch)-[0-9]+")
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
    """A run folder's JSON file (run.json, results.json), without any secret (:func:`redact_data`)."""
    return redact_data(dumps(value, indent=2) + "\n")


def json_lines(records: Iterable[Mapping[str, Any]]) -> str:
    """Records as JSON Lines, without any secret (a server may echo one into a reply)."""
    return redact_data("".join(dumps(record) + "\n" for record in records))


def append_records(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Append one JSON line per record and flush to disk (the unit of resumption is one batch)."""
    lines = json_lines(records)
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
                Diagnostic(
                    "EV115",
                    "a prediction without an example_id",
                    path=str(path),
                    line=number,
                    hint="give each prediction the example_id of its dataset row",
                )
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
    ``run.json`` (a run's settings) or ``results.json`` (our results schema), not by file names — or
    what an eval that stopped before its first prediction left (:func:`is_stopped_eval`)."""
    settings = json_object(folder / RUN)
    if settings is not None and set(settings) >= RUN_KEYS:
        return True
    results = json_object(folder / RESULTS)
    return (
        results is not None
        and isinstance(results.get("schema_version"), int)
        and isinstance(results.get("metrics"), dict)
        and ("model" in results or "source" in results)
    ) or is_stopped_eval(folder)


def request_cache_line(key: str, response: Any) -> str:
    """One line of the request cache (:data:`REQUESTS`): what the server sent, as it sent it — a server
    may send -Infinity for a logprob (Python's reader takes it back; this file is read by the tool alone),
    where :func:`jsonl.dumps` would refuse it."""
    return json.dumps({"key": key, "response": response}, ensure_ascii=False)


# the first bytes of every line :func:`request_cache_line` writes (a sha256 key, json.dumps's separators)
_CACHE_LINE = re.compile(rb'\{"key": "[0-9a-f]{64}", "response": ')
_FIRST_LINE_BYTES = 1 << 20  # a prediction record's line is a few KiB (a reasoning model's: tens)


def is_stopped_eval(folder: Path) -> bool:
    """Whether ``folder`` holds nothing but what an eval that stopped before its first prediction was
    logged leaves there: a remote backend's request cache (a stop in a two-turn setting's first turns,
    an EV201 refusal, Ctrl-C) and an ``--overwrite`` run's log (run.json waits for the results then), each
    recognized by its first line. A rerun of the same command resumes it: the cache is keyed by the exact
    request, so a rerun with other settings only misses it. A folder holding anything else is not one."""
    try:
        names = [entry.name for entry in folder.iterdir() if not is_own_name(entry.name)]
    except OSError:
        return False
    if not names or not set(names) <= {REQUESTS, OVERWRITING}:
        return False
    return all(_first_line_is_ours(folder / name, name == REQUESTS) for name in names)


def _first_line_is_ours(path: Path, cache: bool) -> bool:
    """The request cache's first line starts as RequestCache.put writes it; the --overwrite log's is a
    prediction record (a row's example_id and prompt hash). Read bounded, never past a regular file."""
    try:
        with closing(reading.iter_blocks(path, reading.PREDICTIONS, block=_FIRST_LINE_BYTES)) as blocks:
            head = next(blocks, b"")
    except (OSError, DiagnosticError):
        return False
    if cache:
        return bool(_CACHE_LINE.match(head))
    line, newline, _ = head.partition(b"\n")
    try:
        record = json.loads(line) if newline else None
    except ValueError:
        return False
    return isinstance(record, dict) and has_example_id(record) and "prompt_hash" in record


def is_run_file(entry: Path) -> bool:
    """Whether an entry of a run folder is one of a run's own files (its settings, request cache,
    predictions, results, report, charts, or a sample's run folder), which replacing the run replaces;
    anything else there is the user's and stays."""
    if entry.name in (RUN, REQUESTS, PREDICTIONS, RESULTS, REPORT, "charts"):
        return True
    return bool(SAMPLE_FOLDER.fullmatch(entry.name)) and entry.is_dir() and is_run_folder(entry)


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
    if (settings is not None and set(settings) >= RUN_KEYS) or "model" in results or is_stopped_eval(folder):
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
    return "".join(dumps(r) + "\n" for r in records)


def write_records(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    write_atomic(path, json_lines(records))


# ---- what a stopped run left on disk ---------------------------------------------------------------------

FileState = tuple[int, int, int]  # size, mtime_ns, inode
# What each file of a run folder holds, to count it in a message.
_COUNTED = {
    PREDICTIONS: ("prediction", "predictions"),
    OVERWRITING: ("prediction", "predictions"),
    "requests.jsonl": ("server reply", "server replies"),
}
_MAX_FILES = 10_000  # a run folder holds a few dozen; past this the account stops listing


def folder_state(folder: Path) -> dict[str, FileState]:
    """Every file under ``folder`` (a run, its samples, their charts) by its path inside it."""
    state: dict[str, FileState] = {}
    if not folder.is_dir():
        return state
    for path in folder.rglob("*"):
        if len(state) >= _MAX_FILES:
            break
        try:
            if path.is_file() and not path.is_symlink():
                info = path.stat()
                state[path.relative_to(folder).as_posix()] = (info.st_size, info.st_mtime_ns, info.st_ino)
        except OSError:
            continue
    return state


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return 0


def counted_lines(folder: Path, state: Mapping[str, FileState]) -> dict[str, int]:
    """The lines (predictions, replies) of each counted file of a folder's ``state``."""
    return {name: _lines(folder / name) for name in state if name.rpartition("/")[2] in _COUNTED}


def kept_on_disk(
    folder: Path,
    before: Mapping[str, FileState],
    counts: Mapping[str, int],
    existed: bool,
    command: str,
    go_on: str | None = None,
) -> str:
    """What a stopped ``command`` left in ``folder`` compared with ``before`` (and the ``counts`` of
    lines its files held then), in words: every file it wrote or changed, with how many predictions or
    replies it holds and how many are new, what it removed, and how to go on (``go_on`` where the stop
    knows better than "run the same command again"). It is read from the disk, so it is true whatever
    stopped the run."""
    after = folder_state(folder)
    changed = sorted(name for name in after if before.get(name) != after[name])
    removed = sorted(name for name in before if name not in after)
    if not changed and not removed:
        if folder.is_dir() and not existed:
            return f"nothing was written (the empty folder {shown_name(str(folder))} was left)"
        return (
            f"nothing was written; {shown_name(str(folder))} is as it was"
            if existed
            else "nothing was written"
        )
    parts: list[str] = []
    charts: dict[str, int] = {}
    for name in changed:
        head, charts_folder, rest = name.rpartition("charts/")
        if charts_folder and (not head or head.endswith("/")) and "/" not in rest:
            charts[head + "charts/"] = charts.get(head + "charts/", 0) + 1
            continue
        what = _COUNTED.get(name.rpartition("/")[2])
        count = ""
        if what:
            lines = _lines(folder / name)
            new = lines - counts.get(name, 0) if name in before else lines
            count = f" ({lines} {what[lines != 1]}, {max(new, 0)} new)"
        parts.append(f"{shown_name(str(folder / name))}{count}")
    parts += [f"{shown_name(str(folder / name))} ({count} files)" for name, count in charts.items()]
    text = "kept " + ", ".join(parts) if parts else "kept nothing new"
    if removed:
        text += "; removed " + ", ".join(shown_name(str(folder / name)) for name in removed)
    return f"{text}; {go_on or _how_to_go_on(command, after)}"


def _how_to_go_on(command: str, after: Mapping[str, FileState]) -> str:
    if command == "score":
        return "run the same command again to write the results whole"
    names = {name.rpartition("/")[2] for name in after}
    reuse = []
    if PREDICTIONS in names:
        reuse.append("the predictions in predictions.jsonl are not computed again")
    if "requests.jsonl" in names:
        reuse.append("the replies in requests.jsonl are not sent (or paid for) again")
    if OVERWRITING in names:
        reuse.append(f"an --overwrite run starts its predictions over ({OVERWRITING} is discarded)")
    return "run the same command again to resume" + (": " + "; ".join(reuse) if reuse else "")


@contextmanager
def telling_what_is_kept(folder: Path, command: str) -> Iterator[None]:
    """Whatever stops ``command`` inside the block carries ``kept`` — what is on disk in ``folder`` now,
    and how to go on (:func:`kept_on_disk`) — for the message that ends the run.

    Enter it only once ``folder`` is held (:func:`jbcompile.outputs.claim`): the account is what changed
    since entering, so a look taken while another command still held the folder and wrote into it would
    count that command's files as this one's."""
    existed = folder.is_dir()
    before = folder_state(folder)
    counts = counted_lines(folder, before)
    try:
        yield
    except BaseException as stop:
        try:
            account = kept_on_disk(folder, before, counts, existed, command, getattr(stop, "go_on", None))
        except Exception:  # an unreadable folder: say so, never "nothing was written"
            where = shown_name(str(folder))
            account = f"what {where} holds now could not be read: look into it before running again"
        with suppress(Exception):
            stop.kept = account  # type: ignore[attr-defined]
        raise
