"""`jbcompile eval`, `score` and `compare`: thin wrappers over ``jbcompile.evaluate`` (``run.run_eval``,
``score.run_score``, ``compare``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..diagnostics import Diagnostic, DiagnosticError
from ..evaluate.backends.openai import OpenAIOptions
from ..evaluate.backends.remote import RemoteOptions
from ..evaluate.backends.vllm import VllmOptions
from ..text import shown_name
from .app import EXIT_INPUT, app, err_console, fail, interrupted, out_console, print_diagnostics, when_missing

if TYPE_CHECKING:
    from ..evaluate.run import RunResult


def _configs_text(configs: list[tuple[str, bool]], default: str) -> str:
    """``lite (default) or full``: the evaluator's default config first, marked when the design marks it."""
    names = [default] + [name for name, _ in configs if name != default]
    marked = any(is_default for _, is_default in configs) and len(names) > 1
    return " or ".join([f"{names[0]} (default)" if marked else names[0], *names[1:]])


def _kind_help() -> dict[str, str]:
    """Every design's configs, tasks and prompt settings, for --help (read from the designs themselves)."""
    from ..designs import all_designs

    designs = sorted(all_designs(), key=lambda design: design.name)
    parts: dict[str, list[str]] = {"configs": [], "tasks": [], "settings": [], "kinds": [], "protocols": []}
    for design in designs:
        kind = design.evaluator()
        configs = [(spec.name, spec.default) for spec in design.compiler().configs]
        parts["configs"].append(f"{design.name}: {_configs_text(configs, kind.default_config)}")
        parts["tasks"].append(f"{design.name}: {', '.join(kind.tasks)}")
        parts["settings"].append(f"{design.name}: {kind.settings_help}")
        parts["kinds"].append(design.name)
    parts["protocols"] = [p.name for d in all_designs() for p in d.evaluator().protocols]
    help_texts = {
        name: "; ".join(texts) for name, texts in parts.items() if name not in ("kinds", "protocols")
    }
    help_texts["kinds"] = ", ".join(parts["kinds"])
    help_texts["protocols"] = _or_list(parts["protocols"])
    return help_texts


def _or_list(names: list[str]) -> str:
    """``a, b or c``."""
    return " or ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


_KIND_HELP = _kind_help()


def _progress():
    """A rich progress bar showing rows and rows/s (drawn by the main process only)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    from ..evaluate.requests import Progress as Callbacks

    state: dict = {}

    class RowsPerSecond(ProgressColumn):
        """The recent rate while rows run; the run's average (rows over elapsed time) once it ends."""

        def render(self, task: Task) -> Text:
            return Text(rows_per_second(task, ended=state.get("ended", False)))

    bar = Progress(
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        RowsPerSecond(),
        TimeElapsedColumn(),
        console=err_console,
    )

    def start(total: int) -> None:
        bar.start()
        state["task"] = bar.add_task("rows", total=total)

    def advance(count: int) -> None:
        bar.advance(state["task"], count)

    def stop() -> None:
        state["ended"] = True  # the last line drawn shows the average
        bar.stop()

    return Callbacks(start=start, advance=advance, stop=stop)


def rows_per_second(task: Any, ended: bool) -> str:
    """``12.3 rows/s`` of a rich progress task: its recent rate, or its average once the run ended."""
    elapsed = task.finished_time if task.finished_time is not None else task.elapsed
    if (ended or task.finished) and elapsed:
        return f"{task.completed / elapsed:.1f} rows/s (average)"
    speed = task.speed
    return "" if speed is None else f"{speed:.1f} rows/s"


def _summary(run: RunResult) -> None:
    """The run's headline metrics (as the report's tables print them) and its files."""
    from ..evaluate.report import headline_text, rows_text

    results = run.results
    out_console.print(headline_text(results), markup=False)
    dataset = results.dataset
    if dataset is not None and (dataset.limit is not None or dataset.sample is not None):
        out_console.print(rows_text(dataset, results.protocol is not None), markup=False)
    written = [run.out / name for name in run.written if (run.out / name).exists()]
    out_console.print("wrote " + ", ".join(shown_name(str(path)) for path in written), markup=False)
    _charts_note()


