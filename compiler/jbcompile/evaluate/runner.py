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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..designs import DEFAULT_DESIGN
from ..diagnostics import Diagnostic, DiagnosticError
from ..paths import home_as_tilde
from . import predictions as files
from .backends.base import Backend, BackendOptions
from .formats import RAW_REPLY, adapt, duplicate_ids
from .jsonfile import limited, read_json_records
from .kind import EvalKind, EvalOptions, Record, all_eval_kinds, detect_kind, get_eval_kind, option_index
from .prompting import PROMPTS_DIR, bundled_prompt_name, load_prompt_template, prompt_hash
from .protocols import check_kind, get_protocol

SCHEMA_VERSION = 2  # 2: metric conventions named apart (docs/eval.md, "Schema versions")
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


def default_out_dir(model: str, config: str, setting: str, task: str = "qa", chat: bool = False) -> Path:
    """``runs/<model>-<config>-<setting>[-<task>][-chat]``: runs that differ in these never share a folder."""
    path = Path(model)
    name = path.name if path.exists() else model.replace("/", "__")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    suffix = ("" if task == "qa" else f"-{task}") + ("-chat" if chat else "")
    return Path("runs") / f"{name}-{config}-{setting}{suffix}"


# ---- option checks (every eval / score option, before anything is loaded) ------------------------

MAX_BOOTSTRAP = 100_000  # resamples × templates numbers are held in memory at once


def _at_least(name: str, value: int | None, low: int) -> list[Diagnostic]:
    if value is None or value >= low:
        return []
    return [Diagnostic("EV103", f"{name} must be {low} or more, got {value}")]


def check_common_options(bootstrap: int, seed: int) -> list[Diagnostic]:
    problems = _at_least("--bootstrap", bootstrap, 0) + _at_least("--seed", seed, 0)
    if bootstrap > MAX_BOOTSTRAP:
        problems.append(
            Diagnostic("EV103", f"--bootstrap must be at most {MAX_BOOTSTRAP:,}, got {bootstrap:,}")
        )
    return problems


