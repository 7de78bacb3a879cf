"""The run folder's files: ``predictions.jsonl`` (append-only while running, so a run can resume) and
atomically written JSON / text files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..fsio import write_atomic

PREDICTIONS = "predictions.jsonl"
RESULTS = "results.json"
RUN = "run.json"
REPORT = "report.md"


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


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete line; a last line cut short by an interruption is ignored (it will be redone)."""
    if not path.is_file():
        return []
    records = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                break
            line = line.strip()
            if line:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    break
    return records


def repair(path: Path) -> int:
    """Drop a trailing line cut short by an interruption, so appends start on a clean line.

    Returns how many complete records the file keeps.
    """
    if not path.is_file():
        return 0
    records = read_records(path)
    text = path.read_text(encoding="utf-8")
    if text.count("\n") != len(records) or (text and not text.endswith("\n")):
        write_records(path, records)
    return len(records)


def latest_by_id(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last record of each example (a redone row supersedes the earlier one)."""
    latest: dict[str, dict[str, Any]] = {}
    for record in records:
        latest[str(record["example_id"])] = dict(record)
    return latest


def write_records(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