def _charts_note() -> None:
    """Say so when the charts were skipped (matplotlib not installed); the rest was written."""
    from ..evaluate.report import charts_skipped

    note = charts_skipped()
    if note is not None:
        print_diagnostics([note])


def _default(options: Any, name: str) -> str:
    """``(default 8)``: a backend option's default, as its backend's options model declares it."""
    return f"(default {options.model_fields[name].default})"


@app.command("eval")
def eval_command(
    model: str = typer.Option(..., "--model", "-m", help="A Hub model id or a local model folder."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="A build folder or a Hub dataset id."),
    config: str = typer.Option("lite", "--config", help=f"Dataset config: {_KIND_HELP['configs']}."),
    revision: str = typer.Option(
        None, "--revision", help="Dataset revision (tag, branch or commit) on the Hub."
    ),
    model_revision: str = typer.Option(None, "--model-revision", help="Model revision on the Hub."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Run folder. Default: runs/<model>-<config>-<setting>[-detect][-chat]/."
    ),
    task: str = typer.Option("qa", "--task", help=f"Task: {_KIND_HELP['tasks']}."),
    setting: str = typer.Option(
        None,
        "--setting",
        help=f"Prompt setting (default: the protocol's, else the kind's first): {_KIND_HELP['settings']}.",
    ),
    prompt_file: Path = typer.Option(
        None, "--prompt-file", help="A Jinja2 prompt replacing the bundled one."
    ),
    answer_pattern: str = typer.Option(
        None,
        "--answer-pattern",
        help="Where a generated reply's answer is: read after the last match of this regular expression "
        "(its first group, if it has one), e.g. '回答[:：]' for a prompt file whose replies end so.",
    ),
    shots: int = typer.Option(
        None, "--shots", help="Few-shot examples (from other categories; not evaluated). Default 3."
    ),
    chat: bool = typer.Option(
        False, "--chat/--no-chat", help="Wrap prompts in the tokenizer's chat template."
    ),
    scoring: str = typer.Option(
        None, "--scoring", help="logprob (option-label log-prob; the default) or generate."
    ),
    protocol: str = typer.Option(
        None,
        "--protocol",
        help=f"A paper's protocol in one word: {_KIND_HELP['protocols']} (generation, the paper's shots, "
        "its table first in the report). Options the paper did not use are refused.",
    ),
    max_new_tokens: int = typer.Option(None, "--max-new-tokens", help="Generation limit (16; 384 for cot)."),
    batch_size: int = typer.Option(8, "--batch-size", help="Prompts per forward pass (halved on OOM)."),
    dtype: str = typer.Option("auto", "--dtype", help="auto (bf16 on GPU, fp32 on CPU), bfloat16, float16."),
    trust_remote_code: bool = typer.Option(
        False, "--trust-remote-code", help="Run code shipped with the model."
    ),
    prefix_cache: bool = typer.Option(
        True, "--prefix-cache/--no-prefix-cache", help="Reuse shared prefixes."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of shot sampling and of the bootstrap."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% intervals."),
    limit: int = typer.Option(None, "--limit", help="Evaluate only the first N rows (smoke tests)."),
    sample: int = typer.Option(
        None,
        "--sample",
        help="Evaluate a stratified sample of N rows: every category and context condition, in proportion, "
        "drawn by --seed. N must be at least the number of strata (EV031 names it).",
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Discard an earlier run in --out."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress bar; of the model libraries' logs, errors only."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="The model libraries' own logs in full (vLLM's INFO lines)."
    ),
    # ---- how the model is run (see docs/eval.md, "Backends") ----
    backend: str = typer.Option(
        "transformers",
        "--backend",
        help="transformers, vllm, openai (any OpenAI-compatible server), anthropic.",
    ),
    base_url: str = typer.Option(
        None, "--base-url", help="openai/anthropic: the server's URL (key from env)."
    ),
    concurrency: int = typer.Option(
        None,
        "--concurrency",
        help=f"openai/anthropic: requests in flight {_default(RemoteOptions, 'concurrency')}.",
    ),
    max_attempts: int = typer.Option(
        None,
        "--max-attempts",
        help=f"openai/anthropic: tries per request {_default(RemoteOptions, 'max_attempts')}.",
    ),
    request_timeout: float = typer.Option(
        None, "--timeout", help=f"openai/anthropic: seconds per request {_default(RemoteOptions, 'timeout')}."
    ),
    top_logprobs: int = typer.Option(
        None,
        "--top-logprobs",
        help=f"openai logprob scoring: tokens asked for {_default(OpenAIOptions, 'top_logprobs')}.",
    ),
    temperature: float = typer.Option(
        None,
        "--temperature",
        help="0 = greedy (the default, or the protocol's paper's); sampling uses --seed.",
    ),
    top_p: float = typer.Option(1.0, "--top-p", help="Nucleus sampling (with --temperature > 0)."),
    samples: int = typer.Option(1, "--samples", help="Sampled runs; metrics as mean and sd over them."),
    thinking: bool = typer.Option(
        False, "--thinking/--no-thinking", help="A reasoning model: parse only the answer after its thinking."
    ),
    thinking_budget: int = typer.Option(
        None, "--thinking-budget", help="anthropic: extended thinking tokens (default: no thinking)."
    ),
    tensor_parallel_size: int = typer.Option(
        None,
        "--tensor-parallel-size",
        help=f"vllm: GPUs per model copy {_default(VllmOptions, 'tensor_parallel_size')}.",
    ),
    pipeline_parallel_size: int = typer.Option(
        None,
        "--pipeline-parallel-size",
        help=f"vllm: pipeline stages {_default(VllmOptions, 'pipeline_parallel_size')}.",
    ),
    data_parallel_size: int = typer.Option(
        None,
        "--data-parallel-size",
        help=f"vllm: model copies {_default(VllmOptions, 'data_parallel_size')}.",
    ),
    vllm_args: list[str] = typer.Option(
        [], "--vllm-arg", help="vllm: another vllm.LLM argument, NAME=VALUE (JSON value), repeatable."
    ),
) -> None:
    """Run a model on a compiled benchmark; write results.json, predictions.jsonl, report.md."""
    from ..evaluate.backends import BackendOptions, SamplingConfig
    from ..evaluate.protocols import resolve_options, resolve_temperature
    from ..evaluate.report import pattern_warning
    from ..evaluate.requests import EvalRequest, Progress
    from ..evaluate.run import run_eval

    _library_logs(quiet, verbose)
    given = {  # only the options given: the backend refuses those it does not take (EV308)
        "tensor_parallel_size": tensor_parallel_size,
        "pipeline_parallel_size": pipeline_parallel_size,
        "data_parallel_size": data_parallel_size,
        "engine_args": _engine_args(vllm_args) or None,
        "base_url": base_url,
        "concurrency": concurrency,
        "max_attempts": max_attempts,
        "timeout": request_timeout,
        "top_logprobs": top_logprobs,
        "thinking_budget": thinking_budget,
    }
    try:
        temperature = resolve_temperature(protocol, temperature, thinking or bool(thinking_budget))
        options = resolve_options(
            protocol,
            setting=setting,
            shots=shots,
            scoring=scoring,
            task=task,
            seed=seed,
            chat=chat,
            prompt_file=prompt_file,
            answer_pattern=answer_pattern,
        )
    except DiagnosticError as error:
        raise fail(error, code=EXIT_INPUT) from None
    backend_options = BackendOptions(
        sampling=SamplingConfig(temperature=temperature, top_p=top_p, seed=seed if temperature > 0 else None),
        **{name: value for name, value in given.items() if value is not None},
    )
    request = EvalRequest(
        model=model,
        dataset=dataset,
        config=config,
        revision=revision,
        model_revision=model_revision,
        out=out,
        options=options,
        batch_size=batch_size,
        max_new_tokens=max_new_tokens,
        dtype=dtype,
        trust_remote_code=trust_remote_code,
        prefix_cache=prefix_cache,
        bootstrap=bootstrap,
        limit=limit,
        sample=sample,
        overwrite=overwrite,
        backend=backend,
        backend_options=backend_options,
        thinking=thinking or bool(thinking_budget),
        samples=samples,
    )
    try:
        result = run_eval(request, Progress() if quiet else _progress())
    except DiagnosticError as error:
        raise fail(error, code=EXIT_INPUT) from None
    except KeyboardInterrupt as stop:
        raise interrupted(stop) from None
    if result is not None:  # None: a process of a data-parallel run other than the main one
        for note in (result.results.prompt.shot_notes if result.results.prompt else None) or ():
            err_console.print(f"shots not drawn by the rule: {note}", markup=False)
        warning = pattern_warning(result.results)
        if warning:
            err_console.print(f"--answer-pattern: {warning.replace('`', '')}", markup=False)
        if result.warnings:
            print_diagnostics(list(result.warnings))
        _summary(result)