def looks_like_path(name: str) -> bool:
    """A model or dataset named as a path (``./m``, ``/abs/m``, ``~/m``, ``a/b/c``), not a Hub id
    (``name`` or ``org/name``)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name or Path(name).exists()


def check_eval_request(request: EvalRequest) -> list[Diagnostic]:
    """Every option of ``eval`` that can be checked before loading the data or the model."""
    problems = check_common_options(request.bootstrap, request.options.seed)
    problems += _at_least("--limit", request.limit, 1)
    problems += _at_least("--batch-size", request.batch_size, 1)
    problems += _at_least("--max-new-tokens", request.max_new_tokens, 1)
    model = Path(request.model).expanduser()
    if looks_like_path(request.model) and not model.is_dir():
        problems.append(
            Diagnostic(
                "EV108",
                "model folder not found"
                if not model.exists()
                else "--model names a file, not a model folder",
                path=request.model,
                hint="give a folder written by save_pretrained, or a Hub id such as org/name",
            )
        )
    if looks_like_path(request.dataset) and not Path(request.dataset).expanduser().exists():
        problems.append(  # a typo in a path, not a Hub id the machine cannot reach
            Diagnostic(
                "EV003",
                "dataset folder or file not found",
                path=request.dataset,
                hint="give a build folder, a release's data file, or a Hub id such as org/name",
            )
        )
    for option, target, revision in (
        ("--revision", request.dataset, request.revision),
        ("--model-revision", request.model, request.model_revision),
    ):
        if revision is not None and Path(target).expanduser().exists():
            problems.append(
                Diagnostic(
                    "EV104",
                    f"{option} picks a version on the Hub, but {target!r} is a local path",
                    hint=f"drop {option}, or check out that version into the folder",
                )
            )
    if request.out is not None:  # the default folder is checked once the dataset has named the kind
        problems += files.check_out_folder(request.out)
    return problems


def with_defaults(request: EvalRequest, kind: EvalKind, loaded: Any) -> EvalRequest:
    """The request with what depends on the dataset filled in: the kind's first setting when none was
    given, the release's own prompt for release rows that carry it, and the default run folder (which
    names the chat mode, so that a --chat run never lands in the folder of a plain one)."""
    options = request.options
    if not options.setting:
        options = replace(options, setting=kind.settings[0])
    verbatim = getattr(loaded, "verbatim_prompt", False) and options.setting in kind.settings
    if verbatim and options.prompt_file is None:  # (an unknown setting is left for check_options)
        options = replace(options, prompt_file=VERBATIM_PROMPT)
    config = request.config if getattr(loaded, "config", request.config) else Path(request.dataset).stem
    out = request.out or default_out_dir(request.model, config, options.setting, options.task, options.chat)
    return replace(request, options=options, out=out)


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


VERBATIM_PROMPT = PROMPTS_DIR / "release" / "verbatim.j2"


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
    if options.get("protocol") is None:
        options.pop("protocol", None)  # runs started before protocols existed still resume
    options["prompt_file"] = _prompt_name(request.options.prompt_file)
    return {
        "model": request.model,
        "model_revision": request.model_revision,
        "model_files": model_files(request.model),
        "dataset": request.dataset,
        "config": request.config,
        "revision": request.revision,
        "options": options,
        "template_sha256": template_sha,
        "max_new_tokens": request.max_new_tokens,
        "dtype": request.dtype,
        "limit": request.limit,
    }


_SAMPLES_PER_FILE = 16  # evenly spaced pieces of each model file, 64 KiB each
_SAMPLE_BYTES = 64 * 1024


def model_files(model: str) -> dict[str, str] | None:
    """A local model folder's files, each by its size and a digest of 16 pieces of it: weights saved
    again into the same folder (new training, another seed) stop a resume, which would otherwise give
    the old predictions; reading about 1 MiB a file keeps this cheap for a 70B checkpoint. None for a
    Hub id (its revision is the ``model_revision`` setting)."""
    import hashlib

    folder = Path(model).expanduser()
    if not looks_like_path(model) or not folder.is_dir():
        return None
    found = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        size = path.stat().st_size
        digest = hashlib.sha256(str(size).encode())
        with path.open("rb") as handle:
            for piece in range(_SAMPLES_PER_FILE):
                handle.seek(max(0, size - _SAMPLE_BYTES) * piece // max(1, _SAMPLES_PER_FILE - 1))
                digest.update(handle.read(_SAMPLE_BYTES))
        found[path.name] = digest.hexdigest()[:16]
    return found


def _prompt_name(prompt_file: Path | None) -> str | None:
    """How run.json names a prompt file: a bundled one by its place under ``prompts/``
    (``release/verbatim.j2``), a user's by its file name — its content is ``template_sha256`` — and
    never by a path, so that reinstalling or moving the package (or the file) does not stop a resume."""
    if prompt_file is None:
        return None
    return bundled_prompt_name(Path(prompt_file)) or Path(prompt_file).resolve().name


def _resume_key(settings: dict[str, Any]) -> dict[str, Any]:
    """run.json's settings as a resume compares them: the prompt file by its file name alone (0.2.0
    wrote a path there, for a release's own prompt the package's install path); its content is compared
    as ``template_sha256``."""
    options = settings.get("options")
    if isinstance(options, dict) and isinstance(options.get("prompt_file"), str):
        name = re.split(r"[\\/]", options["prompt_file"])[-1]
        settings = {**settings, "options": {**options, "prompt_file": name}}
    return settings


def _settings_differ(stored: Any, current: dict[str, Any]) -> list[str]:
    """The settings of run.json that this request does not share, as ``name: there → here``."""
    if not isinstance(stored, dict):
        return ["run.json does not hold a run's settings"]
    there, here = _resume_key(stored), _resume_key(current)
    if "model_files" not in there:  # a run started before 0.3.1 did not record them
        here = {key: value for key, value in here.items() if key != "model_files"}
    pairs = [(key, there.get(key), here.get(key)) for key in dict.fromkeys([*here, *there])]
    if isinstance(there.get("options"), dict) and isinstance(here.get("options"), dict):
        pairs = [pair for pair in pairs if pair[0] != "options"] + [
            (f"options.{key}", there["options"].get(key), here["options"].get(key))
            for key in dict.fromkeys([*here["options"], *there["options"]])
        ]
    return [
        f"{name}: {json.dumps(old, ensure_ascii=False)[:60]} → {json.dumps(new, ensure_ascii=False)[:60]}"
        for name, old, new in pairs
        if old != new
    ]


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
    from .backends import BackendConfig, LazyBackend, as_reply, final_answer_test, plan_batches
    from .backends.remote import BatchFailed
    from .dataset import load_rows

    backend_problems = check_backend_request(request)
    if backend_problems:
        raise DiagnosticError(backend_problems)
    if request.samples > 1:
        return _run_samples(request, progress, backend)

    progress = progress or Progress()
    problems = check_eval_request(request)
    if problems:
        raise DiagnosticError(problems)
    dist = _distributed()
    loaded = load_rows(request.dataset, request.config, request.revision)
    kind = detect_kind(loaded.columns, request.dataset)
    resolved = with_defaults(request, kind, loaded)
    request.out, options = resolved.out, resolved.options  # the CLI reports the folder chosen here
    request = resolved
    # a protocol that does not fit the kind says so alone: its settings would only add noise (EV021)
    problems = check_kind(options, kind.name) or kind.check_options(options)
    problems += loaded.problems_for(options.task)
    problems += files.check_out_folder(request.out)
    if not request.overwrite:
        problems += files.check_other_run(request.out, "eval")
    if request.options.scoring not in ("logprob", "generate"):
        problems.append(
            Diagnostic("EV025", f"unknown --scoring {options.scoring!r}; use logprob or generate")
        )
    if problems:
        raise DiagnosticError(problems)
    template = load_prompt_template(kind.name, options.setting, options.prompt_file)
    prepared = kind.prepare(loaded.rows_for(options.task), options, template)
    items = prepared.items[: request.limit] if request.limit is not None else prepared.items
    if not items:
        raise DiagnosticError([Diagnostic("EV006", "no rows to evaluate", path=request.dataset)])

    out = request.out
    run_path, pred_path = out / files.RUN, out / files.PREDICTIONS
    fingerprint = {**_fingerprint(request, template.source_sha256), **_backend_fingerprint(request)}
    conflict: list[str] = []
    if run_path.is_file() and not request.overwrite:
        try:
            conflict = _settings_differ(json.loads(run_path.read_text(encoding="utf-8")), fingerprint)
        except ValueError:
            conflict = ["run.json is not JSON"]
    dist.barrier()
    if conflict:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV007",
                    "this output folder holds a run with other settings ("
                    + "; ".join(conflict[:4] + (["…"] if len(conflict) > 4 else []))
                    + ")",
                    path=str(run_path),
                    hint="run it with that folder's settings to resume it, choose another --out, or add "
                    "--overwrite to start over",
                )
            ]
        )
    # a log it cannot resume from stops the run before the model loads
    # …and so does a row whose fields `score` would refuse (one check for both)
    existing = (
        {}
        if request.overwrite
        else files.latest_by_id(
            files.read_records(
                pred_path, check=lambda rows, lines: _check_our_records(kind, rows, lines, str(pred_path))
            )
        )
    )

    owned = backend is None
    backend = backend or LazyBackend(  # built only if a row is left to compute (a resume may need none)
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
        texts = kind.prompt_texts(items, backend, options, prepared, earlier=existing)
    except BatchFailed as failure:  # a first turn of a two-turn setting; its replies are in the cache
        if owned:
            backend.close()
        kept = [out / REQUESTS] if (out / REQUESTS).is_file() else []
        raise DiagnosticError([replace(failure.diagnostic, path=str(out / REQUESTS))], written=kept) from None
    hashes = [prompt_hash(text) for text in texts]
    done = {
        i for i, item in enumerate(items) if existing.get(item.example_id, {}).get("prompt_hash") == hashes[i]
    }
    if owned and len(done) < len(items):
        backend.build()  # before anything is written: a model that cannot load leaves no run folder

    # Nothing is written before the first reply (run.json with it); with --overwrite the new log is kept
    # beside the old run, which stays whole until the new results replace it at the end.
    log_path = out / files.OVERWRITING if request.overwrite else pred_path
    if dist.main:
        with writing(out):
            if request.overwrite:
                log_path.unlink(missing_ok=True)  # an interrupted --overwrite run starts over
            files.repair(pred_path)
    dist.barrier()

    def keep(records: list[Record]) -> None:
        """Append to the log (main process); the first records of a new run bring its run.json."""
        if not records:
            return
        with writing(out):
            out.mkdir(parents=True, exist_ok=True)
            if not request.overwrite and not log_path.exists():
                files.write_atomic(run_path, files.dump_json(fingerprint))
            files.append_records(log_path, records)

    keys = [item.prefix_keys for item in items]
    encoded: list = []
    batches: list[list[int]] = []
    label_ids = None
    if len(done) < len(items):
        encoded = backend.encode(texts, chat=options.chat)
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
                    keep(stopped.records)
                if owned:
                    backend.close()
                kept = [run_path, log_path] if log_path.is_file() else []
                raise DiagnosticError(
                    [replace(stopped.diagnostic, path=str(pred_path))], written=kept
                ) from None
            computed_here += len(mine)
            gathered = dist.gather(mine)
            if dist.main:
                keep(gathered)
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

    latest = files.latest_by_id(files.read_records(log_path))
    records = [latest[item.example_id] for item in items if item.example_id in latest]
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
    if loaded.format != "jbcompile":  # rows of a release's own format: labels derived at load
        results["dataset"].update(format=loaded.format, config=loaded.config, sha256=loaded.sha256)
        if options.prompt_file == VERBATIM_PROMPT:  # bundled, not a user's file: no install path in results
            results["prompt"].update(template=_prompt_name(VERBATIM_PROMPT), prompt_file=None)
        results["ambiguous_rows"] = loaded.ambiguous
    results.update(_metrics_block(kind, records, request.bootstrap, options.seed, options.protocol))
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
        files.write_atomic(run_path, files.dump_json(fingerprint))
        files.write_records(pred_path, records)
        _write_outputs(out, results, kind)
        if request.overwrite:
            log_path.unlink(missing_ok=True)
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
        (  # options a backend would not use are refused, never recorded as if they had been
            request.backend == "vllm"
            or (
                max(opts.tensor_parallel_size, opts.pipeline_parallel_size, opts.data_parallel_size) == 1
                and not opts.engine_args
            ),
            "--tensor-parallel-size, --pipeline-parallel-size, --data-parallel-size and --vllm-arg are "
            "for the vllm backend",
        ),
        (
            request.options.scoring == "generate" or (opts.sampling.greedy and opts.sampling.top_p == 1.0),
            "--temperature and --top-p set how replies are sampled; log-probability scoring samples "
            "nothing (add --scoring generate)",
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
    if request.out is None:  # the default folder depends on the dataset's kind (its first setting)
        from .dataset import load_rows

        loaded = load_rows(request.dataset, request.config, request.revision)
        request.out = with_defaults(request, detect_kind(loaded.columns, request.dataset), loaded).out
    out = request.out
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
    files.write_atomic(out / files.RESULTS, files.dump_json(home_as_tilde(results)))
    return results


def _total_usage(backends: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    usages = [b.get("usage") for b in backends]
    if any(u is None for u in usages):
        return None
    return {key: sum(u.get(key, 0) for u in usages) for key in usages[0]}


def _metrics_block(
    kind: EvalKind, records: Sequence[Record], resamples: int, seed: int, protocol: str | None = None
) -> dict[str, Any]:
    described = get_protocol(protocol)
    return {
        "protocol": described.describe() if described else None,
        "bootstrap": {"resamples": resamples, "unit": "template", "confidence": CONFIDENCE, "seed": seed},
        "metrics": kind.metrics(records),
        "metrics_ci": kind.intervals(records, resamples, seed),
    }


def _write_outputs(out: Path, results: dict[str, Any], kind: EvalKind) -> None:
    from .report import write_report

    results = home_as_tilde(results)  # shared files: no home folder's name in them
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
    task: str | None = None  # None: the task our predictions name, or qa
    kind: str | None = None  # None: told by the file (or the dataset); the default design when nothing tells
    out: Path | None = None
    bootstrap: int = 1000
    seed: int = 0
    protocol: str | None = None  # the paper whose table heads the report (its OoC rule is in the names)
    overwrite: bool = False  # replace another run held by --out (another file's scores, an eval run)


def read_jsonl_strict(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a predictions file with their line numbers (JSON Lines, a JSON array, or the
    ``{"score", "entries"}`` object an evaluation script writes); every unreadable line is a diagnostic."""
    if not path.exists():
        raise DiagnosticError([Diagnostic("EV060", "predictions file not found", path=str(path))])
    if not path.is_file():
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV116", "the predictions path is not a file", path=str(path), hint="give a .jsonl file"
                )
            ]
        )
    try:
        lines = read_json_records(path)
    except OSError as error:
        raise DiagnosticError(
            [Diagnostic("EV117", f"cannot read the file: {error.strerror or error}", path=str(path))]
        ) from None
    if lines.problems:
        raise DiagnosticError(limited(lines.problems))
    if not lines.records:
        raise DiagnosticError([Diagnostic("EV062", "the predictions file is empty", path=str(path))])
    return lines.records


