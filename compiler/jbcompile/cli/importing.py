"""`jbcompile import bbq-templates|bbq-jsonl|jubaku-jsonl|sobaco-json`: bring released data in as
editable sources."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ..diagnostics import DiagnosticError, Severity
from ..fsio import write_atomic
from .app import EXIT_FINDINGS, app, err_console, fail, out_console, print_diagnostics

import_app = typer.Typer(
    help="Import BBQ-format templates or data, the JUBAKU-v2 release or SOBACO's templates as YAML "
    "sources (English texts go into `en`).",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")

OUT_HELP = "The sources folder to write (must be new or empty, unless --force)."
KEEP_GOING_HELP = "Exit 0 even when some input could not be imported (the report lists it)."


# The options every import command shares, declared once.
OutOption = Annotated[Path, typer.Option("--out", "-o", help=OUT_HELP)]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace --out if it exists.")]
ReportOption = Annotated[
    Path | None, typer.Option("--report", help="Also write the report as JSON to this file.")
]
StrictOption = Annotated[bool, typer.Option("--strict", help="Also exit 1 on any error finding.")]
KeepGoingOption = Annotated[bool, typer.Option("--keep-going", help=KEEP_GOING_HELP)]
VerboseOption = Annotated[bool, typer.Option("--verbose", "-v", help="Also print the informational notes.")]
DiagnosticsOption = Annotated[str, typer.Option("--diagnostics", help="text, json or github.")]


def _import(
    out: Path,
    force: bool,
    diagnostics_format: str,
    read: Callable[[], tuple[Any, Any, Any]],
    verify: Callable[[Any, Any, Any], None] | None = None,
    inputs: Sequence[Sequence[Path]] = (),
    report_path: Path | None = None,
):
    """The steps every import shares: refuse an --out it may not replace, an input given twice or a
    --report it cannot write (before reading any input), read the input into a draft, write it
    atomically, then check the written sources against the input (``verify(draft, imported, report)``).
    Returns the report; a diagnostic ends the command (before the write: nothing is written)."""
    from ..importers import write_sources
    from ..importers.writer import check_inputs, check_report_path, check_target

    try:
        for group in inputs:  # a file may be both --names-from and --compare, but not one twice
            check_inputs(group)
        check_target(out, force, [path for group in inputs for path in group])
        check_report_path(report_path)
        draft, report, imported = read()
        write_sources(draft, out, report, force=force)
        if verify is not None:
            verify(draft, imported, report)
    except DiagnosticError as error:
        raise fail(error, diagnostics_format) from None
    return report


def _finish(
    report,
    out: Path,
    report_path: Path | None,
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
    out_console.print(table)
    if report_path is not None:
        write_atomic(report_path, json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
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


@import_app.command("bbq-templates")
def bbq_templates(
    folder: Path = typer.Argument(
        ..., help="BBQ's templates folder ('new_templates - <Category>.csv', vocabulary.csv)."
    ),
    out: OutOption = Path("sources"),
    categories: list[str] = typer.Option(None, "--categories", "-c", help="Import only these categories."),
    compare: list[Path] = typer.Option(
        None,
        "--compare",
        help="Released BBQ JSONL files: build the imported sources in memory and report, per category, "
        "how many of their rows come back (repeat for several files).",
    ),
    names_from: list[Path] = typer.Option(
        None,
        "--names-from",
        help="Released BBQ JSONL files: the proper-name templates of Race_ethnicity, Race_x_SES and "
        "Race_x_gender take the full names their released rows use, instead of seeded draws (repeat for "
        "several files).",
    ),
    force: ForceOption = False,
    report_path: ReportOption = None,
    strict: StrictOption = False,
    keep_going: KeepGoingOption = False,
    verbose: VerboseOption = False,
    diagnostics_format: DiagnosticsOption = "text",
) -> None:
    """Import BBQ template CSVs as English-source YAML templates and vocab (origin: translated)."""
    from ..designs.bbq.importers.names import read_released_rows
    from ..designs.bbq.importers.templates import import_bbq_templates

    def read():  # the --compare rows before anything is written (a bad line stops the import); they
        # are what the check after the write compares against
        released = read_released_rows(compare) if compare else []
        return (*import_bbq_templates(folder, categories or None, names_from or ()), released)

    report = _import(
        out,
        force,
        diagnostics_format,
        read,
        (lambda _draft, released, report: _compare_release(out, released, report)) if compare else None,
        inputs=[[folder], compare or [], names_from or []],
        report_path=report_path,
    )
    _finish(
        report,
        out,
        report_path,
        diagnostics_format,
        strict,
        verbose,
        "template rows imported",
        keep_going,
        errors_lose=True,  # an error here is a template or a file left out
    )


def _compare_release(sources: Path, rows: list, report) -> None:
    """Per category: the released rows the imported sources reproduce (with a progress bar)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..designs.bbq.importers.roundtrip import release_coverage, report_release_coverage

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err_console
    ) as progress:
        task = progress.add_task("expanding templates to compare", total=None)
        coverage, missed = release_coverage(
            sources, "en", rows, lambda done, total: progress.update(task, completed=done, total=total)
        )
    report_release_coverage(report, coverage, missed)