def _library_logs(quiet: bool, verbose: bool) -> None:
    """vLLM logs its start-up and engine steps at INFO, pages of it: keep its warnings (errors alone
    with -q, everything with -v). Read when vLLM is imported; a VLLM_LOGGING_LEVEL already set wins.
    With -q the Hugging Face libraries show no progress bars (loading weights, downloads) and log errors
    alone: their settings are read on import, and set directly where they are imported already."""
    import importlib
    import os
    import sys

    os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO" if verbose else "ERROR" if quiet else "WARNING")
    if not quiet:
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if "huggingface_hub" in sys.modules:  # its submodules load lazily: `.utils` may not be there yet
        importlib.import_module("huggingface_hub.utils").disable_progress_bars()
    if "transformers" in sys.modules:
        hf_logging = sys.modules["transformers"].utils.logging
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def _engine_args(pairs: list[str]) -> tuple[tuple[str, object], ...]:
    """``--vllm-arg NAME=VALUE`` pairs; a value is read as JSON (numbers, true, null) or else as text."""
    from ..diagnostics import Diagnostic
    from ..jsonl import DuplicateKey, loads

    parsed = []
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            error = DiagnosticError(
                [
                    Diagnostic(
                        "EV308",
                        f"--vllm-arg {pair!r} is not NAME=VALUE",
                        hint="e.g. --vllm-arg max_model_len=8192",
                    )
                ]
            )
            raise fail(error, code=EXIT_INPUT)
        try:
            parsed.append((name, loads(value)))
        except DuplicateKey as duplicate:  # which of the two values vllm would take is a guess
            problem = Diagnostic("EV308", f"--vllm-arg {name}: {duplicate}", hint="give each key once")
            raise fail(DiagnosticError([problem]), code=EXIT_INPUT) from None
        except ValueError:
            parsed.append((name, value))
    return tuple(parsed)


