"""`jbcompile import <format>`: bring released data in as editable sources.

One subcommand per importer a design registers (:func:`jbcompile.importers.all_importers`), its
argument and options built from what the importer declares, plus the options every import has. The
subcommands are built when `import` runs, so that no other command loads an importer.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import GenericAlias
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from ..diagnostics import DiagnosticError, Severity
from ..importers import Importer, Input, Option, Tick, all_importers
from ..text import shown_name
from .app import (
    EXIT_FINDINGS,
    Stamp,
    app,
    changed_since,
    err_console,
    fail,
    interrupted,
    print_diagnostics,
    print_table,
    stamps,
)

OUT_HELP = "The sources folder to write (must be new or empty, unless --force)."
KEEP_GOING_HELP = "Exit 0 even when some input could not be imported (the report lists it)."


def _parameter(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


# The options every import command has, after the importer's own (--out comes first).
_OUT = _parameter("out", Annotated[Path, typer.Option("--out", "-o", help=OUT_HELP)], Path("sources"))
_SHARED = (
    _parameter(
        "force",
        Annotated[
            bool,
            typer.Option("--force", help="Replace --out, and a --report file of the user's, if it exists."),
        ],
        False,
    ),
    _parameter(
        "report_path",
        Annotated[
            Path | None,
            typer.Option(
                "--report",
                help="Also write the report as JSON to this file (an existing file only if it is an "
                "import report, or with --force; never inside a run or build folder).",
            ),
        ],
        None,
    ),
    _parameter(
        "strict", Annotated[bool, typer.Option("--strict", help="Also exit 1 on any error finding.")], False
    ),
    _parameter("keep_going", Annotated[bool, typer.Option("--keep-going", help=KEEP_GOING_HELP)], False),
    _parameter(
        "verbose",
        Annotated[bool, typer.Option("--verbose", "-v", help="Also print the informational notes.")],
        False,
    ),
    _parameter(
        "diagnostics_format",
        Annotated[str, typer.Option("--diagnostics", help="text, json or github.")],
        "text",
    ),
)


def _input_parameter(declared: Input) -> inspect.Parameter:
    kind = list[Path] if declared.many else Path
    return _parameter(declared.name, Annotated[kind, typer.Argument(help=declared.help)])


def _option_parameter(declared: Option) -> inspect.Parameter:
    kind: Any
    if declared.many:  # list[str], list[Path]: repeat the option
        kind, default = GenericAlias(list, (declared.type,)), None
    else:
        kind, default = (
            declared.type if declared.default is not None else declared.type | None,
            declared.default,
        )
    return _parameter(
        declared.name, Annotated[kind, typer.Option(*declared.flags, help=declared.help)], default
    )


def _command(importer: Importer) -> Callable[..., None]:
    """The typer command of one importer: its signature is built from the importer's declarations."""

    def command(**given: Any) -> None:
        _run(importer, given)

    parameters = [
        _input_parameter(importer.input),
        _OUT,
        *(_option_parameter(option) for option in importer.options),
        *_SHARED,
    ]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return command


class _ImportCommands(TyperGroup):
    """The subcommands of `jbcompile import`: one per registered importer, built when asked for."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [importer.name for importer in _importers()]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        importer = next((importer for importer in _importers() if importer.name == cmd_name), None)
        if importer is None:
            return None
        single = typer.Typer(add_completion=False)
        single.command(importer.name, help=importer.summary)(_command(importer))
        return typer.main.get_command(single)


def _importers() -> list[Importer]:
    try:
        return all_importers()
    except DiagnosticError as error:  # a design plug-in whose importers are not usable
        raise fail(error) from None


import_app = typer.Typer(
    cls=_ImportCommands,
    help="Import released benchmark data or templates as YAML sources (English texts go into `en`); one "
    "command per release format.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


def _run(importer: Importer, given: dict[str, Any]) -> None:
    """Run one import with the command line's values, then report."""
    from ..importers.run import run_import

    value = given[importer.input.name]
    inputs = list(value) if importer.input.many else [value]
    options = {option.name: given[option.name] for option in importer.options}
    out, report_path, fmt = given["out"], given["report_path"], given["diagnostics_format"]
    places = [Path(out), *([Path(report_path)] if report_path else [])]
    before = {place: stamps(place) for place in places}
    try:
        report = run_import(
            importer,
            inputs,
            options,
            out,
            force=given["force"],
            report_path=report_path,
            progress=_progress_bar,
        )
    except DiagnosticError as error:
        raise fail(error, fmt) from None
    except KeyboardInterrupt as stop:  # the last line says what is in --out (and --report) now
        stop.kept = _kept_by_import(before)  # type: ignore[attr-defined]
        raise interrupted(stop) from None
    _finish(
        report,
        out,
        fmt,
        given["strict"],
        given["verbose"],
        importer.unit,
        given["keep_going"],
        importer.errors_lose,
    )


