"""`jbcompile export lm-eval|inspect`: a build as tasks of lm-evaluation-harness or inspect."""

from __future__ import annotations

from pathlib import Path

import typer

from ..diagnostics import DiagnosticError
from ..text import shown_name
from .app import app, err_console, fail, out_console

export_app = typer.Typer(
    help="Write a build as tasks of another harness (lm-evaluation-harness, inspect), with jbcompile's "
    "metrics (docs/harnesses.md).",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(export_app, name="export")

BUILD_HELP = "The build folder (what `jbcompile build` wrote)."
REPO_HELP = "The Hub dataset repository the tasks read. Default: the build's (hub_repo in dataset.yaml)."
REVISION_HELP = "The revision the tasks pin. Default: the release tag v<version> of the build."
LOCAL_HELP = "Read the rows from the build folder's own files (an unpublished build, tests) instead."


OVERWRITE_HELP = "Replace an earlier export of another dataset or for another harness in --out."


def _export(
    harness: str,
    build: Path,
    out: Path,
    repo: str | None,
    revision: str | None,
    local: bool,
    overwrite: bool,
) -> None:
    from ..export import export_build, inspect_task, lm_eval

    writers = {"lm-eval": lm_eval.export_files, "inspect": inspect_task.export_files}
    try:
        found = export_build(
            harness,
            writers[harness],
            build,
            out,
            repo=repo,
            revision=revision,
            local=local,
            overwrite=overwrite,
        )
    except DiagnosticError as error:
        raise fail(error) from None
    for name, kind in found.skipped:
        err_console.print(
            f"note: config {shown_name(name)} ({kind}) is left out: {harness} cannot run it", markup=False
        )
    configs = ", ".join(config.name for config in found.configs)
    out_console.print(
        f"wrote {shown_name(str(out))}: {harness} tasks of {shown_name(found.dataset)} "
        f"v{shown_name(found.version)} ({shown_name(configs)}), rows from "
        f"{shown_name(found.source.described)}",
        markup=False,
    )


@export_app.command("lm-eval")
def export_lm_eval(
    build: Path = typer.Argument(..., help=BUILD_HELP, metavar="BUILD"),
    out: Path = typer.Option(..., "--out", "-o", help="The task folder to (re)write."),
    repo: str = typer.Option(None, "--repo", help=REPO_HELP),
    revision: str = typer.Option(None, "--revision", help=REVISION_HELP),
    local: bool = typer.Option(False, "--local", help=LOCAL_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """A task folder for `lm_eval --include_path DIR --tasks NAME`: per config and prompt setting, a
    multiple_choice task and a generate_until variant (`_gen`), a group, and jbcompile's metrics."""
    _export("lm-eval", build, out, repo, revision, local, overwrite)


@export_app.command("inspect")
def export_inspect(
    build: Path = typer.Argument(..., help=BUILD_HELP, metavar="BUILD"),
    out: Path = typer.Option(..., "--out", "-o", help="The folder to (re)write."),
    repo: str = typer.Option(None, "--repo", help=REPO_HELP),
    revision: str = typer.Option(None, "--revision", help=REVISION_HELP),
    local: bool = typer.Option(False, "--local", help=LOCAL_HELP),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_HELP),
) -> None:
    """An inspect task module for `inspect eval DIR/FILE.py@TASK --model MODEL`: a task per config, the
    multiple_choice() solver, and jbcompile's metrics."""
    _export("inspect", build, out, repo, revision, local, overwrite)
