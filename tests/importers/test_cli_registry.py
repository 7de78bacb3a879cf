"""`jbcompile import <name>` comes from the registry: every design's importers, each command's argument
and options built from what the importer declares, nothing about a design written into the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from jbcompile import designs
from jbcompile.cli import app
from jbcompile.designs.spec import Design
from jbcompile.diagnostics import Diagnostic, DiagnosticError
from jbcompile.importers import Imported, Importer, Input, Option, all_importers
from typer.testing import CliRunner


class ToyImporter(Importer):
    """Reads nothing: it says what it was given, so that the test sees what the command passed on."""

    name = "toy-lines"
    summary = "Import a toy design's lines (a test's own format)."
    input = Input("file", "The toy release, one case per line.")
    options = (
        Option("separator", ("--separator", "-s"), "What splits a line into fields.", default="|"),
        Option("glossary", ("--glossary",), "Toy glossaries to apply (repeat it).", type=Path, many=True),
        Option("tag", ("--tag",), "A tag for every case (repeat it).", many=True),
    )

    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        shown = dict(options, glossary=[path.name for path in options["glossary"]])
        given = f"inputs={[path.name for path in inputs]} options={shown}"
        raise DiagnosticError([Diagnostic("IM001", given)])

    def verify_round_trip(self, sources, imported, progress=None) -> None:  # never reached: read stops
        raise AssertionError("read refused the input")


class ToyDesign(Design):
    name = "toy"
    summary = "A toy design of this test"
    position = 50

    def __init__(self, importers: Sequence[Any] = (ToyImporter(),)) -> None:
        self._importers = tuple(importers)

    def compiler(self):
        raise NotImplementedError

    def evaluator(self):
        raise NotImplementedError

    def importers(self):
        return self._importers


@pytest.fixture
def with_toy(monkeypatch: pytest.MonkeyPatch):
    """The registry with the toy design added after the built-in ones; returns a setter for its importers."""
    builtin = designs.all_designs()

    def register(*toys: Design) -> None:
        monkeypatch.setattr(designs, "all_designs", lambda: [*builtin, *toys])

    register(ToyDesign())
    return register


def _run(*args: str):
    result = CliRunner().invoke(app, ["import", *args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert "Traceback" not in result.output, result.output
    return result


def test_the_builtin_importers_are_the_designs_own() -> None:
    by_design = {design.name: [i.name for i in design.importers()] for design in designs.all_designs()}
    assert by_design == {
        "bbq": ["bbq-templates", "bbq-jsonl"],
        "sobaco": ["sobaco-json"],
        "jubaku": ["jubaku-jsonl"],
    }
    assert [i.name for i in all_importers()] == ["bbq-templates", "bbq-jsonl", "sobaco-json", "jubaku-jsonl"]


def test_a_registered_designs_importer_is_a_subcommand_with_its_options(with_toy) -> None:
    listing = _run("--help")
    assert listing.exit_code == 0
    assert "toy-lines" in listing.output and "Import a toy design's lines" in listing.output
    assert "bbq-jsonl" in listing.output  # the built-in ones stay
    usage = _run("toy-lines", "--help")
    assert usage.exit_code == 0, usage.output
    for text in ("--separator", "-s", "What splits a line", "--glossary", "--tag", "The toy release"):
        assert text in usage.output
    for shared in ("--out", "--force", "--report", "--strict", "--keep-going", "--verbose", "--diagnostics"):
        assert shared in usage.output


def test_the_command_passes_the_declared_values_to_read(with_toy, tmp_path: Path) -> None:
    source, glossary = tmp_path / "cases.txt", tmp_path / "words.txt"
    source.write_text("a|b\n", encoding="utf-8")
    glossary.write_text("a\n", encoding="utf-8")
    result = _run(
        "toy-lines", str(source), "--out", str(tmp_path / "out"), "--glossary", str(glossary), "--tag", "x"
    )
    assert result.exit_code == 2  # read refused: nothing is written
    assert "inputs=['cases.txt']" in result.output
    assert "'separator': '|'" in result.output and "'glossary': ['words.txt']" in result.output
    assert "'tag': ['x']" in result.output
    assert not (tmp_path / "out").exists()
    defaults = _run("toy-lines", str(source), "--out", str(tmp_path / "out"), "-s", ";")
    assert "'separator': ';'" in defaults.output and "'glossary': []" in defaults.output
    assert "'tag': []" in defaults.output


def test_a_file_option_shares_the_checks_every_import_makes(with_toy, tmp_path: Path) -> None:
    source, glossary = tmp_path / "cases.txt", tmp_path / "words.txt"
    source.write_text("a|b\n", encoding="utf-8")
    glossary.write_text("a\n", encoding="utf-8")
    twice = _run(
        "toy-lines",
        str(source),
        "--out",
        str(tmp_path / "o"),
        "--glossary",
        str(glossary),
        "--glossary",
        str(glossary),
    )
    assert twice.exit_code == 2 and "IM057" in twice.output  # refused before read
    inside = _run("toy-lines", str(source), "--out", str(tmp_path), "--force")
    assert inside.exit_code == 2 and "IM056" in inside.output


def test_importers_that_cannot_be_told_apart_are_refused(with_toy) -> None:
    with_toy(ToyDesign(), ToyDesign(), ToyDesign(importers=("not an importer",)))
    result = _run("--help")
    assert result.exit_code == 2
    assert result.output.count("DS004") == 2
    assert "'toy-lines', as another design does" in result.output and "gives a str" in result.output
