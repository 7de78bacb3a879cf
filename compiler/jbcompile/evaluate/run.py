"""``run_eval``: the whole evaluation as one library call (the CLI is a thin layer over it).

In order: the request's checks, the dataset (which names the kind and the defaults), the prompts, the
resume (rows already in the predictions log, with the same prompt, are not computed again; when none is
left the model is not loaded at all), the eval loop (:mod:`.loop`), and the outputs: predictions.jsonl,
results.json (:class:`.results.Results`), report.md and the charts. The run returns a
:class:`RunResult`; the request it was given is left as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..outputs import Change, Output, claim, overlaps, refuse, settle
from ..paths import home_as_tilde
from ..services import service_errors
from . import predictions as files
from .backends.base import Backend, final_answer_test, opens_thinking
from .conversation import TurnItem
from .distributed import distributed
from .formats import format_name
from .jsonfile import limited
from .kind import EvalKind, EvalOptions, PreparedPrompts, Record
from .loop import AT_LIMIT, Batch, PredictionLog, run_rounds
from .promptfiles import VERBATIM_PROMPT, load_prompt_template
from .prompting import PromptItem, apply_chat_template, check_prompts_differ, check_shown_labels, prompt_hash
from .protocols import prompt_wording, temperature_problems
from .records import check_foreign_rows, check_our_records
from .registered import detect_kind
from .requests import (
    EvalRequest,
    Progress,
    check_backend_request,
    check_eval_request,
    check_run_options,
    looks_like_path,
    run_inputs,
    settings_beyond,
    with_defaults,
)
from .results import SCHEMA_VERSION, AmbiguousRow, Results, RunWarning, library_versions, metrics_block
from .resume import DECODING, conflict, fingerprint, prompt_name, refuse_other_settings
from .samples import check_sampling, sample_request, sample_seeds, write_samples_results
from .selection import chosen_rows

REQUESTS = files.REQUESTS
EVAL_FILES = ("results.json", "predictions.jsonl", "report.md", "charts/")


@dataclass(frozen=True)
class RunResult:
    """What a run wrote: its results, the folder, and the files in it (``charts/`` a folder)."""

    results: Results
    out: Path
    written: tuple[str, ...]
    # coded warnings on the run's replies: the CLI prints them, results.json keeps them (``warnings``)
    warnings: tuple[Diagnostic, ...] = ()


def run_eval(
    request: EvalRequest, progress: Progress | None = None, backend: Backend | None = None
) -> RunResult | None:
    """Evaluate; the run's result on the main process (None on the others).

    ``backend``: one already loaded (several runs on one model in a notebook or a test); it is then
    left open. By default the request's backend is created here and closed at the end.
    """
    problems = check_backend_request(request)
    if problems:
        raise DiagnosticError(problems)
    if request.samples > 1:
        return _run_samples(request, progress, backend)
    return _run_one(request, progress or Progress(), backend)


def _run_samples(
    request: EvalRequest, progress: Progress | None, backend: Backend | None
) -> RunResult | None:
    """``--samples K``: K whole runs in ``sample-k/``, then their mean and sd (:mod:`.samples`)."""
    check_sampling(request)
    out = request.out or resolve(request)[0].out  # the default folder depends on the dataset's kind
    assert out is not None
    refuse(overlaps([Output("--out", out)], run_inputs(request)))
    refuse(files.check_out_folder(out))  # the samples' folder is --out: a user's files there stay theirs
    seeds = sample_seeds(request)
    runs: list[RunResult] = []
    with ExitStack() as held:
        if distributed().main:  # every sample's folder is held with it
            with files.writing(out):
                held.enter_context(claim(out, "eval"))
        # a stop in any sample says what every folder holds
        held.enter_context(files.telling_what_is_kept(out, "eval"))
        for k, seed in enumerate(seeds, start=1):
            result = run_eval(sample_request(request, out, k, seed), progress, backend)
            if result is None:
                return None
            runs.append(result)
        results, written = write_samples_results(
            out, [r.results for r in runs], [r.out.name for r in runs], seeds
        )
    return RunResult(results, out, written, tuple(dict.fromkeys(w for run in runs for w in run.warnings)))


def resolve(request: EvalRequest) -> tuple[EvalRequest, Any, EvalKind]:
    """The request with its dataset-dependent defaults, the loaded rows and their kind."""
    from .dataset import load_rows

    if looks_like_path(request.dataset):
        settle(request.dataset)  # a build a kill cut short is finished (or put back) before it is read
    loaded = load_rows(request.dataset, request.config, request.revision)
    kind = detect_kind(loaded.columns, request.dataset)
    return with_defaults(request, kind, loaded), loaded, kind


def _run_one(given: EvalRequest, progress: Progress, backend: Backend | None) -> RunResult | None:
    problems = check_eval_request(given)
    if problems:
        raise DiagnosticError(problems)
    dist = distributed()
    request, loaded, kind = resolve(given)
    assert request.out is not None  # set by with_defaults
    refuse(overlaps([Output("--out", request.out)], run_inputs(request)))
    with ExitStack() as held:
        if dist.main:  # the run folder is held from before it is judged until the results are in
            with files.writing(request.out):
                held.enter_context(claim(request.out, "eval"))
        with files.telling_what_is_kept(request.out, "eval"):  # every stop says what is on disk
            return _run_held(request, loaded, kind, progress, backend, dist)


def _run_held(
    request: EvalRequest, loaded: Any, kind: EvalKind, progress: Progress, backend: Backend | None, dist: Any
) -> RunResult | None:
    from .backends import BackendConfig, LazyBackend
    from .backends.registry import backend_class, options_for
    from .backends.remote import BatchFailed

    options, out = request.options, request.out
    assert out is not None and options.setting is not None  # set by with_defaults
    service = getattr(backend, "service", None) or backend_class(request.backend).service

    def calls(doing: str) -> Any:  # a call into the model's library (a batch that stopped passes as it is)
        return service_errors(service, doing, allow=(BatchFailed,))

    # rows whose labels the metrics cannot count with (a build edited by hand, a foreign folder) are
    # refused with their row number, never evaluated against a gold that is not one
    rows = loaded.rows
    problems = limited(check_foreign_rows(kind, rows, range(1, len(rows) + 1), request.dataset))
    problems = problems or check_run_options(request, kind, loaded)
    if problems:
        raise DiagnosticError(problems)
    template = load_prompt_template(kind.name, options.setting, options.prompt_file)

    def prepare(options: EvalOptions) -> tuple[PreparedPrompts, list[PromptItem]]:
        prepared = kind.prepare(loaded.rows_for(options.task), options, template)
        check_shown_labels(prepared.items, kind.option_labels, template.name)
        check_prompts_differ(prepared.items, template.name)
        items = chosen_rows(
            prepared.items, prepared.records, kind.strata_fields, request.limit, request.sample, options.seed
        )
        if not items:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV006",
                        "no rows to evaluate",
                        path=request.dataset,
                        hint="choose a config and --task with rows, or widen --limit/--sample",
                    )
                ]
            )
        return prepared, items

    prepared, items = prepare(options)

    config = BackendConfig(
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
    )
    settings = fingerprint(
        request,
        template.source_sha256,
        options_for(backend_class(request.backend), config),
        loaded.sha256 or loaded.commit,
        kind.stop_strings(options) if options.scoring == "generate" else None,
    )
    log = PredictionLog(out, settings, request.overwrite)
    differences = [] if request.overwrite else conflict(log.run_path, settings)
    dist.barrier()
    refuse_other_settings(log.run_path, differences)
    # a log it cannot resume from stops the run before the model loads
    # …and so does a row whose fields `score` would refuse (one check for both)
    existing = (
        {}
        if request.overwrite
        else files.latest_by_id(
            files.read_records(
                log.predictions,
                check=lambda rows, lines: check_our_records(kind, rows, lines, str(log.predictions)),
            )
        )
    )

    owned = backend is None
    # built only if a row is left to compute (a resume may need none)
    active: Any = backend or LazyBackend(request.backend, config)
    # A chat template that opens a think block itself makes every reply begin as thinking, with or
    # without --thinking: its budget, stop strings, early stop, reading — and a protocol's temperature for
    # a reasoning model (EV201 when the run's is not it) — are then a reasoning model's. Decided before
    # anything is generated: a two-turn setting's first turns are generated as its prompts are written,
    # so they are looked at first, and prepared again with a reasoning model's room when they think.
    with calls("preparing the prompts"):
        thinking = request.thinking or _first_turns_think(items, active, options)
    if thinking and not request.thinking:
        _refuse_detected_thinking(request, active, owned)
        prepared, items = prepare(replace(options, thinking=True))
    try:
        with calls("preparing the prompts"):
            texts = kind.prompt_texts(
                items, active, replace(options, thinking=thinking), prepared, earlier=existing
            )
    except BatchFailed as failure:  # a first turn of a two-turn setting; its replies are in the cache
        if owned:
            active.close()
        # a new run's folder then holds the request cache alone, which a rerun resumes
        # (files.is_stopped_eval); a stop before any reply names no file, for none is there
        kept = [out / REQUESTS] if (out / REQUESTS).is_file() else []
        where = str(kept[0]) if kept else None
        raise DiagnosticError([replace(failure.diagnostic, path=where)], written=kept) from None
    if not thinking and options.chat and any(opens_thinking(text) for text in texts):
        thinking = True  # a single-turn prompt (or a final turn) opens the block: nothing generated yet
        _refuse_detected_thinking(request, active, owned)
    hashes = [prompt_hash(text) for text in texts]
    done = {
        i for i, item in enumerate(items) if existing.get(item.example_id, {}).get("prompt_hash") == hashes[i]
    }
    if owned and len(done) < len(items):
        with calls("loading the model"):
            active.build()  # before anything is written: a model that cannot load leaves no run folder

    if dist.main:
        log.start()
    dist.barrier()

    with calls("tokenizing the prompts"):
        batch, batches = _plan(request, kind, active, items, prepared, texts, hashes, done, thinking)
    batch.service = service
    # the limits the replies were generated under, as the kind or protocol set them (run.json's
    # ``max_new_tokens`` is the flag, null when not given); recorded, not compared by a resume
    settings[DECODING] = decoding_limits(batch)
    try:
        run_rounds(batches, batch, log, dist, progress)
    except DiagnosticError:
        if owned:
            active.close()
        raise
    if owned:
        active.close()
    dist.barrier()
    if not dist.main:
        return None

    latest = files.latest_by_id(files.read_records(log.path))
    records = [latest[item.example_id] for item in items if item.example_id in latest]
    block = metrics_block(
        kind, records, request.bootstrap, options.seed, options.protocol, wording_of(options.prompt_file)
    )
    limit = decoding_limits(batch)["max_new_tokens"]
    roomier = settings_beyond(kind, options, limit) if limit else []
    warnings = run_warnings(
        records, batch.thinking, limit, roomier, options.answer_pattern, _top_logprobs(request)
    )
    results = _results(request, kind, loaded, template, prepared, batch, active, records, block)
    if warnings:  # kept with the figures they change the reading of
        results.warnings = [RunWarning.of(warning) for warning in warnings]
    with files.writing(out):
        out.mkdir(parents=True, exist_ok=True)
        also: dict[Path, Change] = {
            log.run_path: files.dump_json(settings),
            log.predictions: files.records_text(records),
        }
        if request.overwrite:
            also[log.path] = None  # the --overwrite log, now the predictions
        write_outputs(out, results, kind, also)
    return RunResult(results, out, EVAL_FILES, tuple(warnings))


def _top_logprobs(request: EvalRequest) -> int | None:
    """How many tokens a server was asked to list with their log-probabilities (None: the backend scores
    every label itself)."""
    from .backends.registry import backend_class

    options = backend_class(request.backend).Options.from_given(request.backend_options)
    return getattr(options, "top_logprobs", None)


CUT_SHARE = 0.5  # more than this share of replies cut at the limit and out of choice: EV054


def cut_replies_warning(
    records: Sequence[Record],
    max_new_tokens: int | None,
    roomier: Sequence[str] = (),
    answer_pattern: str | None = None,
) -> Diagnostic | None:
    """EV054 when most of a run's replies stopped at the token limit and were read as out of choice:
    the figures then measure the limit, not the model — e.g. a prompt that asks for reasoning before
    the answer, run under a setting that allows a one-token answer. Any design, any protocol: the
    backends say where a reply stopped (a finish reason, the tokens generated). ``roomier``: the kind's
    settings that generate more new tokens, named in the hint; ``answer_pattern``: the run's, which the
    hint then asks to check rather than to pass."""
    if max_new_tokens is None or not records:
        return None
    cut = sum(bool(record.get(AT_LIMIT)) and record.get("pred") is None for record in records)
    if cut <= CUT_SHARE * len(records):
        return None
    return Diagnostic(
        "EV054",
        f"{cut} of the {len(records)} replies stopped at the limit of {max_new_tokens} new token"
        f"{'s' * (max_new_tokens != 1)} and were read as out of choice: the figures measure the limit, not "
        "the model",
        severity=Severity.WARNING,
        hint=_cut_replies_hint(roomier, answer_pattern),
    )


def _cut_replies_hint(roomier: Sequence[str], answer_pattern: str | None) -> str:
    """What EV054 asks for: room (a setting that asks for reasons and has it, where the run's task has
    one, else more tokens), and the marker the answers follow, passed or checked."""
    room = "raise --max-new-tokens"
    if roomier:
        settings = " / ".join(f"--setting {setting}" for setting in roomier)
        room = (
            "for a prompt that asks for reasoning before its answer, pass the setting whose prompt asks "
            f"for it ({settings}) or {room}"
        )
    if answer_pattern is None:
        return f"{room}; for replies that answer after a marker, pass --answer-pattern"
    return f"{room}; and check that --answer-pattern {answer_pattern!r} matches where the replies answer"


REASONING_SHARE = 0.05  # more than this share of replies carry the model's reasoning: EV055


def reasoning_warning(
    records: Sequence[Record], thinking: bool, max_new_tokens: int | None
) -> Diagnostic | None:
    """EV055 when a model run without --thinking turned out to reason (more than ``REASONING_SHARE`` of
    its replies carry their reasoning: a server's reasoning field or a think block): it had the new tokens
    of a model that answers at once, so many of its replies end before an answer. A stray think block in
    a few replies of thousands is the model's habit, not its kind, and changes no figure's reading. A
    run under a protocol whose paper decoded a reasoning model at a temperature of its own (its
    ``reasoning_temperature``) stops instead (EV201)."""
    reasoned = [record for record in records if "reasoning" in record]
    if thinking or max_new_tokens is None or len(reasoned) <= REASONING_SHARE * len(records):
        return None
    unanswered = sum(record.get("pred") is None for record in reasoned)
    return Diagnostic(
        "EV055",
        f"{len(reasoned)} of the {len(records)} replies carry the model's reasoning ({unanswered} of them "
        f"out of choice): it was run as a model that answers at once, with {max_new_tokens} new tokens",
        severity=Severity.WARNING,
        hint="run it again with --thinking to give it a reasoning model's room",
    )


UNLABELLED_SHARE = 0.5  # more than this share of rows with no option label among the top logprobs: EV056


def unlabelled_warning(records: Sequence[Record], top_logprobs: int | None = None) -> Diagnostic | None:
    """EV056 when most rows of a log-probability run had none of the option labels among the tokens a
    server returned (its ``top_logprobs``): each is out of choice, so the figures measure how many
    tokens the server lists, not the model (a small model that puts its mass on other tokens first).
    Transformers and vLLM score every label, so only a server's rows can lack them all."""
    missing = sum(
        isinstance(found := record.get("option_logprobs"), list) and all(v is None for v in found)
        for record in records
    )
    if not records or missing <= UNLABELLED_SHARE * len(records):
        return None
    among = f"the server's top {top_logprobs}" if top_logprobs else "the top"
    return Diagnostic(
        "EV056",
        f"{missing} of the {len(records)} rows had no option label among {among} log-probabilities and "
        "were read as out of choice: the figures measure the server's cut-off, not the model",
        severity=Severity.WARNING,
        hint="raise --top-logprobs (to the server's maximum), or use --scoring generate",
    )


def run_warnings(
    records: Sequence[Record],
    thinking: bool,
    max_new_tokens: int | None,
    roomier: Sequence[str] = (),
    answer_pattern: str | None = None,
    top_logprobs: int | None = None,
) -> list[Diagnostic]:
    """Every warning that changes how a run's figures are read, in one fixed order: the terminal says
    them, results.json keeps them (``warnings``), report.md heads its figures with them and `compare`
    marks the run. ``top_logprobs``: the tokens a server was asked for (named by EV056)."""
    found = (
        reasoning_warning(records, thinking, max_new_tokens),
        cut_replies_warning(records, max_new_tokens, roomier, answer_pattern),
        unlabelled_warning(records, top_logprobs),
    )
    return [warning for warning in found if warning is not None]


def _first_turns_think(items: list[PromptItem], backend: Any, options: EvalOptions) -> bool:
    """Whether the chat template opens a think block for the first turn of a two-turn item: those turns
    are generated while the prompts are written, so this is asked before they are."""
    if not options.chat:
        return False
    firsts = (item.first for item in items if isinstance(item, TurnItem))
    return any(opens_thinking(apply_chat_template(backend.tokenizer, first)) for first in firsts)


def _refuse_detected_thinking(request: EvalRequest, backend: Any, owned: bool) -> None:
    """EV201 when a run whose chat template makes it a reasoning model's (no --thinking) decodes at
    another temperature than its protocol's paper used for one (a two-turn setting's first replies may be
    in the request cache then: the stop says what a rerun makes of them)."""
    problems = temperature_problems(
        request.options.protocol,
        request.backend_options.sampling.temperature,
        True,
        detected="the model's chat template opens a think block",
    )
    if problems:
        if owned:
            backend.close()
        stop = DiagnosticError(problems)
        stop.go_on = after_reasoning_stop(request)
        raise stop


def after_reasoning_stop(request: EvalRequest) -> str:
    """How to go on after EV201 stopped a run whose model turned out to reason: the replies it kept were
    decoded at the run's temperature, which the paper's reasoning-model temperature the hint's --thinking
    sets is not, so that rerun sends every request anew; the same command would stop again, at no cost."""
    from .protocols import get_protocol

    protocol = get_protocol(request.options.protocol)
    given = request.backend_options.sampling.temperature
    paper = protocol.temperature_for(True) if protocol else None
    at = f" at temperature {given:g}" if given is not None else ""
    rerun = (
        f"a rerun with --thinking decodes at temperature {paper:g}, so it sends its requests anew"
        if paper is not None
        else "a rerun with --thinking sends its requests anew"
    )
    return (
        f"these replies were decoded{at} for a model that answers at once: {rerun}, and the same command "
        "would stop here again (sending nothing)"
    )


def _plan(
    request: EvalRequest,
    kind: EvalKind,
    backend: Any,
    items: list,
    prepared: Any,
    texts: list,
    hashes: list[str],
    done: set[int],
    thinking: bool,
) -> tuple[Batch, list[list[int]]]:
    """How the rows left are run (scoring or generation settings, ``thinking``: a reasoning model's), and
    their batches."""
    from .backends import plan_batches

    options = request.options
    encoded: list = []
    batches: list[list[int]] = []
    label_ids = None
    if len(done) < len(items):
        encoded = backend.encode(texts, chat=options.chat)
        keys = [item.prefix_keys for item in items]
        batches = [
            [i for i in planned if i not in done]
            for planned in plan_batches([len(ids) for ids in encoded], keys, backend.batch_size)
        ]
        batches = [planned for planned in batches if planned]
        label_ids = (
            backend.label_token_ids(kind.option_labels, texts[0], chat=options.chat)
            if options.scoring == "logprob"
            else None
        )
    if thinking != options.thinking:
        options = replace(options, thinking=thinking)
    max_new = request.max_new_tokens if request.max_new_tokens is not None else kind.max_new_tokens(options)
    # a reply read after a pattern of the user's may state its answer again later: no early stop then
    is_final = None if options.answer_pattern else kind.answer_is_final(options)
    batch = Batch(
        backend=backend,
        kind=kind,
        options=options,
        items=items,
        prepared=prepared,
        encoded=encoded,
        hashes=hashes,
        label_ids=label_ids,
        max_new_tokens=max_new,
        stop_strings=kind.stop_strings(options),
        answer_is_final=final_answer_test(is_final, thinking),
        thinking=thinking,
        # a service's reasoning model shows itself only by its replies (a reasoning field, a think block)
        if_reasoning=temperature_problems(
            options.protocol,
            request.backend_options.sampling.temperature,
            True,
            detected="the model's replies carry its reasoning",
        ),
        after_reasoning=after_reasoning_stop(request),
    )
    return batch, batches


def _results(
    request: EvalRequest,
    kind: EvalKind,
    loaded: Any,
    template: Any,
    prepared: Any,
    batch: Batch,
    backend: Any,
    records: list[dict[str, Any]],
    block: dict[str, Any],
) -> Results:
    """results.json of an eval run over ``records``: what was run, on what, how, and the metrics
    ``block``."""
    options = request.options
    generate = options.scoring == "generate"
    results = Results.model_validate(
        {
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
                # how they were chosen, where not all of them were (--limit, --sample)
                **{name: n for name, n in (("limit", request.limit), ("sample", request.sample)) if n},
                "sha256": loaded.sha256,
                "verification": loaded.verification,
            },
            "prompt": {
                "setting": options.setting,
                "template": template.name,
                "template_sha256": template.source_sha256,
                "prompt_file": str(options.prompt_file) if options.prompt_file else None,
                "chat": options.chat,
                "shots": options.shots if kind.few_shot else 0,  # what the prompts carried
                "shot_ids": prepared.shot_ids,
                **({"shot_notes": prepared.shot_notes} if prepared.shot_notes else {}),
            },
            "scoring": {
                "method": options.scoring,
                "max_new_tokens": decoding_limits(batch)["max_new_tokens"],
                "stop_strings": list(batch.stop_strings) if generate else None,
                "stop_at_answer_line": generate and batch.answer_is_final is not None,
                "answer_pattern": options.answer_pattern,
                **(
                    {"answer_pattern_matched": pattern_matches(options.answer_pattern, records)}
                    if options.answer_pattern and generate
                    else {}
                ),
                **first_turn_decoding(batch.items),
            },
            "backend": backend.describe(),
            "thinking": batch.thinking,
            "seeds": {"shots": options.seed, "bootstrap": options.seed},
            "versions": library_versions(["torch", "transformers", "accelerate", "datasets", "numpy"]),
            **block,
        }
    )
    if loaded.format != "jbcompile":  # rows of a release's own format: labels derived at load
        assert results.dataset is not None and results.prompt is not None
        results.dataset.format, results.dataset.config = format_name(loaded.format, kind.name), loaded.config
        if options.prompt_file == VERBATIM_PROMPT:  # bundled, not a user's file: no install path in results
            results.prompt.template, results.prompt.prompt_file = prompt_name(VERBATIM_PROMPT), None
        results.ambiguous_rows = [AmbiguousRow.model_validate(entry) for entry in loaded.ambiguous]
    return results