def _record_kind(record: Record) -> str | None:
    """The kind whose prediction records carry every field this one has."""
    return next(
        (k.name for k in all_eval_kinds() if k.record_fields and set(k.record_fields) <= set(record)), None
    )


def _row_kind(row: Record) -> str | None:
    """The kind a foreign row belongs to, from its columns; None when they do not tell."""
    return next((k.name for k in all_eval_kinds() if k.recognises_row(row)), None)


def _has_category(row: Record) -> bool:
    return isinstance(row.get("category"), str) and row["category"] != ""


def _check_our_records(
    kind: EvalKind, rows: Sequence[Record], lines: Sequence[int], path: str
) -> list[Diagnostic]:
    """Our predictions.jsonl (scored, or read back to resume a run): each line names its row and
    category, its answers are options, and its label fields are what the kind's metrics count with."""
    n_options = len(kind.option_labels)
    problems = []
    for row, line in zip(rows, lines, strict=True):
        found: list[tuple[str, str]] = []
        example_id = row.get("example_id")
        if isinstance(example_id, bool) or not isinstance(example_id, str | int):
            found.append(("EV124", "a prediction without an example_id"))
        if not _has_category(row):
            found.append(("EV122", "a prediction without a category"))
        if row.get("pred") is not None and not option_index(row.get("pred"), n_options):
            found.append(
                (
                    "EV120",
                    f"pred must be an option index 0–{n_options - 1} or null, found {row.get('pred')!r}",
                )
            )
        if not option_index(row.get("gold"), n_options):
            found.append(
                ("EV123", f"gold must be an option index 0–{n_options - 1}, found {row.get('gold')!r}")
            )
        lacking = [
            name
            for name in kind.record_fields
            if name not in row and name not in ("example_id", "category")  # EV124, EV122
        ]
        if lacking:
            found.append(("EV126", f"not a {kind.name} prediction: it lacks {', '.join(lacking)}"))
        found += [("EV125", problem) for problem in kind.record_problems(row)]
        if row.get("task") != rows[0].get("task"):
            found.append(
                ("EV127", f"task {row.get('task')!r} differs from the first line's {rows[0].get('task')!r}")
            )
        problems += [Diagnostic(code, message, path=path, line=line) for code, message in found]
    return problems


