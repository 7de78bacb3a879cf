"""`jbcompile build`, `stats` and `schema`."""

from __future__ import annotations

import importlib.abc
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from ..diagnostics import DiagnosticError
from .app import EXIT_INPUT, app, default_sources, err_console, fail, out_console, print_diagnostics

SOURCES_HELP = "The sources folder (holds dataset.yaml). Default: ./sources, else the bundled benchmark."


def _compile(sources: Path | None, lang: str, release: bool, checks: bool = True, quiet: bool = False):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..build import compile_project
    from ..project import load_project

    project = load_project(sources or default_sources(), lang=lang)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=quiet,
    ) as progress:
        task = progress.add_task("expanding templates", total=len(project.templates))
        return compile_project(
            project,
            checks=checks,
            release=release,
            progress=lambda _stage, done, total: progress.update(task, completed=done, total=total),
        )


class _NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("`jbcompile build` does not use pandas")
        return None


@contextmanager
def _without_pandas() -> Iterator[None]:
    """Keep pyarrow from importing pandas in this short-lived process.

    pyarrow imports pandas (about 0.35 s) on its first conversion of a Python list, only to ask whether the
    list is a pandas object; a build never has one. This is for the `build` command's own process only:
    library callers (tests, `verify`) keep a normal pyarrow.
    """
    if "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@app.command()
def build(
    sources: Path = typer.Option(None, "--sources", "-s", help=SOURCES_HELP),
    out: Path = typer.Option(Path("build"), "--out", "-o", help="The build folder to (re)write."),
    format: str = typer.Option("parquet", "--format", help="parquet, or parquet,jsonl to add JSONL copies."),
    lang: str = typer.Option("ja", "--lang", help="ja (default), or en to compile the English sources."),
    release: bool = typer.Option(
        False, "--release", help="Stricter checks for a release (no unreviewed text)."
    ),
    cards: Path = typer.Option(None, "--cards", help="Card templates folder. Default: ./cards or bundled."),
    diagnostics_format: str = typer.Option("text", "--diagnostics", help="text, json or github."),
) -> None:
    """Compile the sources into a Hugging Face dataset folder (card, parquet data, manifest)."""
    from ..build import FORMATS, write_build

    formats = [f.strip() for f in format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or "parquet" not in formats:
        err_console.print(f"--format takes parquet or parquet,jsonl; got {format!r}")
        raise typer.Exit(EXIT_INPUT)
    try:
        compiled = _compile(sources, lang, release)
        print_diagnostics(compiled.diagnostics, diagnostics_format)
        with _without_pandas():
            manifest = write_build(compiled, out, formats=formats, cards_dir=cards)
    except DiagnosticError as error:
        raise fail(error, diagnostics_format) from None
    rows = ", ".join(f"{name} {n:,}" for name, n in manifest["rows"].items())
    err_console.print(
        f"[green]built[/] {manifest['dataset']} v{manifest['version']} → {out}  ({rows} rows; "
        f"{len(compiled.project.templates)} templates)"
    )


@app.command()
def stats(
    sources: Path = typer.Option(None, "--sources", "-s", help=SOURCES_HELP),
    lang: str = typer.Option("ja", "--lang", help="ja or en."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Rows and templates per category and config."""
    from rich.table import Table

    from ..emit.card import category_table

    try:
        compiled = _compile(sources, lang, release=False, checks=False, quiet=as_json)
    except DiagnosticError as error:
        raise fail(error) from None
    names, table = category_table(compiled)
    if as_json:
        print(json.dumps(table, ensure_ascii=False, indent=2))
        return
    view = Table(title=f"{compiled.project.dataset.pretty_name} v{compiled.project.dataset.version}")
    view.add_column("category")
    for name in names:
        view.add_column(f"{name} rows", justify="right")
        view.add_column(f"{name} templates", justify="right")
    for entry in table:
        view.add_row(entry["category"], *[str(entry[k]) for n in names for k in (n, f"{n}_templates")])
    view.add_row(
        "[bold]total",
        *[str(sum(e[k] for e in table)) for n in names for k in (n, f"{n}_templates")],
    )
    out_console.print(view)


@app.command()
def schema(
    file: str = typer.Argument(
        "all", help="dataset, vocab, template, pronouns, normalization, lexicon, glossary, memory, or all."
    ),
) -> None:
    """Print the JSON Schema of the source files (for editor validation and completion)."""
    from ..schema.jsonschema import SCHEMA_FILES, json_schema

    if file != "all" and file not in SCHEMA_FILES:
        err_console.print(f"unknown schema {file!r}; use one of: all, {', '.join(SCHEMA_FILES)}")
        raise typer.Exit(EXIT_INPUT)
    print(json.dumps(json_schema(file), ensure_ascii=False, indent=2))