def _print_release(release: dict[str, dict]) -> None:
    """The released rows reproduced, per category."""
    from rich.table import Table

    table = Table(title="released rows reproduced, per category")
    for column in ("category", "rows", "reproduced", "rate"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, entry in release.items():
        rate = _percent(entry["rate"], 2) if entry["rate"] is not None else "-"
        table.add_row(name, str(entry["rows"]), str(entry["reproduced"]), rate)
    out_console.print(table)


@import_app.command("bbq-jsonl")
def bbq_jsonl(
    files: list[Path] = typer.Argument(..., help="BBQ-format JSONL files (BBQ or JBBQ releases)."),
    out: OutOption = Path("sources"),
    lang: str = typer.Option("auto", "--lang", help="Language of the data: en, ja, or auto (detect)."),
    force: ForceOption = False,
    report_path: ReportOption = None,
    strict: StrictOption = False,
    keep_going: KeepGoingOption = False,
    verbose: VerboseOption = False,
    diagnostics_format: DiagnosticsOption = "text",
) -> None:
    """Recover editable templates from released BBQ-format rows; check that they reproduce every row."""
    from ..designs.bbq.importers.jsonl import import_bbq_jsonl
    from ..designs.bbq.importers.roundtrip import verify_round_trip

    report = _import(
        out,
        force,
        diagnostics_format,
        lambda: import_bbq_jsonl(files, lang),
        lambda draft, rows, report: verify_round_trip(out, draft.lang, rows, report),
        inputs=[files],
        report_path=report_path,
    )
    _finish(report, out, report_path, diagnostics_format, strict, verbose, "rows reproduced", keep_going)


@import_app.command("jubaku-jsonl")
def jubaku_jsonl(
    files: list[Path] = typer.Argument(..., help="The JUBAKU-v2 release (jubaku_ver2.jsonl)."),
    out: OutOption = Path("sources"),
    force: ForceOption = False,
    report_path: ReportOption = None,
    strict: StrictOption = False,
    keep_going: KeepGoingOption = False,
    verbose: VerboseOption = False,
    diagnostics_format: DiagnosticsOption = "text",
) -> None:
    """Import JUBAKU-v2 rows as jubaku cases carrying the release's own prompt; check the round trip."""
    from ..designs.jubaku.importer import import_jubaku_jsonl, verify_round_trip

    report = _import(
        out,
        force,
        diagnostics_format,
        lambda: import_jubaku_jsonl(files),
        lambda _draft, imported, report: verify_round_trip(out, imported, report),
        inputs=[files],
        report_path=report_path,
    )
    _finish(report, out, report_path, diagnostics_format, strict, verbose, "rows reproduced", keep_going)


@import_app.command("sobaco-json")
def sobaco_json(
    file: Path = typer.Argument(..., help="SOBACO's template set: a JSON list of problems."),
    out: OutOption = Path("sources"),
    names: list[str] = typer.Option(
        None, "--name", help="A family name filling {name1}/{name2} (repeat it); default: the paper's three."
    ),
    unknown: list[str] = typer.Option(
        None, "--unknown", help="A wording of the unknown option (repeat it); default: the paper's five."
    ),
    force: ForceOption = False,
    report_path: ReportOption = None,
    strict: StrictOption = False,
    keep_going: KeepGoingOption = False,
    verbose: VerboseOption = False,
    diagnostics_format: DiagnosticsOption = "text",
) -> None:
    """Import SOBACO's problems as sobaco pair templates; check that the build gives SOBACO's rows."""
    from ..designs.sobaco.importer import PAPER_NAMES, PAPER_UNKNOWN, import_sobaco_json, verify_round_trip

    names = list(names or PAPER_NAMES)
    report = _import(
        out,
        force,
        diagnostics_format,
        lambda: import_sobaco_json(file, names, list(unknown or PAPER_UNKNOWN)),
        lambda _draft, imported, report: verify_round_trip(out, imported, names, report),
        inputs=[[file]],
        report_path=report_path,
    )
    _finish(report, out, report_path, diagnostics_format, strict, verbose, "rows reproduced", keep_going)


def _percent(share: float, decimals: int = 1) -> str:
    """A share as a percentage rounded down: 58,468 of 58,492 rows is 99.9%, never 100.0%."""
    scale = 10 ** (decimals + 2)
    return f"{math.floor(share * scale + 1e-9) / scale:.{decimals}%}"  # 1e-9: 0.29 * 100 is 28.999…