def wording_of(prompt_file: Path | str | None) -> tuple[str, str | None]:
    """Whose wording a run's prompts had, and the user's prompt file by name (as run.json names it; a
    run.json holds the bundled release prompt by its name)."""
    if prompt_file is not None and str(prompt_file) in (str(VERBATIM_PROMPT), prompt_name(VERBATIM_PROMPT)):
        return prompt_wording(None, verbatim=True), None
    name = prompt_name(Path(prompt_file)) if prompt_file is not None else None
    return prompt_wording(name), name


def decoding_limits(batch: Batch) -> dict[str, Any]:
    """The new tokens a run's replies were allowed (None for a logprob run, which generates nothing),
    and a two-turn setting's first-turn limit where it has one: for run.json and results.json alike."""
    generate = batch.options.scoring == "generate"
    first = first_turn_decoding(batch.items)
    return {
        "max_new_tokens": batch.max_new_tokens if generate else None,
        **({"first_turn_max_new_tokens": first["first_turn_max_new_tokens"]} if first else {}),
    }


def first_turn_decoding(items: Any) -> dict[str, Any]:
    """How a two-turn setting's first turns were generated (their limit, and the stop strings every one
    of them had), for results.json: a paper may fix them apart from the final turn's (100 new tokens
    for a first turn, against 1 for the answer). Empty for a run without two-turn items."""
    turns = [item for item in items if isinstance(item, TurnItem)]
    if not turns:
        return {}
    stops = [s for s in turns[0].first_stop if all(s in turn.first_stop for turn in turns)]
    return {
        "first_turn_max_new_tokens": max(turn.first_max_new_tokens for turn in turns),
        "first_turn_stop_strings": stops,
    }


