"""``run_eval`` and ``run_score``: the whole evaluation as two library calls (the CLI is a thin layer).

Data-parallel runs (``accelerate launch`` / ``torchrun``): every process builds the same prompts and the
same global batch plan; batch ``b`` runs on process ``b % world``; after each round the results are
gathered and only the main process writes. Batches do not depend on the number of processes, so one and
several processes write the same predictions. A run appends to ``predictions.jsonl`` after every round
and, started again with the same settings, skips the rows already there.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..diagnostics import Diagnostic, DiagnosticError
from . import predictions as files
from .backends.base import Backend, BackendOptions
from .kind import EvalKind, EvalOptions, Record, detect_kind, get_eval_kind
from .prompting import load_prompt_template, prompt_hash

SCHEMA_VERSION = 1
CONFIDENCE = 0.95
STOP_STRINGS = ("###",)
REQUESTS = "requests.jsonl"  # a remote backend's request cache, in the run folder
THINKING_TOKENS = 4096  # added to the default generation limit of a thinking model (--thinking)


@dataclass
class EvalRequest:
    model: str
    dataset: str
    config: str = "lite"
    revision: str | None = None
    model_revision: str | None = None
    out: Path | None = None
    options: EvalOptions = field(default_factory=EvalOptions)
    batch_size: int = 8
    max_new_tokens: int | None = None
    dtype: str = "auto"
    trust_remote_code: bool = False
    prefix_cache: bool = True
    bootstrap: int = 1000
    limit: int | None = None
    overwrite: bool = False
    backend: str = "transformers"
    backend_options: BackendOptions = field(default_factory=BackendOptions)
    thinking: bool = False  # a reasoning model: its answer follows its thinking
    samples: int = 1  # sampled runs; metrics as mean ± sd over them


@dataclass
class Progress:
    """Callbacks the CLI uses to draw a progress bar (main process only)."""

    start: Callable[[int], None] = lambda total: None
    advance: Callable[[int], None] = lambda count: None
    stop: Callable[[], None] = lambda: None


def default_out_dir(model: str, config: str, setting: str, task: str = "qa") -> Path:
    path = Path(model)
    name = path.name if path.exists() else model.replace("/", "__")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    suffix = "" if task == "qa" else f"-{task}"
    return Path("runs") / f"{name}-{config}-{setting}{suffix}"


def library_versions(names: Sequence[str]) -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {"python": sys.version.split()[0], "jbcompile": __version__}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


# ---- distributed ---------------------------------------------------------------------------------


@dataclass
class _Dist:
    rank: int = 0
    world: int = 1
    device: str | None = None
    state: Any = None

    @property
    def main(self) -> bool:
        return self.rank == 0

    def gather(self, items: list) -> list:
        if self.world == 1:
            return items
        from accelerate.utils import gather_object

        return list(gather_object(items))

    def barrier(self) -> None:
        if self.state is not None and self.world > 1:
            self.state.wait_for_everyone()

    def agree(self, ok: bool) -> bool:
        """True when every process says ok (so all stop together on an error)."""
        return all(self.gather([ok])) if self.world > 1 else ok


def _distributed() -> _Dist:
    launched = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if not launched:
        return _Dist()
    import torch
    from accelerate import PartialState

    cpu = not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
    state = PartialState(cpu=cpu)
    device = None if cpu else str(state.device)
    return _Dist(rank=state.process_index, world=state.num_processes, device=device or "cpu", state=state)


# ---- eval ----------------------------------------------------------------------------------------


def _fingerprint(request: EvalRequest, template_sha: str) -> dict[str, Any]:
    """What must match for a run folder to be resumed."""
    options = asdict(request.options)
    options["prompt_file"] = str(request.options.prompt_file) if request.options.prompt_file else None
    return {
        "model": request.model,
        "model_revision": request.model_revision,
        "dataset": request.dataset,
        "config": request.config,
        "revision": request.revision,
        "options": options,
        "template_sha256": template_sha,
        "max_new_tokens": request.max_new_tokens,
        "dtype": request.dtype,
        "limit": request.limit,
    }


def _max_new_tokens(request: EvalRequest, kind: EvalKind) -> int:
    if request.max_new_tokens is not None:
        return request.max_new_tokens
    return kind.max_new_tokens(request.options)


def run_eval(
    request: EvalRequest, progress: Progress | None = None, backend: Backend | None = None
) -> dict[str, Any] | None:
    """Evaluate; returns results.json's content on the main process (None on the others).

    ``backend``: one already loaded (several runs on one model in a notebook or a test); it is then
    left open. By default the request's backend is created here and closed at the end.
    """
    from .backends import BackendConfig, as_reply, create_backend, final_answer_test, plan_batches
    from .backends.remote import BatchFailed
    from .dataset import load_rows

    backend_problems = check_backend_request(request)
    if backend_problems:
        raise DiagnosticError(backend_problems)
    if request.samples > 1:
        return _run_samples(request, progress, backend)

    progress = progress or Progress()
    dist = _distributed()
    options = request.options
    loaded = load_rows(request.dataset, request.config, request.revision)
    kind = detect_kind(loaded.columns, request.dataset)
    problems = kind.check_options(options)
    if request.options.scoring not in ("logprob", "generate"):
        problems.append(
            Diagnostic("EV025", f"unknown --scoring {options.scoring!r}; use logprob or generate")
        )
    if problems:
        raise DiagnosticError(problems)
    template = load_prompt_template(kind.name, options.setting, options.prompt_file)
    prepared = kind.prepare(loaded.rows, options, template)
    items = prepared.items[: request.limit] if request.limit is not None else prepared.items
    if not items:
        raise DiagnosticError([Diagnostic("EV006", "no rows to evaluate", path=request.dataset)])

    out = request.out or default_out_dir(request.model, request.config, options.setting, options.task)
    run_path, pred_path = out / files.RUN, out / files.PREDICTIONS
    fingerprint = {**_fingerprint(request, template.source_sha256), **_backend_fingerprint(request)}
    conflict = False
    if run_path.is_file() and not request.overwrite:
        try:
            conflict = json.loads(run_path.read_text(encoding="utf-8")) != fingerprint
        except ValueError:
            conflict = True
    dist.barrier()
    if conflict:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV007",
                    "this output folder holds a run with other settings",
                    path=str(run_path),
                    hint="choose another --out, or add --overwrite to start over",
                )
            ]
        )

    owned = backend is None
    backend = backend or create_backend(
        request.backend,
        BackendConfig(
            model=request.model,
            revision=request.model_revision,
            dtype=request.dtype,
            trust_remote_code=request.trust_remote_code,
            batch_size=request.batch_size,
            prefix_cache=request.prefix_cache,
            device=dist.device if dist.world > 1 else None,
            options=request.backend_options,
            chat=options.chat,
            request_cache=out / REQUESTS,
        ),
    )
    try:
        texts = kind.prompt_texts(items, backend, options, prepared)
    except BatchFailed as failure:  # a first turn of a two-turn setting; its replies are in the cache
        if owned:
            backend.close()
        raise DiagnosticError([replace(failure.diagnostic, path=str(out / REQUESTS))]) from None
    hashes = [prompt_hash(text) for text in texts]

    if dist.main:
        out.mkdir(parents=True, exist_ok=True)
        if request.overwrite:
            for name in (files.PREDICTIONS, files.RESULTS, files.REPORT):
                (out / name).unlink(missing_ok=True)
        files.write_atomic(run_path, files.dump_json(fingerprint))
        files.repair(pred_path)
    dist.barrier()
    existing = files.latest_by_id(files.read_records(pred_path))
    done = {
        i for i, item in enumerate(items) if existing.get(item.example_id, {}).get("prompt_hash") == hashes[i]
    }

    encoded = backend.encode(texts, chat=options.chat)
    keys = [item.prefix_keys for item in items]
    batches = [
        [i for i in batch if i not in done]
        for batch in plan_batches([len(ids) for ids in encoded], keys, backend.batch_size)
    ]
    batches = [batch for batch in batches if batch]
    label_ids = (
        backend.label_token_ids(kind.option_labels, texts[0], chat=options.chat)
        if options.scoring == "logprob"
        else None
    )
    max_new = _max_new_tokens(request, kind)
    if request.thinking and request.max_new_tokens is None:
        max_new += THINKING_TOKENS
    answer_is_final = final_answer_test(kind.answer_is_final(options), request.thinking)
    stop_strings = () if request.thinking else STOP_STRINGS  # a model may write "###" while it thinks

    def run_batch(batch: list[int]) -> list[Record]:
        sequences = [encoded[i] for i in batch]
        batch_keys = [keys[i] for i in batch]
        try:
            if label_ids is not None:
                results = backend.score(sequences, batch_keys, label_ids)
            else:
                results = backend.generate(sequences, batch_keys, max_new, stop_strings, answer_is_final)
        except BatchFailed as failure:
            finished = sorted(failure.done)
            kept = to_records([batch[j] for j in finished], [failure.done[j] for j in finished])
            raise _Stopped(kept, failure.diagnostic) from None
        return to_records(batch, results)

    def to_records(batch: list[int], results: list) -> list[Record]:
        records = []
        if label_ids is not None:
            for i, logprobs in zip(batch, results, strict=True):
                record = dict(prepared.records[items[i].example_id])
                best = max(range(len(logprobs)), key=lambda j: (logprobs[j], -j))
                if not any(math.isfinite(v) for v in logprobs):
                    best = None  # no option among a server's top_logprobs: the model answered something else
                record.update(
                    prompt_hash=hashes[i],
                    raw_output=None,
                    pred=best,
                    option_logprobs=[round(v, 6) if math.isfinite(v) else None for v in logprobs],
                )
                records.append(record)
        else:
            for i, output in zip(batch, results, strict=True):
                reply = as_reply(output, request.thinking)
                record = dict(prepared.records[items[i].example_id])
                answer = kind.read_answer(str(reply), items[i], record, options)
                record.update(
                    prompt_hash=hashes[i], raw_output=str(reply), pred=answer.pred, option_logprobs=None
                )
                if reply.reasoning is not None:
                    record["reasoning"] = reply.reasoning
                record.update(answer.extra)
                records.append(record)
        return records

    pending = sum(len(batch) for batch in batches)
    if dist.main:
        progress.start(pending)
    rounds = math.ceil(len(batches) / dist.world)
    computed_here = 0
    try:
        for round_index in range(rounds):
            index = round_index * dist.world + dist.rank
            try:
                mine = run_batch(batches[index]) if index < len(batches) else []
            except _Stopped as stopped:  # keep every reply that came back, then stop
                if dist.main:
                    files.append_records(pred_path, stopped.records)
                if owned:
                    backend.close()
                raise DiagnosticError([replace(stopped.diagnostic, path=str(pred_path))]) from None
            computed_here += len(mine)
            gathered = dist.gather(mine)
            if dist.main:
                files.append_records(pred_path, gathered)
                progress.advance(len(gathered))
    finally:
        if dist.main:
            progress.stop()
    if dist.world > 1:
        print(
            f"process {dist.rank + 1}/{dist.world} evaluated {computed_here} rows",
            file=sys.stderr,
            flush=True,
        )
    if owned:
        backend.close()
    dist.barrier()
    if not dist.main:
        return None

    latest = files.latest_by_id(files.read_records(pred_path))
    records = [latest[item.example_id] for item in items if item.example_id in latest]
    files.write_records(pred_path, records)
    results = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind.name,
        "task": options.task,
        "model": {
            "name": request.model,
            "revision": request.model_revision,
            "dtype": backend.dtype,
            "trust_remote_code": request.trust_remote_code,
        },
        "dataset": {
            "path": request.dataset,
            "config": request.config,
            "revision": request.revision,
            "commit": loaded.commit,
            "manifest": loaded.manifest,
            "rows": len(loaded.rows),
            "evaluated": len(records),
        },
        "prompt": {
            "setting": options.setting,
            "template": template.name,
            "template_sha256": template.source_sha256,
            "prompt_file": str(options.prompt_file) if options.prompt_file else None,
            "chat": options.chat,
            "shots": options.shots,
            "shot_ids": prepared.shot_ids,
        },
        "scoring": {
            "method": options.scoring,
            "max_new_tokens": max_new if options.scoring == "generate" else None,
            "stop_strings": list(stop_strings) if options.scoring == "generate" else None,
            "stop_at_answer_line": options.scoring == "generate" and answer_is_final is not None,
        },
        "backend": backend.describe(),
        "thinking": request.thinking,
        "seeds": {"shots": options.seed, "bootstrap": options.seed},
        "versions": library_versions(["torch", "transformers", "accelerate", "datasets", "numpy"]),
    }
    results.update(_metrics_block(kind, records, request.bootstrap, options.seed))
    _write_outputs(out, results, kind)
    return results


class _Stopped(Exception):
    """A batch stopped by a request that failed for good, with the records of the replies it got."""

    def __init__(self, records: list[Record], diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.records = records
        self.diagnostic = diagnostic


def check_backend_request(request: EvalRequest) -> list[Diagnostic]:
    """Every backend option checked before anything is loaded or sent."""
    from .backends import BACKENDS

    opts = request.backend_options
    problems = []
    if request.backend not in BACKENDS:
        problems.append(
            Diagnostic("EV300", f"unknown --backend {request.backend!r}; use {', '.join(BACKENDS)}")
        )
    checks = [
        (opts.concurrency >= 1, "--concurrency must be 1 or more"),
        (opts.max_attempts >= 1, "--max-attempts must be 1 or more"),
        (opts.timeout > 0, "--timeout must be more than 0 seconds"),
        (opts.top_logprobs >= 1, "--top-logprobs must be 1 or more"),
        (opts.sampling.temperature >= 0, "--temperature must be 0 or more"),
        (0 < opts.sampling.top_p <= 1, "--top-p must be more than 0 and at most 1"),
        (request.samples >= 1, "--samples must be 1 or more"),
        (
            opts.thinking_budget is None or opts.thinking_budget >= 1024,
            "--thinking-budget must be 1024 or more",
        ),
        (
            min(opts.tensor_parallel_size, opts.pipeline_parallel_size, opts.data_parallel_size) >= 1,
            "--tensor-parallel-size, --pipeline-parallel-size and --data-parallel-size must be 1 or more",
        ),
        (
            opts.base_url is None or request.backend in ("openai", "anthropic"),
            "--base-url is for the openai and anthropic backends",
        ),
        (
            request.samples == 1 or request.options.scoring == "generate",
            "--samples needs --scoring generate (log-probabilities do not vary between runs)",
        ),
    ]
    problems += [Diagnostic("EV308", message) for ok, message in checks if not ok]
    return problems


def _backend_fingerprint(request: EvalRequest) -> dict[str, Any]:
    """What about the backend must match for a run folder to be resumed (not its speed settings)."""
    from .backends.remote import redact_url

    opts = request.backend_options
    return {
        "backend": request.backend,
        "base_url": redact_url(opts.base_url),
        "sampling": asdict(opts.sampling),
        "thinking": request.thinking,
        "thinking_budget": opts.thinking_budget,
    }


def _run_samples(
    request: EvalRequest, progress: Progress | None, backend: Backend | None
) -> dict[str, Any] | None:
    """``--samples K``: K runs with sampling seeds seed, seed+1, …, each a whole run in ``sample-k/``
    (resumable like any run), and results.json with every metric's mean and sd over the K runs."""
    import statistics

    out = request.out or default_out_dir(
        request.model, request.config, request.options.setting, request.options.task
    )
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
    base_seed = request.backend_options.sampling.seed or 0
    runs: list[dict[str, Any]] = []
    folders = []
    for k in range(request.samples):
        sampling = replace(request.backend_options.sampling, seed=base_seed + k)
        one = replace(
            request,
            samples=1,
            out=out / f"sample-{k + 1}",
            backend_options=replace(request.backend_options, sampling=sampling),
        )
        result = run_eval(one, progress, backend)
        if result is None:
            return None
        runs.append(result)
        folders.append(one.out.name)

    def spread(values: list[Any]) -> tuple[Any, Any]:
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(numbers) != len(values) or any(v != v for v in numbers):  # lists, None or NaN
            return None, None
        return statistics.fmean(numbers), statistics.stdev(numbers) if len(numbers) > 1 else 0.0

    def over_runs(select) -> tuple[dict[str, Any], dict[str, Any]]:
        mean: dict[str, Any] = {}
        sd: dict[str, Any] = {}
        for name in select(runs[0]):
            mean[name], sd[name] = spread([select(r).get(name) for r in runs])
        return mean, sd

    overall = over_runs(lambda r: r["metrics"]["overall"])
    categories = sorted(runs[0]["metrics"]["by_category"])
    by_category = {c: over_runs(lambda r, c=c: r["metrics"]["by_category"].get(c, {})) for c in categories}
    results = {key: value for key, value in runs[0].items() if key not in ("metrics", "metrics_ci")}
    results["samples"] = {
        "count": request.samples,
        "seeds": [base_seed + k for k in range(request.samples)],
        "runs": folders,
        "metrics_mean": {"overall": overall[0], "by_category": {c: v[0] for c, v in by_category.items()}},
        "metrics_sd": {"overall": overall[1], "by_category": {c: v[1] for c, v in by_category.items()}},
    }
    results["metrics"] = results["samples"]["metrics_mean"]  # what a reader of "metrics" expects: the mean
    results["backend"] = {**runs[0]["backend"], "usage": _total_usage([r["backend"] for r in runs])}
    files.write_atomic(out / files.RESULTS, files.dump_json(results))
    return results


