"""`jbcompile audit`: shortcut probes over a build, a release's files, or the sources."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from ..diagnostics import Diagnostic, DiagnosticError
from ..jsonl import dumps
from .app import (
    EXIT_FINDINGS,
    app,
    check_choice,
    err_console,
    fail,
    out_console,
    print_diagnostics,
    print_table,
    sources_for,
)

SOURCES_HELP = (
    "The sources folder: audited itself when no TARGET is given (compiled, nothing kept), else it gives "
    "the bars (dataset.yaml audit:) and the attribute markers (rules/attributes.yaml). "
    "Default: the benchmark of the working folder (./sources, or the nearest folder up with dataset.yaml), "
    "else the bundled benchmark."
)


@app.command()
def audit(
    targets: list[Path] = typer.Argument(
        None,
        help="A build folder, or a release's files in a format a design reads (the release formats "
        "`eval --dataset` reads, e.g. a paper's released JSONL). Default: the sources.",
        show_default=False,
    ),
    sources: Path = typer.Option(None, "--sources", "-s", help=SOURCES_HELP),
    configs: list[str] = typer.Option(None, "--config", "-c", help="Audit only this config (repeatable)."),
    fmt: str = typer.Option("text", "--format", help="text (tables) or json."),
) -> None:
    """Shortcut probes: how far simple rules and a context-free model get without the reasoning the
    benchmark tests, per probe and category with a 95% interval, beside chance. Exit 1 when a probe is
    above its bar (docs/audit.md)."""
    check_choice("--format", fmt, ("text", "json"))
    try:
        report, project = _audit(list(targets or []), sources, list(configs or []))
    except DiagnosticError as error:
        raise fail(error, "json" if fmt == "json" else "text") from None
    print_diagnostics(_unknown_probes(report, project))  # on stderr: --format json's stdout stays the record
    if fmt == "json":
        print(dumps(report.record(), indent=2))
    else:
        _print(report)
    if not report.passed:
        raise typer.Exit(EXIT_FINDINGS)


def _audit(targets: list[Path], sources: Path | None, configs: list[str]):
    from ..audit import audit_rows, probe_inputs, release_rows
    from ..audit.run import build_kinds, recorded_settings, verified_folder_rows
    from ..audit.sources import audit_sources
    from ..project import load_project
    from ..schema.dataset import AuditSettings

    project = load_project(sources_for(sources, "auditing").root) if sources or not targets else None
    if not targets:
        assert project is not None
        with err_console.status("compiling and auditing the sources"):
            report = audit_sources(project)
        return _only(report, configs, [r.config for r in report.results]), project
    settings = project.dataset.audit if project else None
    inputs = probe_inputs(project.root if project else None)
    if len(targets) == 1 and targets[0].is_dir():
        kinds = build_kinds(targets[0])
        _check_configs(configs, list(kinds), str(targets[0]))
        chosen = {name: kind for name, kind in kinds.items() if not configs or name in configs}
        rows = verified_folder_rows(targets[0], chosen)  # an altered build is refused, never audited
        settings = settings or recorded_settings(targets[0]) or AuditSettings()
    else:
        rows = release_rows(targets)
        _check_configs(configs, ["release"], ", ".join(map(str, targets)))
        settings = settings or AuditSettings()
    with err_console.status("auditing"):
        return audit_rows(rows, settings, inputs), project


def _unknown_probes(report, project) -> list[Diagnostic]:
    """AU002 for a probe that ``--sources``' dataset.yaml sets a bar for and no design of the audited rows
    has (a typo would leave the probe at the default bar without a word), as ``build`` says it."""
    from ..audit import probe_inputs
    from ..audit.report import unknown_probe_problems
    from ..audit.run import probe_names

    if project is None:
        return []
    known = probe_names({result.kind for result in report.results}, probe_inputs(project.root))
    return unknown_probe_problems(project.dataset.audit, known, project.dataset_doc)


def _check_configs(wanted: list[str], known: list[str], where: str) -> None:
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise DiagnosticError(
            [
                Diagnostic(
                    "AU022",
                    f"{where} has no config {', '.join(map(repr, unknown))}",
                    hint=f"use one of: {', '.join(known)}",
                )
            ]
        )


def _only(report, configs: list[str], known: list[str]):
    _check_configs(configs, list(dict.fromkeys(known)), "the sources")
    if not configs:
        return report
    return report.model_copy(update={"results": [r for r in report.results if r.config in configs]})


STATUS_STYLE = {"above": "bold red", "over, not significant": "yellow"}


def _print(report) -> None:
    from rich.table import Table
    from rich.text import Text

    from ..audit.report import STATUS_TEXT, percent

    for config in dict.fromkeys(result.config for result in report.results):
        table = Table(title=escape(f"shortcut audit of {config}"))
        for column in (
            "probe",
            "scope",
            "rows",
            "accuracy",
            "95% interval",
            "chance",
            "bar",
            "result",
            "rule",
            "worst templates",
        ):
            table.add_column(
                column, justify="right" if column in ("rows", "accuracy", "chance", "bar") else "left"
            )
        for result in (r for r in report.results if r.config == config):
            if result.overall is None:
                table.add_row(
                    Text(result.probe), "", "", "", "", "", "", Text(f"not run: {result.not_run}"), "", ""
                )
                continue
            scopes = [("all", result.overall), *result.categories.items()]
            for index, (name, scope) in enumerate(scopes):
                table.add_row(
                    Text(result.probe if index == 0 else ""),
                    Text(name),
                    f"{scope.rows:,}",
                    percent(scope.value),
                    f"{percent(scope.low)}–{percent(scope.high)}",
                    percent(scope.chance),
                    "off" if scope.threshold is None else percent(scope.threshold),
                    Text(STATUS_TEXT[scope.status], style=STATUS_STYLE.get(scope.status, "")),
                    Text(scope.rule),
                    Text(", ".join(f"{t.template} {percent(t.value)} ({t.rows})" for t in scope.worst[:3])),
                    end_section=index == len(scopes) - 1,
                )
        print_table(table)
    above = sum(1 for result in report.results if result.exceeded())
    ran = sum(1 for result in report.results if result.overall is not None)
    if above:
        out_console.print(f"[bold red]{above} probe(s) above their bar[/] (see docs/audit.md)")
    elif not ran:  # a design without probes, or none that could run: nothing was tested, nothing passed
        out_console.print("[yellow]no probe ran[/]: the rows' design has none, or none could run (see above)")
    else:
        out_console.print(f"[green]every probe within its bar[/] ({ran} ran)")
    leaning = [
        f"{result.config}/{result.probe} {'all' if name == 'overall' else name}"
        for result in report.results
        for name, _ in result.scopes("over, not significant")
    ]
    if leaning:
        out_console.print(
            f"[yellow]over the bar on the point figure, but not significantly (the interval reaches below "
            f"it)[/]: {escape(', '.join(leaning))}"
        )