def pattern_matches(pattern: str, records: list[dict[str, Any]]) -> int:
    """How many of a run's replies ``--answer-pattern`` matched (none: every answer out of choice, which
    the report and the terminal say)."""
    from .parsing import answer_after

    replies = (record.get("raw_output") for record in records)
    return sum(1 for reply in replies if isinstance(reply, str) and answer_after(reply, pattern) is not None)


def write_outputs(
    out: Path,
    results: Results,
    kind: EvalKind,
    also: Mapping[Path, Change] | None = None,
    whole: bool = False,
) -> None:
    """report.md, the charts and results.json of a run, with the ``also`` changes (run.json, the
    predictions …), in one commit: a kill leaves the earlier set or the new one, never a mix.

    ``whole``: the run replaces the folder's earlier run whole — every other file of a run in it
    (another command's run.json, requests.jsonl, samples) goes in the same commit, so a folder never
    holds two runs; a user's own files there stay."""
    from .report import report_changes

    shared = Results.model_validate(home_as_tilde(results.to_json()))  # no home folder's name in them
    with claim(out) as place:  # inside the command's own claim of the folder
        changes: dict[Path, Change] = {**(also or {}), **report_changes(place, out, shared, kind)}
        changes[out / files.RESULTS] = files.dump_json(shared.to_json())
        if whole and out.is_dir():
            kept = {Path(target).relative_to(out).parts[0] for target in changes}
            changes.update(
                {
                    entry: None
                    for entry in out.iterdir()
                    if entry.name not in kept and files.is_run_file(entry)
                }
            )
        place.commit(changes)
