"""The runs a comparison reads: each folder's results.json (:class:`..results.Results`) and, when they
can be found, its predictions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...diagnostics import Diagnostic, DiagnosticError
from ...outputs import refuse, settle
from ...reading import PREDICTIONS, RECORD, is_present
from .. import predictions as files
from ..kind import Record
from ..results import Results, read_results, results_problem

ACCURACY_TOLERANCE = 1e-6  # results.json's figures are written unrounded: only float noise is let pass


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
    if not is_present(path, RECORD):  # a FIFO or a folder there is F002, never "no results.json"
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
        if not is_present(candidate, PREDICTIONS):  # not there; a FIFO or a folder there is F002, never
            continue  # "without predictions" (its paired tests would be skipped in silence)
        found = files.read_records(candidate)
        if found and all("pred" in r and "gold" in r for r in found):
            records = list(files.latest_by_id(found).values())
            break
    if records is not None:
        refuse(disagreements(folder, results, records))
    return Run(folder, results, records)


def disagreements(folder: Path, results: Results, records: list[Record]) -> list[Diagnostic]:
    """Whether a run's predictions are the ones its results.json was computed from: the row count and the
    accuracy McNemar's test recomputes from them (``EvalKind.paired_accuracy``) must be the run's. A run
    whose files disagree (one of them edited, or copied from another run) would be tabled with one set of
    figures and tested with the other."""
    from ...designs import DEFAULT_DESIGN
    from ..registered import get_eval_kind

    kind = get_eval_kind(str(results.kind or DEFAULT_DESIGN))
    overall = results.metrics.overall
    found = []
    rows = overall.get("n")
    if isinstance(rows, int | float) and rows != len(records):
        found.append(f"results.json counts {rows:g} rows, predictions.jsonl holds {len(records)}")
    counted = [record for record in records if kind.accuracy_row(record)]
    stated = overall.get(kind.paired_accuracy)
    if counted and isinstance(stated, int | float):
        right = sum(1 for r in counted if r["pred"] is not None and r["pred"] == r["gold"])
        if abs(right / len(counted) - stated) > ACCURACY_TOLERANCE:
            found.append(
                f"results.json says {kind.paired_accuracy} {stated:.4f}, its predictions give "
                f"{right / len(counted):.4f}"
            )
    if not found:
        return []
    return [
        Diagnostic(
            "EV216",
            f"the run's results.json and predictions disagree: {'; '.join(found)}",
            path=str(folder),
            hint="rerun `jbcompile score` on its predictions (or the eval that wrote it), or leave this run "
            "out",
        )
    ]
