"""The runs a comparison reads: each folder's results.json (:class:`..results.Results`) and, when they
can be found, its predictions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...diagnostics import Diagnostic, DiagnosticError
from ...outputs import settle
from .. import predictions as files
from ..kind import Record
from ..results import Results, read_results, results_problem


@dataclass
class Run:
    folder: Path
    results: Results
    records: list[Record] | None  # the run's predictions, when they can be found


def read_run(folder: Path) -> Run:
    """A run folder's results.json and, when present, its predictions (ours: ``pred`` and ``gold``)."""
    folder = Path(folder)
    settle(folder)  # a run whose last write a kill cut short is finished first
    path = folder / files.RESULTS
    if not path.is_file():
        raise DiagnosticError(
            [Diagnostic("EV210", "no results.json here", path=str(folder), hint="pass run folders of eval")]
        )
    try:
        results = read_results(path)
    except ValueError as error:
        hint = "rerun the eval that wrote it, or leave this folder out"
        raise DiagnosticError(
            [Diagnostic("EV210", results_problem(error), path=str(path), hint=hint)]
        ) from None
    except OSError as error:
        message = f"cannot read results.json: {error.strerror or error}"
        hint = "check that the file can be read"
        raise DiagnosticError([Diagnostic("EV210", message, path=str(path), hint=hint)]) from None
    candidates = [folder / files.PREDICTIONS]
    source = results.source
    if source is not None and source.format == "jbcompile" and source.predictions:
        candidates.append(Path(source.predictions).expanduser())  # written with ~ for the home folder
    records = None
    for candidate in candidates:
        if not candidate.is_file():  # not there, or not a file (results.json may name anything)
            continue
        found = files.read_records(candidate)
        if found and all("pred" in r and "gold" in r for r in found):
            records = list(files.latest_by_id(found).values())
            break
    return Run(folder, results, records)
