"""What ``eval`` and ``score`` are asked to do, checked before anything is loaded, and the defaults that
depend on the dataset.

A request is never changed by the functions it is passed to: ``with_defaults`` returns a new one, and a
run reports what it chose (its folder above all) in its result (:class:`.run.RunResult`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic
from ..outputs import Output, overlaps
from ..text import plain_name
from . import predictions as files
from .backends.options import BackendOptions
from .kind import EvalKind, EvalOptions
from .promptfiles import VERBATIM_PROMPT
from .protocols import temperature_problems

MAX_BOOTSTRAP = 100_000  # resamples × templates numbers are held in memory at once


@dataclass
class EvalRequest:
    model: str
    dataset: str
    config: str = "lite"
    revision: str | None = None
    model_revision: str | None = None
    out: Path | None = None  # None: runs/<model>-<config>-<setting>…, chosen once the dataset is known
    options: EvalOptions = field(default_factory=EvalOptions)
    batch_size: int = 8
    max_new_tokens: int | None = None
    dtype: str = "auto"
    trust_remote_code: bool = False
    prefix_cache: bool = True
    bootstrap: int = 1000
    limit: int | None = None
    sample: int | None = None  # a stratified sample of N rows (evaluate/selection.py)
    overwrite: bool = False
    backend: str = "transformers"
    backend_options: BackendOptions = field(default_factory=BackendOptions)  # as given; each backend checks
    thinking: bool = False  # a reasoning model: its answer follows its thinking
    samples: int = 1  # sampled runs; metrics as mean ± sd over them


@dataclass
class ScoreRequest:
    predictions: Path
    dataset: str | None = None
    config: str = "lite"
    revision: str | None = None
    prediction_field: str | None = None
    task: str | None = None  # None: the task our predictions name, or qa
    kind: str | None = None  # None: told by the file (or the dataset); the default design when nothing tells
    out: Path | None = None  # None: runs/score-<file name without extension, control characters as ->
    bootstrap: int = 1000
    seed: int = 0
    protocol: str | None = None  # the paper whose table heads the report (its OoC rule is in the names)
    setting: str | None = None  # the prompt setting a column of replies was asked with (None: the default)
    # where a reply's answer is (as eval's --answer-pattern): read after the last match of this expression
    answer_pattern: str | None = None
    overwrite: bool = False  # replace another run held by --out (another file's scores, an eval run)
    model: str | None = None  # the model that wrote the predictions, as reports and comparisons name it

    @property
    def out_folder(self) -> Path:
        """Where the scores go."""
        return self.out or Path("runs") / f"score-{plain_name(self.predictions.stem, 'predictions')}"


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


def _at_least(name: str, value: int | None, low: int) -> list[Diagnostic]:
    if value is None or value >= low:
        return []
    return [
        Diagnostic("EV103", f"{name} must be {low} or more, got {value}", hint=f"give {name} {low} or more")
    ]


def check_common_options(bootstrap: int, seed: int) -> list[Diagnostic]:
    """The bootstrap and seed options ``eval``, ``score`` and ``compare`` share: one rule for all three
    (a seed numpy takes, resamples held in memory at once)."""
    problems = _at_least("--bootstrap", bootstrap, 0) + _at_least("--seed", seed, 0)
    if bootstrap > MAX_BOOTSTRAP:
        problems.append(
            Diagnostic(
                "EV103",
                f"--bootstrap must be at most {MAX_BOOTSTRAP:,}, got {bootstrap:,}",
                hint=f"give --bootstrap {MAX_BOOTSTRAP:,} or fewer",
            )
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
    problems += _at_least("--sample", request.sample, 1)
    if request.limit is not None and request.sample is not None:
        problems.append(
            Diagnostic("EV103", "--limit and --sample both choose the rows", hint="give one of them")
        )
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
    problems += _answer_pattern_problems(request.options)
    problems += temperature_problems(
        request.options.protocol, request.backend_options.sampling.temperature, request.thinking
    )
    if request.out is not None:  # the default folder is checked once the dataset has named the kind
        overlapping = overlaps([Output("--out", request.out)], run_inputs(request))
        problems += overlapping or files.check_out_folder(request.out)
    return problems


def _answer_pattern_problems(options: EvalOptions) -> list[Diagnostic]:
    """``--answer-pattern`` must compile, and it reads generated replies only."""
    if options.answer_pattern is None:
        return []
    try:
        re.compile(options.answer_pattern)
    except re.error as error:
        return [
            Diagnostic(
                "EV026",
                f"--answer-pattern {options.answer_pattern!r} is not a regular expression: {error}",
                hint="give a Python regular expression, e.g. '回答[:：]'",
            )
        ]
    if re.search(options.answer_pattern, ""):
        return [
            Diagnostic(
                "EV028",
                f"--answer-pattern {options.answer_pattern!r} matches an empty reply, so it matches at the "
                "end of every reply and every answer would be read from nothing (out of choice)",
                hint="give a pattern that needs the marker itself, e.g. '回答[:：]'",
            )
        ]
    if options.scoring != "generate":
        return [
            Diagnostic(
                "EV027",
                "--answer-pattern says where a generated reply's answer is; log-probability scoring "
                "reads none",
                hint="add --scoring generate, or drop --answer-pattern",
            )
        ]
    return []


def run_inputs(request: EvalRequest) -> list[tuple[str, Path]]:
    """What an eval run reads from disk: an --out may be none of them, nor hold one, nor lie in one."""
    named = [("--dataset", request.dataset), ("--model", request.model)]
    found = [(option, Path(value).expanduser()) for option, value in named if looks_like_path(value)]
    prompt = request.options.prompt_file
    return found + ([("--prompt-file", Path(prompt))] if prompt and prompt != VERBATIM_PROMPT else [])


def score_inputs(request: ScoreRequest) -> list[tuple[str, Path]]:
    """What ``score`` reads from disk: the predictions file, and --dataset when it is a local path."""
    dataset = (
        [("--dataset", Path(request.dataset))] if request.dataset and looks_like_path(request.dataset) else []
    )
    return [("the predictions file", request.predictions), *dataset]


def check_backend_request(request: EvalRequest) -> list[Diagnostic]:
    """Every backend option, before anything is loaded or sent: the chosen backend says which options
    it takes and which values it refuses (:func:`.backends.registry.check_options`); what depends on the
    run as a whole (sampling against scoring, ``--samples``) is checked here."""
    from .backends.base import DTYPES
    from .backends.registry import backend_class, check_options
    from .backends.remote import RemoteBackend
    from .protocols import decoding_problems

    sampling = request.backend_options.sampling
    problems = check_options(request.backend, request.backend_options)
    if request.dtype not in DTYPES:
        problems.append(
            Diagnostic("EV053", f"unknown --dtype {request.dtype!r}", hint=f"use {', '.join(DTYPES)}")
        )
    elif (
        request.dtype != "auto" and not problems and issubclass(backend_class(request.backend), RemoteBackend)
    ):
        problems.append(
            Diagnostic(
                "EV308",
                f"--dtype is for the backends that load the weights (hf, vllm); the {request.backend} "
                "backend's model runs at the server's dtype",
                hint="leave --dtype out",
            )
        )
    own = None
    if not problems:  # an option that hands decoding to the service, under a paper's decoding
        own = backend_class(request.backend).Options.from_given(request.backend_options).own_decoding()
        problems = decoding_problems(request.options.protocol, request.thinking, own)
    checks = [
        (
            own is None or not _sampling_chosen(request),
            f"--temperature and --top-p would not be used: {own}",
            "leave --temperature and --top-p out, or the option that hands decoding to the service",
        ),
        (request.samples >= 1, "--samples must be 1 or more", "give --samples 1 or more"),
        (
            request.samples == 1 or request.options.scoring == "generate",
            "--samples needs --scoring generate (log-probabilities do not vary between runs)",
            "add --scoring generate, or leave --samples out",
        ),
        (
            request.options.scoring == "generate" or (sampling.greedy and sampling.top_p == 1.0),
            "--temperature and --top-p set how replies are sampled; log-probability scoring samples nothing",
            "add --scoring generate, or leave --temperature and --top-p out",
        ),
    ]
    return problems + [Diagnostic("EV308", message, hint=hint) for ok, message, hint in checks if not ok]


def _sampling_chosen(request: EvalRequest) -> bool:
    """Whether the run's sampling is the user's own choice: neither greedy nor the temperature its
    protocol's paper decoded at (which the CLI puts in the request when --temperature is not given), so
    an option that hands decoding to the service would drop it unsaid (EV308). The paper's temperature
    is the protocol's to answer for (EV201), not an option the user gave."""
    from .protocols import get_protocol

    sampling = request.backend_options.sampling
    protocol = get_protocol(request.options.protocol)
    paper = protocol.temperature_for(request.thinking) if protocol else None
    return sampling.top_p != 1.0 or sampling.temperature not in (0.0, paper)


