"""Like with like: what a run was computed on (its data) and under which protocol, and the refusal of
runs that differ in either (EV211–EV213)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ..results import Results
from .runs import Run


def data_identity(run: Results | Mapping[str, Any], by_content: bool = True) -> list[Any]:
    """What a run was computed on: its config and the sources hash of its build (else the Hub commit,
    else a release file's content, else its path). ``by_content=False`` leaves the file's content out,
    to compare with runs written before results.json held it."""
    run = Results.of(run)
    dataset = run.dataset if run.dataset is not None and run.dataset.model_fields_set else None
    if dataset is None and run.source is not None:
        return [run.source.config, run.source.commit or run.source.dataset]
    if dataset is None:
        return [None, None]
    manifest = dataset.manifest or {}
    content = dataset.sha256 if by_content else None  # the same file in two places is the same data
    source = manifest.get("sources_hash") or dataset.commit or content or dataset.path
    return [dataset.config, source]


def same_data(runs: Sequence[Results | Mapping[str, Any]]) -> bool:
    """Whether the runs were computed on the same data; runs without a release file's content (written
    before results.json held it) are compared by the file's path, as they were then."""
    read = [Results.of(run) for run in runs]
    hashed = [bool(run.dataset and run.dataset.sha256) for run in read]
    by_content = all(hashed) or not any(hashed)
    return len({json.dumps(data_identity(run, by_content)) for run in read}) <= 1


def protocol_identity(run: Results) -> dict[str, Any]:
    """What must agree for two runs' numbers to be comparable, besides the data."""
    return {
        "protocol": run.protocol.name if run.protocol else None,
        "scoring": run.scoring.method if run.scoring else None,
        "shots": run.prompt.shots if run.prompt else None,
        "task": run.task,
    }


def check_comparable(runs: Sequence[Run]) -> None:
    problems = []
    kinds = {run.results.kind for run in runs}
    if len(kinds) > 1:
        problems.append(
            Diagnostic(
                "EV211",
                f"the runs are of different kinds: {', '.join(sorted(map(str, kinds)))}",
                hint="compare runs of one benchmark design at a time",
            )
        )
    if not same_data([run.results for run in runs]):
        problems.append(
            Diagnostic(
                "EV212",
                "the runs are on different data (another config, build or Hub commit): "
                + "; ".join(f"{run.folder}: {json.dumps(data_identity(run.results))}" for run in runs),
                hint="rerun on one dataset version; results.json `dataset` tells each run's",
            )
        )
    protocols = [json.dumps(protocol_identity(run.results), sort_keys=True) for run in runs]
    if len(set(protocols)) > 1:  # each run named, in the order given
        problems.append(
            Diagnostic(
                "EV213",
                "the runs follow different protocols (protocol, scoring, shots or task): "
                + "; ".join(
                    f"{run.folder}: {protocol}" for run, protocol in zip(runs, protocols, strict=True)
                ),
                hint="rerun them with one --protocol (or the same --scoring and --shots)",
            )
        )
    if problems:
        raise DiagnosticError(problems)