@app.command("score")
def score_command(
    predictions: Path = typer.Argument(
        ...,
        help="predictions.jsonl of `jbcompile eval`, a release's rows with a prediction column, or a "
        "harness's log.",
    ),
    dataset: str = typer.Option(
        None, "--dataset", "-d", help="Build folder or Hub id to join rows by example_id."
    ),
    config: str = typer.Option("lite", "--config", help="Dataset config when --dataset is given."),
    revision: str = typer.Option(None, "--revision", help="Dataset revision when --dataset is a Hub id."),
    prediction_field: str = typer.Option(
        None,
        "--prediction-field",
        help="Column with the predicted option index, label or option text (rows of a release's format).",
    ),
    task: str = typer.Option(
        None, "--task", help=f"Task, for files that do not say (default qa): {_KIND_HELP['tasks']}."
    ),
    kind: str = typer.Option(
        None,
        "--kind",
        help=f"The benchmark kind of the predictions ({_KIND_HELP['kinds']}); default: told by the file.",
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output folder. Default: runs/score-<file name without .jsonl>/."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace another run in --out (another file's scores, an eval run)."
    ),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% intervals."),
    protocol: str = typer.Option(
        None,
        "--protocol",
        help=f"{_KIND_HELP['protocols']}: open the report with that paper's table (and read replies as "
        "the paper does).",
    ),
    setting: str = typer.Option(
        None,
        "--setting",
        help="The prompt setting a column of replies was asked with, so that they are read as `eval` "
        f"reads that setting's (default: the kind's first): {_KIND_HELP['settings']}.",
    ),
    answer_pattern: str = typer.Option(
        None,
        "--answer-pattern",
        help="Where a reply's answer is, as `eval --answer-pattern` said: read after the last match of "
        "this regular expression (its first group, if it has one).",
    ),
    model: str = typer.Option(
        None,
        "--model",
        "-m",
        help="The model that wrote the predictions, as the report and `compare` name it (runs of two "
        "models are then told apart).",
    ),
) -> None:
    """Compute the same metrics from an existing predictions file, e.g. one written by another harness."""
    from ..evaluate.requests import ScoreRequest
    from ..evaluate.score import run_score

    request = ScoreRequest(
        predictions=predictions,
        dataset=dataset,
        config=config,
        revision=revision,
        prediction_field=prediction_field,
        task=task,
        kind=kind,
        out=out,
        bootstrap=bootstrap,
        seed=seed,
        protocol=protocol,
        setting=setting,
        answer_pattern=answer_pattern,
        overwrite=overwrite,
        model=model,
    )
    try:
        result = run_score(request)
    except DiagnosticError as error:
        raise fail(error, code=EXIT_INPUT) from None
    except KeyboardInterrupt as stop:
        raise interrupted(stop) from None
    ambiguous = result.results.ambiguous_rows or []
    if ambiguous:
        err_console.print(
            f"{len(ambiguous)} row(s): the stereotyped option could not be derived; they are listed in "
            "results.json and report.md and left out of the bias scores."
        )
    if result.warnings:
        print_diagnostics(list(result.warnings))
    _summary(result)


