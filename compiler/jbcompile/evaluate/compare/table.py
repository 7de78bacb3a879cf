"""The comparison of runs as data (compare.json): one row per run in the protocol's column order (else
the kind's report columns), the paired tests, and the design's own section (``EvalKind.compare_section``)
under the design's name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...designs import DEFAULT_DESIGN
from ...diagnostics import Diagnostic, DiagnosticError
from ...emit.manifest import file_sha256
from ...outputs import location
from .. import predictions as files
from ..kind import EvalKind
from ..registered import get_eval_kind
from ..requests import check_common_options
from ..results import Results
from .identity import check_comparable, data_identity, data_name, protocol_identity, run_identity
from .runs import Run
from .stats import paired_tests


def labels(runs: Sequence[Run]) -> list[str]:
    """Each run's name in the tables: the model, then its setting, then its folder where needed."""

    def model(run: Run) -> str:
        return run.results.model_name or run.folder.name

    def setting(run: Run) -> str:
        return run.results.setting or ""

    names = [model(run) for run in runs]
    if len(set(names)) < len(names):
        names = [f"{model(run)} ({setting(run)})" if setting(run) else model(run) for run in runs]
    if len(set(names)) < len(names):
        names = [f"{name} [{run.folder}]" for name, run in zip(names, runs, strict=True)]
    return names


def columns_of(kind: EvalKind, run: Results) -> list[str]:
    """The metrics in the table: the protocol's headline, else the kind's report columns."""
    headline = run.headline
    return headline if headline is not None else list(kind.report_layout(run.task)[0])


def given_twice(runs: Sequence[Run]) -> list[Diagnostic]:
    """A run named twice — the same folder, a link to it, a copy of it elsewhere (the same content,
    :func:`.identity.run_identity`), or a `score` of its own predictions.jsonl that read every row as it
    did: a run against itself tests nothing and its p = 1 would read as a finding."""
    seen: dict[str, Run] = {}
    problems = []
    for run in runs:
        key = run_identity(run)
        first = seen.get(key) or next((other for other in runs if _rescored(run, other)), None)
        if first is None:
            seen[key] = run
            continue
        if _rescored(run, first):
            also = f" (a score of the predictions of {first.folder}, every row read as there)"
        elif str(location(first.folder)) != str(location(run.folder)):
            also = f" (a copy of {first.folder}: the same settings and predictions)"
        else:
            also = "" if str(first.folder) == str(run.folder) else f" (also as {first.folder})"
        problems.append(
            Diagnostic(
                "EV215",
                f"the run {run.folder} is given twice{also}",
                path=str(run.folder),
                hint="give each run once",
            )
        )
    return problems


def _rescored(run: Run, of: Run) -> bool:
    """Whether ``run`` is a `score` of ``of``'s predictions.jsonl (its results.json holds that file's
    digest), under no other model's name, that gives every row the answer it had there. A score that
    read the replies otherwise (another setting or protocol) gives other answers, and is compared."""
    source = run.results.source
    if (
        run is of
        or source is None
        or not source.predictions_sha256
        or run.records is None
        or of.records is None
    ):
        return False
    if source.model and source.model != of.results.model_name:
        return False  # scored as another model's answers (score --model): the user says they are
    try:
        if source.predictions_sha256 != file_sha256(of.folder / files.PREDICTIONS):
            return False
    except OSError:
        return False
    answers = {str(r.get("example_id")): r.get("pred") for r in of.records}
    return len(run.records) == len(answers) and all(
        answers.get(str(r.get("example_id")), _MISSING) == r.get("pred") for r in run.records
    )


_MISSING = object()


def no_runs() -> Diagnostic:
    """EV214: `compare` given no run (also the command line's, without one: ``cli.app.when_missing``)."""
    return Diagnostic(
        "EV214",
        "no runs to compare",
        hint="pass two or more run folders of `jbcompile eval` or `score`: `jbcompile compare runs/a runs/b`",
    )


def compare(runs: Sequence[Run], resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The comparison of runs; raises DiagnosticError when they cannot be compared."""
    if not runs:
        raise DiagnosticError([no_runs()])
    problems = check_common_options(resamples, seed) + given_twice(runs)
    if problems:
        raise DiagnosticError(problems)
    check_comparable(runs)
    first = runs[0].results
    kind = get_eval_kind(str(first.kind or DEFAULT_DESIGN))
    names = labels(runs)
    columns = columns_of(kind, first)
    table = []
    for name, run in zip(names, runs, strict=True):
        overall = run.results.metrics.overall
        table.append(
            {
                "label": name,
                "model": run.results.model_name,
                "setting": run.results.setting,
                "folder": str(run.folder),
                "identity": run_identity(run),  # its content's, not its path's: a copy has the same
                "rows": overall.get("n"),  # how many rows the run's figures are on
                # whose prompt wording its replies answered (protocols.PROMPT_WORDINGS)
                "prompt_wording": (
                    [run.results.protocol.prompt_wording, run.results.protocol.prompt_file]
                    if run.results.protocol
                    else None
                ),
                "metrics": {column: overall.get(column) for column in columns},
                # what the run's results.json warns of its figures (EV054 …): compare.md marks the run
                "warnings": [
                    {"code": warning.code, "message": warning.message}
                    for warning in run.results.warnings or []
                ],
            }
        )
    named_by, named = data_name([run.results for run in runs])
    result: dict[str, Any] = {
        "kind": kind.name,
        "protocol": first.protocol.model_dump(mode="json", exclude_unset=True) if first.protocol else None,
        "protocol_identity": protocol_identity(first),
        # config and the data's name (data_by says which): never a path, which names it on one machine only
        "data": [data_identity(first)[0], named],
        "data_by": named_by,
        "columns": columns,
        "runs": table,
        "bootstrap": {"resamples": resamples, "unit": kind.cluster_unit, "seed": seed},
        "tests": paired_tests(kind, runs, names, resamples, seed),
    }
    section = kind.compare_section(runs, seed)
    if section is not None:  # the design's own part of the comparison, under its name
        result[kind.name] = section
    return result
