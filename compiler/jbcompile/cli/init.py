"""`jbcompile init`: start a new benchmark that builds and checks clean."""

from __future__ import annotations

from pathlib import Path

import typer

from ..diagnostics import DiagnosticError
from .app import app, check_choice, err_console, fail


@app.command()
def init(
    folder: Path = typer.Argument(
        Path("."), help="The benchmark's folder (new or empty); its sources go into FOLDER/sources."
    ),
    kind: str = typer.Option(
        None, "--kind", help="The design of the starter template (`jbcompile init --help` lists them)."
    ),
) -> None:
    """Write a new benchmark to start from: dataset.yaml with every required field, one template, its
    vocabulary and a changelog; it builds and checks clean. Never overwrites a file.

    Designs: see docs/designs.md; the source format: README.md.
    """
    from ..designs import DEFAULT_DESIGN
    from ..starter import init_benchmark, starter_designs

    try:
        designs = starter_designs()
    except DiagnosticError as error:  # a design plug-in that cannot be loaded (DS0xx)
        raise fail(error) from None
    chosen = check_choice("--kind", kind or DEFAULT_DESIGN, designs)
    try:
        written = init_benchmark(folder, chosen)
    except DiagnosticError as error:
        raise fail(error) from None
    sources = folder / "sources"
    err_console.print(
        f"created a {chosen} benchmark in {sources} ({len(written)} files: "
        + ", ".join(path.relative_to(sources).as_posix() for path in written)
        + ")",
        markup=False,
    )
    go = f"cd {folder} && " if folder != Path(".") else ""
    err_console.print(
        f"next: {go}jbcompile check && jbcompile build — then replace the TODO placeholders of "
        "dataset.yaml before `jbcompile publish`",
        markup=False,
    )