def _check_foreign_rows(
    kind: EvalKind, rows: Sequence[Record], lines: Sequence[int], path: str
) -> list[Diagnostic]:
    """Another harness's rows: each has a category, and its labels are what the kind can count with."""
    problems = []
    for row, line in zip(rows, lines, strict=True):
        if not _has_category(row):
            problems.append(Diagnostic("EV122", "a row without a category", path=path, line=line))
            continue
        problems += [
            Diagnostic("EV125", message, path=path, line=line) for message in kind.foreign_row_problems(row)
        ]
    return problems


def _resolve_predictions(kind: EvalKind, rows: list[Record], field_name: str) -> dict[str, Any]:
    """Each row's prediction as an option index (or None), read from an index, a label, an option text
    or a raw reply (:func:`.parsing.read_prediction`); returns the raw values by example id."""
    from .parsing import read_prediction

    raw: dict[str, Any] = {}
    n_options = len(kind.option_labels)
    for row in rows:
        if field_name not in row:
            continue
        value = row.get(RAW_REPLY, row[field_name])
        raw[str(row.get("example_id"))] = value
        options = [row.get(f"ans{i}") for i in range(n_options)]
        if all(isinstance(option, str) for option in options) and not isinstance(row[field_name], int):
            row[field_name] = read_prediction(row[field_name], kind.option_labels, options)
    return raw