def check_run_options(request: EvalRequest, kind: EvalKind, loaded: Any) -> list[Diagnostic]:
    """What can be checked once the dataset has named its kind (``request`` with its defaults)."""
    from .protocols import check_kind

    options = request.options
    # a protocol that does not fit the kind says so alone: its settings would only add noise (EV021)
    problems = check_kind(options, kind.name) or kind.check_options(options)
    problems += loaded.problems_for(options.task)
    if request.out is not None:
        problems += files.check_out_folder(request.out)
        if not request.overwrite:
            problems += files.check_other_run(request.out, "eval")
    if options.scoring not in ("logprob", "generate"):
        problems.append(
            Diagnostic("EV025", f"unknown --scoring {options.scoring!r}", hint="use logprob or generate")
        )
    return problems + _pattern_room_problems(request, kind)


def settings_beyond(kind: EvalKind, options: EvalOptions, tokens: int) -> list[str]:
    """The kind's settings that generate more than ``tokens`` new tokens (a reply with room for
    reasons) and that the run's other options allow (detection has no CoT setting), named where a run's
    limit left none."""
    return [
        setting
        for setting in kind.settings
        if kind.max_new_tokens(given := replace(options, setting=setting)) > tokens
        and not kind.check_options(given)
    ]


def _pattern_room_problems(request: EvalRequest, kind: EvalKind) -> list[Diagnostic]:
    """An ``--answer-pattern`` that needs a marker before the answer cannot be met by a one-token reply
    (e.g. a paper's limit for a one-number setting under its ``--protocol``): every answer would be
    out of choice. Refused (EV029), naming the settings or the option that give room."""
    from .parsing import answer_after

    options = request.options
    if options.answer_pattern is None or options.scoring != "generate":
        return []
    limit = request.max_new_tokens if request.max_new_tokens is not None else kind.max_new_tokens(options)
    if limit > 1 or any(
        answer_after(label, options.answer_pattern) is not None for label in kind.option_labels
    ):
        return []
    roomy = settings_beyond(kind, options, 1)
    where = f"a setting whose replies hold reasons (--setting {' / '.join(roomy)})" if roomy else ""
    return [
        Diagnostic(
            "EV029",
            f"--answer-pattern {options.answer_pattern!r} reads an answer after a marker, but setting "
            f"{options.setting} generates at most 1 new token here, which cannot hold both: every reply "
            "would be out of choice",
            hint=f"run it as {where + ', or ' if where else ''}with --max-new-tokens N",
        )
    ]