def _kept_by_import(before: dict[Path, dict[Path, Stamp]]) -> str:
    """What a stopped import left: --out is replaced whole by one rename (its staging is removed on a
    stop), so it holds either what it held or the new sources; the report is one atomic write."""
    changes = [
        f"{shown_name(str(place))} was written before the stop (it is whole)"
        if place.exists()
        else f"{shown_name(str(place))} was removed"
        for place, stamped in before.items()
        if changed_since(stamped, place)
    ]
    if changes:
        return "; ".join(changes)
    out, stamped = next(iter(before.items()))
    return "nothing was written" + (f"; {shown_name(str(out))} is as it was" if stamped else "")


@contextmanager
def _progress_bar(description: str) -> Iterator[Tick]:
    """A progress bar on stderr for a long step of an import (the round trip of a large release)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err_console
    ) as progress:
        task = progress.add_task(description, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def _finish(
    report,
    out: Path,
    diagnostics_format: str,
    strict: bool,
    verbose: bool,
    unit: str,
    keep_going: bool = False,
    errors_lose: bool = False,
) -> None:
    """Print the per-template report and the coverage; exit 1 when anything was dropped (an input row not
    reproduced, a template row not imported), unless --keep-going, and under --strict on any error."""
    from rich.table import Table

    shown = [d for d in report.diagnostics if verbose or d.severity is not Severity.INFO]
    print_diagnostics(shown, diagnostics_format)
    notes = len(report.diagnostics) - len(shown)
    table = Table(title="import report", show_lines=False)
    table.add_column("template", overflow="fold")
    table.add_column("upstream", overflow="fold")
    table.add_column("rows", justify="right")
    table.add_column("reproduced", justify="right")
    table.add_column("findings", justify="right")
    for entry in sorted(report.templates.values(), key=lambda r: r.template):
        coverage = f"{entry.reproduced}/{entry.rows}" if entry.rows else "-"
        problems = sum(1 for d in entry.findings if d.severity is not Severity.INFO)
        table.add_row(entry.template, entry.upstream or "", str(entry.rows or "-"), coverage, str(problems))
    print_table(table)
    errors = report.count(Severity.ERROR)
    warnings = report.count(Severity.WARNING)
    coverage = report.coverage
    summary = (
        f"coverage {_percent(coverage)} ({report.reproduced_rows}/{report.total_rows} {unit}); "
        if coverage is not None
        else ""
    )
    if report.release:
        _print_release(report.release)
    hidden = f", {notes} note(s) (--verbose shows them)" if notes else ""
    err_console.print(
        f"[green]wrote[/] {out} ({len(report.files_written)} files); {summary}"
        f"{errors} error(s), {warnings} warning(s){hidden}"
    )
    short = any(entry["reproduced"] < entry["rows"] for entry in report.release.values())  # --compare
    lost_here = (coverage is not None and coverage < 1.0) or (
        (errors_lose or coverage is None) and errors > 0
    )
    lost = lost_here or short
    if lost and not keep_going:
        what = "some input was not imported" if lost_here else "some released rows do not come back"
        err_console.print(f"[red]{what}[/] (the sources are written; --keep-going exits 0)")
        raise typer.Exit(EXIT_FINDINGS)
    if strict and errors:
        raise typer.Exit(EXIT_FINDINGS)


def _print_release(release: dict[str, dict]) -> None:
    """The released rows reproduced, per category."""
    from rich.table import Table

    table = Table(title="released rows reproduced, per category")
    for column in ("category", "rows", "reproduced", "rate"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, entry in release.items():
        rate = _percent(entry["rate"], 2) if entry["rate"] is not None else "-"
        table.add_row(name, str(entry["rows"]), str(entry["reproduced"]), rate)
    print_table(table)


def _percent(share: float, decimals: int = 1) -> str:
    """A share as a percentage rounded down: 58,468 of 58,492 rows is 99.9%, never 100.0%."""
    scale = 10 ** (decimals + 2)
    return f"{math.floor(share * scale + 1e-9) / scale:.{decimals}%}"  # 1e-9: 0.29 * 100 is 28.999…
