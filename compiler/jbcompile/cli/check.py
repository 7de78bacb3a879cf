"""`jbcompile check`: lint the sources with the MeCab-based rules; `--fix` rewrites what can be fixed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..diagnostics import Diagnostic, DiagnosticError, Severity, summarize
from ..text import shown_name
from .app import (
    EXIT_OK,
    Stamp,
    announce_sources,
    app,
    changed_since,
    check_choice,
    err_console,
    exit_code,
    fail,
    interrupted,
    option_error,
    print_diagnostics,
    sources_for,
    stamps,
)

if TYPE_CHECKING:
    from ..paths import SourcesChoice

FORMATS = ("text", "json", "github")


def _summary(diagnostics: Sequence[Diagnostic]) -> None:
    from ..checks import get_rule

    if not diagnostics:
        err_console.print("[green]no findings[/]")
        return
    for code, counts in summarize(diagnostics).items():
        rule = get_rule(code)
        name = rule.name if rule is not None else ""
        parts = ", ".join(f"{n} {severity}" for severity, n in sorted(counts.items()))
        err_console.print(f"  {code} {name}: {parts}", markup=False)
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    others = len(diagnostics) - errors
    colour = "red" if errors else "yellow"
    err_console.print(f"[bold {colour}]{errors} error(s)[/], {others} warning(s)/note(s)")


def _explain(code: str) -> None:
    """A lint rule's documentation; for any other code its area, title and what its doc section says."""
    from ..checks import get_rule
    from ..checks.docs import explain
    from ..codes import explain as explain_code
    from ..codes import get_code, similar_codes

    rule = get_rule(code)
    if rule is not None:
        print(explain(rule))
        return
    declared = get_code(code)
    if declared is not None:
        print(explain_code(declared))
        return
    close = similar_codes(code)
    hint = "README.md's table of codes lists every area, `jbcompile check --list-rules` the lint rules"
    if close:
        hint = f"did you mean {' or '.join(close)}? ({hint})"
    raise option_error("CL001", f"no diagnostic has the code {code!r}", hint=hint)


def _sources_to_fix(given: Path | None) -> SourcesChoice:
    """--fix rewrites files: never the benchmark bundled with the package (site-packages, or the
    repository of an editable install) unless the user named that folder or works in it."""
    from ..paths import installed_bundle, local_sources

    choice = local_sources(given)
    bundle = installed_bundle()
    if choice is None:
        problem = (
            "no dataset.yaml in this folder or above it, and --fix never rewrites the benchmark bundled "
            "with jbcompile"
        )
    elif bundle is not None and choice.root.resolve().is_relative_to(bundle.resolve()):
        problem = f"{choice.root} is the benchmark installed with jbcompile; --fix never rewrites it"
    else:
        announce_sources(choice, "fixing")
        return choice
    raise option_error(
        "CL004", problem, hint="copy the sources into your working folder, or pass --sources YOUR_FOLDER"
    )


def _kept_by_fix(root: Path, before: dict[Path, Stamp]) -> str:
    """What a stopped `check --fix` left: its fixed files are committed together (every one, or none:
    jbcompile.outputs), so the sources are as they were, or hold every fix."""
    changed = [path for path in changed_since(before, root) if path.is_file()]
    if not changed:
        return f"nothing was written; {shown_name(str(root))} is as it was"
    names = ", ".join(shown_name(str(path)) for path in changed)
    return f"the fixes were written before the stop ({len(changed)} file(s), all of them: {names})"


def _held_back_note(count: int) -> None:
    """Say why --fix changed nothing in sources that hold a release's own text, and what would allow it."""
    err_console.print(
        f"--fix changed nothing: dataset.yaml sets keep_as_written: true (the texts are a release's own, "
        f"as `jbcompile import` wrote them), so the {count} fixable finding(s) are only reported; "
        "set keep_as_written: false in dataset.yaml to let --fix rewrite them",
        markup=False,
    )


@app.command()
def check(
    sources: Path = typer.Option(
        None,
        "--sources",
        "-s",
        help="The sources folder (holds dataset.yaml). Default: the benchmark of the working folder "
        "(./sources, or the nearest folder up with dataset.yaml), else bundled (never with --fix).",
    ),
    fix: bool = typer.Option(False, "--fix", help="Rewrite the YAML in place for every fixable finding."),
    fmt: str = typer.Option("text", "--format", help="text | json | github (annotations)."),
    release: bool = typer.Option(
        False, "--release", help="Release strictness: unreviewed machine text is an error."
    ),
    explain: str = typer.Option(
        None,
        "--explain",
        metavar="CODE",
        help="Explain a code: a lint rule's documentation, or any other code's area and doc.",
    ),
    list_rules: bool = typer.Option(
        False, "--list-rules", help="List every rule with its code and severity."
    ),
) -> None:
    """Check the sources: pronouns (かれら), names, demonstratives, questions, fillers, spelling, options …

    Exit code 0 without errors, 1 with errors (warnings do not fail), 2 when the sources cannot be read.
    """
    if explain:
        try:
            _explain(explain)
        except DiagnosticError as error:  # a design plug-in that cannot be loaded (DS0xx)
            raise fail(error) from None
        raise typer.Exit(EXIT_OK)
    if list_rules:
        from ..checks import all_rules

        for rule in all_rules():
            fixable = " (fixable)" if rule.fixable else ""
            print(f"{rule.code}  {rule.name:<24} {rule.severity:<8} {rule.description()}{fixable}")
        raise typer.Exit(EXIT_OK)
    check_choice("--format", fmt, FORMATS)

    from ..checks import fix_sources, run_checks
    from ..project import load_project

    root = _sources_to_fix(sources).root if fix else sources_for(sources, "checking").root
    before = stamps(root) if fix else {}
    try:
        if fix:
            report = fix_sources(root, release=release)
            diagnostics = report.diagnostics
            if report.held_back:
                _held_back_note(report.held_back)
            elif fmt != "json":
                if report.converged:
                    err_console.print(
                        f"fixed {report.edits_applied} finding(s) in {len(report.changed_files)} file(s) "
                        f"({report.passes} pass(es))",
                        markup=False,
                    )
                else:
                    err_console.print("[bold red]--fix did not converge; nothing was changed[/]")
        else:
            project = load_project(root)
            diagnostics = [*project.notes, *run_checks(project, release=release)]
    except DiagnosticError as error:
        raise fail(error, fmt) from None
    except KeyboardInterrupt as stop:  # --fix: the last line says what is in the sources now
        if fix:
            stop.kept = _kept_by_fix(root, before)  # type: ignore[attr-defined]
        raise interrupted(stop) from None
    print_diagnostics(diagnostics, fmt)
    if fmt == "text":
        _summary(diagnostics)
    raise typer.Exit(exit_code(diagnostics))