def _total_usage(backends: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    usages = [b.get("usage") for b in backends]
    if any(u is None for u in usages):
        return None
    return {key: sum(u.get(key, 0) for u in usages) for key in usages[0]}


def _metrics_block(kind: EvalKind, records: Sequence[Record], resamples: int, seed: int) -> dict[str, Any]:
    return {
        "bootstrap": {"resamples": resamples, "unit": "template", "confidence": CONFIDENCE, "seed": seed},
        "metrics": kind.metrics(records),
        "metrics_ci": kind.intervals(records, resamples, seed),
    }


def _write_outputs(out: Path, results: dict[str, Any], kind: EvalKind) -> None:
    from .report import write_report

    write_report(out, results, kind)
    files.write_atomic(out / files.RESULTS, files.dump_json(results))


# ---- score ---------------------------------------------------------------------------------------


@dataclass
class ScoreRequest:
    predictions: Path
    dataset: str | None = None
    config: str = "lite"
    revision: str | None = None
    prediction_field: str | None = None
    task: str = "qa"
    kind: str = "bbq"
    out: Path | None = None
    bootstrap: int = 1000
    seed: int = 0


def read_jsonl_strict(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DiagnosticError([Diagnostic("EV060", "predictions file not found", path=str(path))])
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise DiagnosticError(
                    [
                        Diagnostic(
                            "EV061",
                            f"not a JSON line: {error.msg}",
                            path=str(path),
                            line=number,
                            col=error.colno,
                        )
                    ]
                ) from None
            if not isinstance(value, dict):
                raise DiagnosticError(
                    [Diagnostic("EV061", "a line is not a JSON object", path=str(path), line=number)]
                )
            rows.append(value)
    if not rows:
        raise DiagnosticError([Diagnostic("EV062", "the predictions file is empty", path=str(path))])
    return rows


def run_score(request: ScoreRequest) -> dict[str, Any]:
    """Metrics of an existing predictions file: ours, or BBQ-format JSONL with a prediction column."""
    raw = read_jsonl_strict(request.predictions)
    kind = get_eval_kind(request.kind)
    commit = None
    if request.dataset:
        from .dataset import load_rows

        loaded = load_rows(request.dataset, request.config, request.revision)
        commit = loaded.commit
        by_id = {str(row["example_id"]): row for row in loaded.rows}
        unknown = [str(r.get("example_id")) for r in raw if str(r.get("example_id")) not in by_id]
        if unknown:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV063",
                        f"{len(unknown)} prediction(s) name rows the dataset lacks, e.g. {unknown[0]!r}",
                        path=str(request.predictions),
                    )
                ]
            )
        raw = [{**by_id[str(r["example_id"])], **r} for r in raw]
    ours = request.prediction_field is None and all("pred" in r and "gold" in r for r in raw)
    ambiguous: list[dict[str, Any]] = []
    if ours:
        records = list(files.latest_by_id(raw).values())
        source_format = "jbcompile"
        task = str(records[0].get("task", request.task))
    else:
        if request.prediction_field is None:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV064",
                        "these are not jbcompile predictions; say which column holds the predicted answer",
                        path=str(request.predictions),
                        hint="add --prediction-field NAME (an option index or an option text)",
                    )
                ]
            )
        try:
            foreign = kind.foreign_records(raw, request.prediction_field, request.task)
        except DiagnosticError as error:
            raise DiagnosticError(
                [
                    Diagnostic(d.code, d.message, path=str(request.predictions), line=d.line)
                    for d in error.diagnostics
                ]
            ) from None
        records, ambiguous = foreign.records, foreign.ambiguous
        source_format = "bbq"
        task = request.task
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind.name,
        "task": task,
        "source": {
            "predictions": str(request.predictions),
            "format": source_format,
            "prediction_field": request.prediction_field,
            "dataset": request.dataset,
            "config": request.config if request.dataset else None,
            "revision": request.revision,
            "commit": commit,
        },
        "seeds": {"bootstrap": request.seed},
        "versions": library_versions(["numpy", "datasets"]),
        "ambiguous_rows": ambiguous,
    }
    results.update(_metrics_block(kind, records, request.bootstrap, request.seed))
    out = request.out or Path("runs") / f"score-{request.predictions.stem}"
    out.mkdir(parents=True, exist_ok=True)
    _write_outputs(out, results, kind)
    return results