def _columns_of(rows: Sequence[Record], most: int = 40) -> str:
    """The columns of a file's rows, in the order they first appear (for a message)."""
    names = list(dict.fromkeys(key for row in rows for key in row))
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _missing_prediction_field(
    rows: Sequence[Record], lines: Sequence[int], field_name: str, path: str
) -> list[Diagnostic]:
    """A prediction column the rows lack, said once for the file (not once per row), with its columns."""
    missing = [line for row, line in zip(rows, lines, strict=True) if field_name not in row]
    if not missing:
        return []
    where = "no row has it" if len(missing) == len(rows) else f"{len(missing)} of {len(rows)} rows lack it"
    return [
        Diagnostic(
            "EV040",
            f"the prediction column {field_name!r}: {where} (the columns: {_columns_of(rows)})",
            path=path,
            line=missing[0],
            hint="name the column that holds the predicted answer with --prediction-field",
        )
    ]


def run_score(request: ScoreRequest) -> dict[str, Any]:
    """Metrics of an existing predictions file: ours, a release's rows with a prediction column, the
    an evaluation script's output or another harness's samples (see :mod:`.formats`)."""
    from ..designs import design_names

    where = str(request.predictions)
    problems = check_common_options(request.bootstrap, request.seed)
    if request.kind is not None and request.kind not in design_names():
        names = ", ".join(sorted(design_names()))
        problems.append(Diagnostic("EV106", f"no kind {request.kind!r}; use {names}"))
    if request.dataset is None and request.revision is not None:
        problems.append(Diagnostic("EV109", "--revision needs --dataset (it picks the dataset's version)"))
    if request.dataset is not None and request.revision is not None and Path(request.dataset).exists():
        problems.append(
            Diagnostic(
                "EV104", f"--revision picks a version on the Hub, but {request.dataset!r} is a local path"
            )
        )
    out = request.out or Path("runs") / f"score-{request.predictions.stem}"
    problems += files.check_out_folder(out)
    if not request.overwrite:
        problems += files.check_other_run(out, "score", request.predictions)
    if problems:
        raise DiagnosticError(problems)

    records_in = read_jsonl_strict(request.predictions)
    adapted = adapt(records_in, where, request.prediction_field)
    if adapted.problems:
        raise DiagnosticError(limited(adapted.problems))
    raw, lines = adapted.rows, adapted.lines
    commit = None
    detected = adapted.kind
    if request.dataset:
        from .dataset import load_rows

        loaded = load_rows(request.dataset, request.config, request.revision)
        commit = loaded.commit
        detected = detected or detect_kind(loaded.columns, request.dataset).name
        by_id = {str(row["example_id"]): row for row in loaded.rows}
        unknown = [
            (line, str(r.get("example_id")))
            for r, line in zip(raw, lines, strict=True)
            if str(r.get("example_id")) not in by_id
        ]
        if unknown:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV063",
                        f"{len(unknown)} prediction(s) name rows the dataset lacks, e.g. {unknown[0][1]!r}",
                        path=where,
                        line=unknown[0][0],
                        hint=f"the dataset's ids look like {next(iter(by_id), '')!r}",
                    )
                ]
            )
        raw = [{**by_id[str(r["example_id"])], **r} for r in raw]
    ours = request.prediction_field is None and all("pred" in r and "gold" in r for r in raw)
    detected = detected or (_record_kind(raw[0]) if ours else _row_kind(raw[0]))
    if request.kind is not None and detected is not None and detected != request.kind:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV107",
                    f"--kind {request.kind} does not match the file: its rows are {detected} rows",
                    path=where,
                    hint=f"use --kind {detected}, or leave --kind out",
                )
            ]
        )
    kind = get_eval_kind(request.kind or detected or DEFAULT_DESIGN)
    protocol_problems = check_kind(EvalOptions(protocol=request.protocol), kind.name)
    if protocol_problems:
        raise DiagnosticError(protocol_problems)
    problems = duplicate_ids(raw, lines, where)
    ambiguous: list[dict[str, Any]] = list(adapted.ambiguous)
    if ours:
        problems = _check_our_records(kind, raw, lines, where) + problems
        if problems:
            raise DiagnosticError(limited(problems))
        records = raw
        source_format = "jbcompile"
        task = str(records[0].get("task", request.task or "qa"))
        if request.task is not None and request.task != task:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV127",
                        f"--task {request.task} contradicts the file: its predictions are of task {task}",
                        path=where,
                        line=lines[0],
                        hint=f"leave --task out (or give --task {task}); to score task {request.task}, "
                        f"run `jbcompile eval --task {request.task}`",
                    )
                ]
            )
    else:
        field_name = request.prediction_field or adapted.prediction_field
        if field_name is None:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV064",
                        "these are not jbcompile predictions; say which column holds the predicted answer "
                        f"(the file's columns: {_columns_of(adapted.rows)})",
                        path=where,
                        hint="add --prediction-field NAME (an option index, label, option text or reply)",
                    )
                ]
            )
        problems += _missing_prediction_field(raw, lines, field_name, where)
        problems += _check_foreign_rows(kind, raw, lines, where)
        if problems:
            raise DiagnosticError(limited(problems))
        raw_values = _resolve_predictions(kind, raw, field_name)
        try:
            foreign = kind.foreign_records(raw, field_name, request.task or "qa")
        except DiagnosticError as error:
            # the kinds number rows 1, 2, …; the user's file has its own line numbers
            renumbered = [
                replace(d, path=where, line=lines[d.line - 1] if d.line and d.line <= len(lines) else d.line)
                for d in error.diagnostics
            ]
            raise DiagnosticError(limited(renumbered)) from None
        records, ambiguous = foreign.records, ambiguous + foreign.ambiguous
        for record in records:
            record["raw_output"] = raw_values.get(str(record.get("example_id")), record.get("raw_output"))
        for entry in ambiguous:
            if (
                isinstance(entry.get("line"), int)
                and entry.get("line") <= len(lines)
                and entry not in adapted.ambiguous
            ):
                entry["line"] = lines[entry["line"] - 1]
        ambiguous = _unique(ambiguous)
        source_format = adapted.format if adapted.format != "other" else kind.name  # the design's own rows
        task = request.task or "qa"
    if not records:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV128", f"no row can be scored for --task {task}", path=where, hint="see ambiguous_rows"
                )
            ]
        )
    if task not in kind.tasks:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV105", f"{kind.name} has no task {task!r}; use {', '.join(kind.tasks)}", path=where
                )
            ]
        )
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind.name,
        "task": task,
        "source": {
            "predictions": str(request.predictions),
            "format": source_format,
            "prediction_field": request.prediction_field or (None if ours else adapted.prediction_field),
            "dataset": request.dataset,
            "config": request.config if request.dataset else None,
            "revision": request.revision,
            "commit": commit,
        },
        "seeds": {"bootstrap": request.seed},
        "versions": library_versions(["numpy", "datasets"]),
        "ambiguous_rows": ambiguous,
    }
    results.update(_metrics_block(kind, records, request.bootstrap, request.seed, request.protocol))
    replaced = files.held_run(out) if out.is_dir() else None
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
        _write_outputs(out, results, kind)
        if replaced is not None and replaced[0] == "eval":  # --overwrite: that run's own files go too
            for name in (files.RUN, files.PREDICTIONS):
                (out / name).unlink(missing_ok=True)
    request.out = out  # the CLI reports the folder written
    return results


def _unique(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for entry in entries:
        key = (entry.get("example_id"), entry.get("problem"))
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out
