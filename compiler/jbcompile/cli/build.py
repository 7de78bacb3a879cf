"""`jbcompile build`, `stats` and `schema`."""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from ..diagnostics import DiagnosticError, Severity
from ..jsonl import dumps
from ..text import shown_name
from .app import (
    app,
    check_choice,
    err_console,
    fail,
    interrupted,
    option_error,
    print_diagnostics,
    print_table,
    sources_for,
)

if TYPE_CHECKING:
    from ..compiled import Compiled, ProgressCallback
    from ..project import Project

DIAGNOSTIC_FORMATS = ("text", "json", "github")

SOURCES_HELP = (
    "The sources folder (holds dataset.yaml). Default: the benchmark of the working folder (./sources, or "
    "the nearest folder up with dataset.yaml), else the bundled benchmark."
)


@contextmanager
def _progress(quiet: bool = False) -> Iterator[ProgressCallback]:
    """Bars for a build's long steps: templates expanded (and rows written meanwhile), data files hashed.

    They are drawn on a terminal only (rich draws nothing on a pipe or a CI log) and vanish at the end.
    """
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=quiet or not err_console.is_terminal,  # off a terminal rich would print a blank line
    ) as progress:
        expand = progress.add_task("expanding templates", total=None, count="")
        counts = {"expand": (0, 0), "write": (0, 0)}
        hashing: list[TaskID] = []

        def update(stage: str, done: int, total: int | None) -> None:
            if stage == "hash":
                if not hashing:
                    hashing.append(progress.add_task("hashing data files", total=total, count=""))
                count = f"{done / 1e6:,.0f}/{(total or 0) / 1e6:,.0f} MB"
                progress.update(hashing[0], completed=done, total=total, count=count)
                return
            counts[stage] = (done, total or 0)
            (templates, of), (rows, _) = counts["expand"], counts["write"]
            count = f"{templates}/{of} templates" + (f", {rows:,} rows written" if rows else "")
            progress.update(expand, completed=templates, total=of or None, count=count)

        yield update


