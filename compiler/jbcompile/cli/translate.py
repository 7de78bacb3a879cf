"""`jbcompile translate`: machine-translate the English sources into Japanese with DeepL."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import typer

from ..diagnostics import Diagnostic, DiagnosticError
from ..outputs import claim
from ..reading import SOURCE, is_present
from .app import EXIT_INPUT, announce_sources, app, err_console, fail, out_console, print_diagnostics


@app.command()
def translate(
    paths: list[Path] = typer.Argument(
        None, help="Source files or folders to translate. Default: every file of the sources folder."
    ),
    sources: Path = typer.Option(
        None,
        "--sources",
        "-s",
        help="The sources folder (holds dataset.yaml and translations/). Default: the benchmark of the "
        "working folder (./sources, or the nearest folder up with dataset.yaml); never the bundled one.",
    ),
    only_missing: bool = typer.Option(
        False,
        "--only-missing",
        help="Translate only texts without Japanese; leave machine texts as they are.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would be billed (characters and texts); call nothing."
    ),
    server_url: str = typer.Option(
        None, "--server-url", envvar="DEEPL_SERVER_URL", help="DeepL server URL (default: from the key)."
    ),
    formality: str = typer.Option(None, "--formality", help="DeepL formality: more, less, prefer_more …"),
    max_retries: int = typer.Option(
        5, "--max-retries", min=0, help="Retries (with backoff) on 429, 5xx and network errors."
    ),
    diagnostics_format: str = typer.Option("text", "--diagnostics", help="text, json or github."),
) -> None:
    """Translate English template texts and vocab into Japanese (status: machine) with DeepL.

    The key comes from DEEPL_AUTH_KEY. Results go into the sources and into
    translations/memory.yaml, so a re-run bills nothing already done; reviewed texts are never touched.
    """
    from ..paths import local_sources
    from ..translate.pipeline import Settings

    choice = local_sources(sources)  # never the bundled copy: translate writes into the sources
    root = choice.root if choice is not None else Path("sources")
    if choice is not None:
        announce_sources(choice, "translating")
    try:
        present = is_present(root / "dataset.yaml", SOURCE)
    except DiagnosticError as error:  # a folder or a FIFO there: F002, not "no dataset.yaml"
        raise fail(error) from None
    if not present:
        raise fail(
            DiagnosticError(
                [
                    Diagnostic(
                        code="TR014",
                        message=f"no dataset.yaml in {root}"
                        if choice is not None
                        else "no dataset.yaml in this folder or above it (translate never writes into "
                        "the benchmark bundled with jbcompile)",
                        path=str(root),
                        hint="run in the folder that holds sources/, or pass --sources DIR",
                    )
                ]
            ),
            diagnostics_format,
        )
    settings = Settings(formality=formality, only_missing=only_missing)
    with ExitStack() as held:
        if not dry_run:  # the sources are held from before they are read until the last text is in
            held.enter_context(claim(root, "translate"))
        _translate(
            root, paths or [], settings, dry_run, server_url, formality, max_retries, diagnostics_format
        )


def _translate(
    root: Path,
    paths: list[Path],
    settings,
    dry_run: bool,
    server_url: str | None,
    formality: str | None,
    max_retries: int,
    diagnostics_format: str,
) -> None:
    from ..translate.runner import prepare, run

    try:
        prepared = prepare(root, paths, settings)
    except DiagnosticError as error:
        raise fail(error, diagnostics_format) from None
    plan = prepared.plan
    from_memory = len(plan.planned) - len(plan.to_bill)
    if dry_run:
        _print_dry_run(prepared)
        return
    if not plan.planned:
        err_console.print(f"nothing to translate ({len(plan.skipped)} texts kept as they are)")
        return
    auth_key = os.environ.get("DEEPL_AUTH_KEY", "").strip()
    if plan.to_bill and not auth_key:
        raise fail(
            DiagnosticError(
                [
                    Diagnostic(
                        code="TR000",
                        message="DEEPL_AUTH_KEY is not set",
                        hint="export DEEPL_AUTH_KEY=<your DeepL API key>; --dry-run shows the cost first",
                    )
                ]
            ),
            diagnostics_format,
        )
    from ..translate.client import key_problem

    malformed = key_problem(auth_key) if plan.to_bill else None
    if malformed is not None:  # before any request: a key that cannot be sent is not a network failure
        raise fail(DiagnosticError([malformed]), diagnostics_format)

    def factory():
        from ..translate.client import DeepLTranslator

        return DeepLTranslator(
            auth_key, server_url=server_url or None, formality=formality, max_retries=max_retries
        )

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]translating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        task = progress.add_task("translating", total=len(plan.to_bill))
        result = run(prepared, factory, progress=lambda n: progress.advance(task, n))
    print_diagnostics(result.diagnostics, diagnostics_format)
    files = len({unit.path for unit, _ in result.written})
    err_console.print(
        f"translated {result.translated} text(s) with DeepL "
        f"({result.billed_characters:,} billed characters), "
        f"{from_memory} from the memory; wrote {len(result.written)} text(s) into {files} file(s), "
        f"{result.unchanged} unchanged, {len(plan.skipped)} kept as they are"
    )
    if result.stopped is not None:
        print_diagnostics([result.stopped], diagnostics_format)
        left = len(plan.to_bill) - result.translated
        err_console.print(
            f"[bold red]stopped[/]; {result.translated} text(s) finished before the stop are saved. "
            f"Re-run the same command to translate the {left} left (nothing is billed twice)."
        )
        raise typer.Exit(EXIT_INPUT)


def _print_dry_run(prepared) -> None:
    plan = prepared.plan
    for item in plan.to_bill:
        unit = item.unit
        out_console.print(
            f"{unit.where()}: {unit.key_label()} ({len(item.protected)} chars): {unit.en}",
            markup=False,
            soft_wrap=True,
        )
    reasons: dict[str, int] = {}
    for _, reason in plan.skipped:
        reasons[reason] = reasons.get(reason, 0) + 1
    kept = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) or "none"
    out_console.print(
        f"dry run: {len(plan.to_bill)} text(s), {plan.billed_characters:,} characters would be billed; "
        f"{plan.remembered} answered by the memory, "
        f"{len(plan.planned) - len(plan.to_bill) - plan.remembered} repeating a text billed once; "
        f"kept as they are: {kept}",
        markup=False,
        soft_wrap=True,
    )