def with_defaults(request: EvalRequest, kind: EvalKind, loaded: Any) -> EvalRequest:
    """A copy of the request with what depends on the dataset filled in: the kind's first setting when
    none was given, the release's own prompt for release rows that carry it, and the default run folder
    (which names the chat mode, so that a --chat run never lands in the folder of a plain one)."""
    options = replace(request.options, thinking=request.thinking)  # the kinds read it from the options
    setting = options.setting or kind.settings[0]
    if not options.setting:
        options = replace(options, setting=setting)
    verbatim = getattr(loaded, "verbatim_prompt", False) and options.setting in kind.settings
    if verbatim and options.prompt_file is None:  # (an unknown setting is left for check_options)
        options = replace(options, prompt_file=VERBATIM_PROMPT)
    config = request.config if getattr(loaded, "config", request.config) else Path(request.dataset).stem
    out = request.out or default_out_dir(request.model, config, setting, options.task, options.chat)
    return replace(request, options=options, out=out)


def check_score_request(request: ScoreRequest) -> list[Diagnostic]:
    """Every option of ``score`` that can be checked before the predictions are read."""
    from ..designs import design_names

    problems = check_common_options(request.bootstrap, request.seed)
    problems += _answer_pattern_problems(
        EvalOptions(answer_pattern=request.answer_pattern, scoring="generate")
    )
    if request.kind is not None and request.kind not in design_names():
        names = ", ".join(sorted(design_names()))
        problems.append(Diagnostic("EV106", f"no kind {request.kind!r}", hint=f"use {names}"))
    if request.dataset is None and request.revision is not None:
        problems.append(
            Diagnostic(
                "EV109",
                "--revision without --dataset",
                hint="add --dataset ORG/NAME (--revision picks its version), or leave --revision out",
            )
        )
    if request.dataset is not None and request.revision is not None and Path(request.dataset).exists():
        problems.append(
            Diagnostic(
                "EV104",
                f"--revision picks a version on the Hub, but {request.dataset!r} is a local path",
                hint="leave --revision out for a local build, or give the Hub name ORG/NAME",
            )
        )
    if not request.predictions.is_file():  # reported when it is read (EV060, EV116): nothing to guard
        return problems + check_score_out(request)
    overlapping = overlaps([Output("--out", request.out_folder)], score_inputs(request))
    return problems + (overlapping or check_score_out(request))


def check_score_out(request: ScoreRequest) -> list[Diagnostic]:
    """May ``score`` write its folder (checked again once the folder is held)?"""
    out = request.out_folder
    problems = files.check_out_folder(out)
    if not request.overwrite:
        problems += files.check_other_run(out, "score", request.predictions)
    return problems