def _compile(sources: Path | None, lang: str, quiet: bool = False):
    """Compile for `stats`: the build's invariants are verified, and only the counts kept (rows dropped)."""
    from ..build import compile_project
    from ..project import load_project

    project = load_project(sources_for(sources, "counting").root, lang=lang)
    with _progress(quiet) as progress:
        return compile_project(project, checks=False, progress=progress, sink=lambda _spec, _rows: None)


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
    out: Path = typer.Option(
        None,
        "--out",
        "-o",
        help="The build folder to (re)write. Default: build/ beside the sources found, else ./build.",
    ),
    format: str = typer.Option("parquet", "--format", help="parquet, or parquet,jsonl to add JSONL copies."),
    lang: str = typer.Option("ja", "--lang", help="ja (default), or en to compile the English sources."),
    release: bool = typer.Option(
        False, "--release", help="Stricter checks for a release (no unreviewed text)."
    ),
    cards: Path = typer.Option(None, "--cards", help="Card templates folder. Default: ./cards or bundled."),
    diagnostics_format: str = typer.Option("text", "--diagnostics", help="text, json or github."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Replace a build of another dataset in --out (B009); one of the same "
        "dataset is always rebuilt in place.",
    ),
) -> None:
    """Compile the sources into a Hugging Face dataset folder (card, parquet data, manifest)."""
    from ..build import FORMATS
    from ..paths import choose_sources
    from .app import announce_sources

    check_choice("--diagnostics", diagnostics_format, DIAGNOSTIC_FORMATS)
    formats = [f.strip() for f in format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or "parquet" not in formats:
        raise option_error(
            "CL001",
            f"--format takes parquet or parquet,jsonl; got {format!r}",
            "pass --format parquet, or --format parquet,jsonl for a JSON Lines copy beside it",
        )
    check_choice("--lang", lang, ("ja", "en"))
    check_cards(cards)
    choice = choose_sources(sources)
    out = out or choice.build_folder()
    announce_sources(choice, "building", into=out)
    before = _folder_identity(out)
    try:
        compiled, manifest = _build_into(out, choice.root, lang, formats, cards, release, overwrite)
        print_diagnostics(compiled.diagnostics, diagnostics_format)
    except DiagnosticError as error:
        # One report (one JSON document with --diagnostics json): the warnings, then why it stopped.
        raise fail(error, diagnostics_format) from None
    except KeyboardInterrupt as stop:  # the last line says what is in --out now
        stop.kept = _kept_by_build(out, before)  # type: ignore[attr-defined]
        raise interrupted(stop) from None
    rows = ", ".join(f"{name} {n:,}" for name, n in manifest["rows"].items())
    err_console.print(
        f"[green]built[/] {escape(manifest['dataset'])} v{escape(manifest['version'])} "
        f"→ {escape(shown_name(str(out)))}"
        f"  ({rows} rows; {len(compiled.project.templates)} templates)"
    )


def _build_into(
    out: Path,
    root: Path,
    lang: str,
    formats: list[str],
    cards: Path | None,
    release: bool,
    overwrite: bool,
) -> tuple[Compiled, dict]:
    """Check --out, load the sources and write the build folder (what Ctrl-C may stop)."""
    from ..build import build_folder, check_out_dir
    from ..project import load_project

    check_out_dir(out, root, cards)
    project = load_project(root, lang=lang)
    with _progress() as progress, _without_pandas():
        return build_folder(
            project,
            out,
            formats=formats,
            cards_dir=cards,
            release=release,
            progress=progress,
            overwrite=overwrite,
        )


def _folder_identity(folder: Path) -> tuple[int, int] | None:
    """The folder as the file system knows it (device, inode): a build replaces the whole folder by a
    rename, so a new identity means the new build was put in place."""
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _kept_by_build(out: Path, before: tuple[int, int] | None) -> str:
    """What a stopped build left in ``out``: the staged build is removed on a stop, a commit under way is
    finished (jbcompile.outputs), so either the folder is as it was or it holds the new build."""
    now = _folder_identity(out)
    if now == before:
        if before is None:
            return "nothing was written"
        what = (
            f"the previous build in {shown_name(str(out))}"
            if (out / "manifest.json").is_file()
            else shown_name(str(out))
        )
        return f"nothing was written; {what} is as it was"
    if now is None:
        return f"{shown_name(str(out))} was removed"
    return f"the new build was put in {shown_name(str(out))} before the stop (it is whole)"


def check_cards(cards: Path | None) -> None:
    """Refuse a --cards folder without the card template before any work (CL006)."""
    from .. import reading
    from ..emit.card import CARD_TEMPLATE

    # a FIFO, a folder or a link to a device in its place is F002, never "holds no README.md.j2"
    try:
        present = cards is None or reading.is_present(cards / CARD_TEMPLATE, reading.CARD_TEMPLATE)
    except DiagnosticError as error:
        raise fail(error) from None
    if not present:
        raise option_error(
            "CL006",
            f"--cards {cards} holds no {CARD_TEMPLATE}",
            hint="point --cards at a folder with the card template (see cards/ in the repository)",
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

    check_choice("--lang", lang, ("ja", "en"))
    try:
        compiled = _compile(sources, lang, quiet=as_json)
    except DiagnosticError as error:
        raise fail(error) from None
    _warn_unseen_characters(compiled.project)
    names, table = category_table(compiled)
    if as_json:
        print(dumps(table, indent=2))
        return
    title = f"{compiled.project.dataset.pretty_name} v{compiled.project.dataset.version}"
    view = Table(title=escape(title))
    view.add_column("category", no_wrap=True)
    for name in names:
        view.add_column(f"{name} rows", justify="right", no_wrap=True)
        view.add_column(f"{name} templates", justify="right", no_wrap=True)
    for entry in table:  # counts grouped by thousands, as build and audit print them
        view.add_row(
            escape(entry["category"]), *[f"{entry[k]:,}" for n in names for k in (n, f"{n}_templates")]
        )
    view.add_row(
        "[bold]total",
        *[f"{sum(e[k] for e in table):,}" for n in names for k in (n, f"{n}_templates")],
    )
    print_table(view)


def _warn_unseen_characters(project: Project) -> None:
    """What `check` and `build` say of characters a reader cannot see (JA120, JA121: the same rules, so
    the same codes and file:line:col), said by `stats` too: it counts rows whose text a reader would
    take for another. Counted all the same; the table shows each such character as ``<U+202E>``."""
    from ..checks import run_checks
    from ..checks.rules.ja120_hidden_characters import HiddenCharacters, InvisibleCharacters
    from ..sourcefiles import text_file_problems

    codes = {HiddenCharacters.code, InvisibleCharacters.code}
    unread = {d.path for d in text_file_problems(project.root, project.documents)}
    # … and a text file they could not scan (too large, not UTF-8): said, not passed over
    found = [d for d in run_checks(project, only=codes) if d.code in codes or d.path in unread]
    print_diagnostics(found)
    errors = sum(1 for d in found if d.severity is Severity.ERROR)
    if errors:
        err_console.print(
            f"note: the rows are counted as the sources stand; `jbcompile build` refuses them until the "
            f"{errors} error(s) above are fixed",
            markup=False,
            soft_wrap=True,
        )


@app.command()
def schema(
    file: str = typer.Argument(
        "all",
        help="dataset, vocab, template, pronouns, normalization, lexicon, attributes, glossary, memory, "
        "or all.",
    ),
) -> None:
    """Print the JSON Schema of the source files (for editor validation and completion)."""
    from ..schema.jsonschema import SCHEMA_FILES, json_schema

    check_choice("schema FILE", file, ("all", *SCHEMA_FILES))
    print(dumps(json_schema(file), indent=2))