def _no_runs() -> Diagnostic:
    from ..evaluate.compare.table import no_runs

    return no_runs()


when_missing("compare", "runs", _no_runs)  # EV214, as compare() itself says it, not CL012


@app.command("compare")
def compare_command(
    runs: list[Path] = typer.Argument(..., help="Run folders of `jbcompile eval` (or `score`), any kind."),
    out: Path = typer.Option(Path("runs/compare"), "--out", "-o", help="Where the comparison is written."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Resamples of the paired bootstrap."),
    seed: int = typer.Option(0, "--seed", help="Seed of the paired bootstrap and of permutation tests."),
) -> None:
    """Runs side by side (markdown, CSV, chart) with paired tests on shared rows; refuses runs on other
    data or under another protocol."""
    from ..evaluate.compare import compare, read_run, write_comparison
    from ..evaluate.compare.write import check_compare_out
    from ..evaluate.requests import check_common_options
    from ..outputs import refuse

    try:  # before the runs are read and the bootstrap run; --out judged again once it is held
        refuse(check_common_options(bootstrap, seed) + check_compare_out(out, runs))
        written = write_comparison(out, compare([read_run(run) for run in runs], bootstrap, seed))
    except DiagnosticError as error:
        raise fail(error, code=EXIT_INPUT) from None
    out_console.print("wrote " + ", ".join(shown_name(str(path)) for path in written), markup=False)
    _charts_note()
