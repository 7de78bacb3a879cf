"""Like with like: what a run was computed on (its data) and under which protocol, and the refusal of
runs that differ in either (EV211–EV213)."""

from __future__ import annotations

import hashlib
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


DATA_KEYS = ("sources_hash", "commit", "sha256", "path")  # what names a run's data, most telling first


def data_keys(run: Results | Mapping[str, Any]) -> dict[str, Any]:
    """Every name a run's data has: the build's sources hash, the Hub commit, the content read (a release
    file's sha256, or a build's list of data files' sha256) and the path as given. An ``eval`` run reads
    them from ``dataset``, a ``score`` run from ``source`` (which holds no sources hash)."""
    run = Results.of(run)
    dataset = run.dataset if run.dataset is not None and run.dataset.model_fields_set else None
    if dataset is not None:
        names = [(dataset.manifest or {}).get("sources_hash"), dataset.commit, dataset.sha256, dataset.path]
    elif run.source is not None:
        names = [None, run.source.commit, run.source.dataset_sha256, run.source.dataset]
    else:
        names = [None] * len(DATA_KEYS)
    return dict(zip(DATA_KEYS, names, strict=True))


# What the report names the data by: the names of :data:`DATA_KEYS` that mean the same on any machine (a
# path names a folder of one machine, or of none: a build in a temporary folder). compare.json's
# ``data_by`` says which one ``data`` holds.
NAMED_BY = {"sources_hash": "sources hash", "commit": "Hub commit", "sha256": "content sha256"}


def data_name(runs: Sequence[Results | Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The most telling name any of the runs gives their data, never a path: the build's sources hash (an
    ``eval`` run's manifest), else the Hub ``REPO@COMMIT``, else the content read (a release file's
    sha256, a ``score`` run's ``source.dataset_sha256``); with the key it is of (:data:`NAMED_BY`), or
    ``(None, None)``. The runs are on the same data (:func:`same_data`), so one run's name is theirs: a
    ``score`` run beside an ``eval`` run of its build is named by the build's sources hash."""
    read = [data_keys(run) for run in runs]
    for key in NAMED_BY:
        for names in read:
            if names[key]:
                value = str(names[key])
                return key, f"{names['path']}@{value}" if key == "commit" and names["path"] else value
    return None, None


def same_data(runs: Sequence[Results | Mapping[str, Any]]) -> bool:
    """Whether the runs were computed on the same data: one config, and the same value of the most telling
    name that every run has (:data:`DATA_KEYS`). So an ``eval`` run and a ``score`` run joined to the same
    build agree by content, two ``score`` runs by content whatever path each gave (``build`` and
    ``./build``; one path holding two builds is two data), and runs written before results.json held
    the content by the file's path, as they were then."""
    read = [Results.of(run) for run in runs]
    if len({json.dumps(data_identity(run)[0]) for run in read}) > 1:
        return False
    keys = [data_keys(run) for run in read]
    for key in DATA_KEYS:
        if all(entry[key] for entry in keys):
            return len({entry[key] for entry in keys}) <= 1
    return len({json.dumps(data_identity(run, False)) for run in read}) <= 1


def protocol_identity(run: Results) -> dict[str, Any]:
    """What must agree for two runs' numbers to be comparable, besides the data. A ``score`` run records
    no scoring and no shots; under a protocol it has what the protocol fixes (``score --protocol``
    refuses answers chosen by log-probability, and a protocol with one shot count fixes it), so that it
    compares with an ``eval`` run under the same protocol; shots a protocol leaves open (3 or 0) stay
    unknown."""
    protocol = run.protocol
    shots = run.prompt.shots if run.prompt else None
    scoring = run.scoring.method if run.scoring else None
    if not run.is_eval and protocol is not None:  # a score run under a protocol
        fixed = protocol.shots or []
        shots = fixed[0] if shots is None and len(fixed) == 1 else shots
        scoring = scoring or protocol.scoring
    return {
        "protocol": protocol.name if protocol else None,
        "scoring": scoring,
        "shots": shots,
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
                hint="rerun them with one --protocol (or the same --scoring and --shots)"
                + (
                    "; a `score` run does not know the shots and scoring its predictions were made with: "
                    "compare it with `score` runs of the same protocol"
                    if any(protocol_identity(run.results)["shots"] is None for run in runs)
                    else ""
                ),
            )
        )
    if problems:
        raise DiagnosticError(problems)


def run_identity(run: Run) -> str:
    """Which run a folder holds, whatever its path: the sha256 of its results.json (what was run, on what,
    how, and its figures) and of its predictions (by example_id). A copy of a run folder is the same run;
    two runs with the same settings and other predictions are two. Only ``backend.usage`` is left out:
    it counts what one invocation asked of the backend (a resume asks less), not what the run is."""
    content = run.results.to_json()
    if isinstance(content.get("backend"), dict):
        content["backend"] = {k: v for k, v in content["backend"].items() if k != "usage"}
    records = (
        None
        if run.records is None
        else sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in run.records)
    )
    text = json.dumps([content, records], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
