"""``--samples K``: K sampled runs, each a whole run in ``sample-k/`` (resumable like any run), with
sampling seeds seed, seed + 1, …; results.json holds every metric's mean and sd over the K runs."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..paths import home_as_tilde
from . import predictions as files
from .backends.base import Backend
from .requests import EvalRequest, Progress
from .results import Metrics, Results
from .run import RunResult, resolve, run_eval


def run_samples(request: EvalRequest, progress: Progress | None, backend: Backend | None) -> RunResult | None:
    """The K runs, then their mean and sd (the request's own ``samples`` > 1)."""
    sampling = request.backend_options.sampling
    if sampling.greedy:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV307",
                    "--samples needs sampling: greedy decoding gives the same replies every time",
                    hint="add --temperature (e.g. 0.6) and --top-p",
                )
            ]
        )
    out = request.out or resolve(request)[0].out  # the default folder depends on the dataset's kind
    assert out is not None
    with files.telling_what_is_kept(out, "eval"):  # a stop in any sample says what every folder holds
        return _run_samples(request, out, progress, backend)


def _run_samples(
    request: EvalRequest, out: Path, progress: Progress | None, backend: Backend | None
) -> RunResult | None:
    sampling = request.backend_options.sampling
    base_seed = sampling.seed or 0
    runs: list[Results] = []
    folders = []
    for k in range(request.samples):
        given = request.backend_options.model_copy(update={"sampling": replace(sampling, seed=base_seed + k)})
        one = replace(request, samples=1, out=out / f"sample-{k + 1}", backend_options=given)
        result = run_eval(one, progress, backend)
        if result is None:
            return None
        runs.append(result.results)
        folders.append(result.out.name)
    mean, sd = over_runs([run.metrics for run in runs])
    content = {k: v for k, v in runs[0].to_json().items() if k not in ("metrics", "metrics_ci")}
    content["samples"] = {
        "count": request.samples,
        "seeds": [base_seed + k for k in range(request.samples)],
        "runs": folders,
        "metrics_mean": mean,
        "metrics_sd": sd,
    }
    content["metrics"] = mean  # what a reader of "metrics" expects: the mean
    content["backend"] = {**content["backend"], "usage": total_usage([r.to_json()["backend"] for r in runs])}
    results = Results.model_validate(content)  # intervals are each sample's, in its folder
    files.write_atomic(out / files.RESULTS, files.dump_json(home_as_tilde(results.to_json())))
    return RunResult(results, out, ("results.json", *(f"sample-{k}/" for k in range(1, request.samples + 1))))


def spread(values: Sequence[Any]) -> tuple[Any, Any]:
    """Mean and sample sd of one metric over the runs; (None, None) for lists, nulls or NaN."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != len(values) or any(v != v for v in numbers):
        return None, None
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
