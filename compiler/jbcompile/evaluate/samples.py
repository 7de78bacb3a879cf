"""``--samples K``: K sampled runs, each a whole run in ``sample-k/`` (resumable like any run), with
sampling seeds seed, seed + 1, …; results.json holds every metric's mean and sd over the K runs."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..outputs import Change, claim
from ..paths import home_as_tilde
from . import predictions as files
from .requests import EvalRequest
from .results import Metrics, Results


def check_sampling(request: EvalRequest) -> None:
    """K runs differ only when they sample: refuse ``--samples`` with greedy decoding (EV307)."""
    if request.backend_options.sampling.greedy:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV307",
                    "--samples needs sampling: greedy decoding gives the same replies every time",
                    hint="add --temperature (e.g. 0.6) and --top-p",
                )
            ]
        )


def sample_seeds(request: EvalRequest) -> list[int]:
    """The sampling seed of each run: seed, seed + 1, …"""
    base_seed = request.backend_options.sampling.seed or 0
    return [base_seed + k for k in range(request.samples)]


def sample_request(request: EvalRequest, out: Path, k: int, seed: int) -> EvalRequest:
    """The request of the k-th run (from 1): one sample, in ``out/sample-k``, with its own seed."""
    sampling = replace(request.backend_options.sampling, seed=seed)
    given = request.backend_options.model_copy(update={"sampling": sampling})
    return replace(request, samples=1, out=out / f"sample-{k}", backend_options=given)


def write_samples_results(
    out: Path,
    runs: Sequence[Results],
    folders: Sequence[str],
    seeds: Sequence[int | None],
    whole: bool = False,
) -> tuple[Results, tuple[str, ...]]:
    """results.json of the K runs in ``out`` (each metric's mean and sd), and the files of the folder.
    ``whole``: every other file of a run there (an earlier run's report.md, predictions, other runs'
    folders) goes in the same commit, as :func:`.run.write_outputs` replaces a run."""
    results = samples_results(runs, folders, seeds)
    content = files.dump_json(home_as_tilde(results.to_json()))
    if not whole:
        files.write_atomic(out / files.RESULTS, content)
    else:
        with claim(out) as place:  # inside the command's own claim of the folder
            kept = {files.RESULTS, *folders}
            changes: dict[Path, Change] = {out / files.RESULTS: content}
            changes.update({e: None for e in out.iterdir() if e.name not in kept and files.is_run_file(e)})
            place.commit(changes)
    return results, ("results.json", *(f"{folder}/" for folder in folders))


def samples_results(runs: Sequence[Results], folders: Sequence[str], seeds: Sequence[int | None]) -> Results:
    """The results.json of runs of one evaluation, each in its folder: ``eval --samples K``'s sampled runs,
    or the epochs of an inspect log that ``score`` reads (``seeds`` None: inspect keeps one seed). Every
    metric's mean and sd over them, with ``metrics`` the mean (a run's intervals stay in its folder)."""
    mean, sd = over_runs([run.metrics for run in runs])
    content = {k: v for k, v in runs[0].to_json().items() if k not in ("metrics", "metrics_ci")}
    content["samples"] = {
        "count": len(runs),
        "seeds": list(seeds),
        "runs": list(folders),
        "metrics_mean": mean,
        "metrics_sd": sd,
    }
    content["metrics"] = mean  # what a reader of "metrics" expects: the mean
    # every run's warnings, each named by its folder (the first run's alone would hide the others')
    content.pop("warnings", None)
    warned = [
        {**warning.model_dump(mode="json", exclude_unset=True), "message": f"{folder}: {warning.message}"}
        for run, folder in zip(runs, folders, strict=True)
        for warning in run.warnings or []
    ]
    if warned:
        content["warnings"] = warned
    if "backend" in content:  # score's runs have none
        content["backend"] = {
            **content["backend"],
            "usage": total_usage([r.to_json()["backend"] for r in runs]),
        }
    return Results.model_validate(content)


def spread(values: Sequence[Any]) -> tuple[Any, Any]:
    """Mean and sample sd of one metric over the runs; (None, None) where a run has it null (or NaN). A
    list metric (the shares of the options) keeps its shape: one mean and one sd per place."""
    if values and all(isinstance(v, list) for v in values) and len({len(v) for v in values}) == 1:
        places = [spread([v[k] for v in values]) for k in range(len(values[0]))]
        return [mean for mean, _ in places], [sd for _, sd in places]
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != len(values) or any(v != v for v in numbers):
        return None, None
    if all(isinstance(v, int) for v in numbers) and len(set(numbers)) == 1:
        return numbers[0], 0  # a count every run shares (the rows, n) stays a count: "n 20", not "20.000"
    return statistics.fmean(numbers), statistics.stdev(numbers) if len(numbers) > 1 else 0.0


def over_runs(metrics: Sequence[Metrics]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every metric's mean and sd over the runs, overall and by category (the first run's names)."""

    def scope(select: Callable[[Metrics], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        mean: dict[str, Any] = {}
        sd: dict[str, Any] = {}
        for name in select(metrics[0]):
            mean[name], sd[name] = spread([select(m).get(name) for m in metrics])
        return mean, sd

    def category(name: str) -> Callable[[Metrics], dict[str, Any]]:
        return lambda m: m.by_category.get(name, {})

    overall = scope(lambda m: m.overall)
    by_category = {c: scope(category(c)) for c in sorted(metrics[0].by_category)}
    return (
        {"overall": overall[0], "by_category": {c: v[0] for c, v in by_category.items()}},
        {"overall": overall[1], "by_category": {c: v[1] for c, v in by_category.items()}},
    )


def total_usage(backends: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The runs' usage added up; None when a backend does not count it."""
    usages = [backend.get("usage") for backend in backends]
    counted = [usage for usage in usages if usage is not None]
    if len(counted) < len(usages):
        return None
    return {key: sum(usage.get(key, 0) for usage in counted) for key in counted[0]}
