"""Every command that writes refuses an output that is, holds or lies inside one of its inputs (or another
of its outputs), directly or through a link, before it creates anything (docs/guarantees.md).

The commands are listed from the CLI itself: a new command fails ``test_every_command_is_in_the_table``
until it is put in one of the tables below, and one with an --out, --report or --fix option cannot be
put among the commands that write nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from jbcompile.cli import app
from typer.testing import CliRunner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Commands that write nothing the user sees (a temporary folder of the system at most).
READ_ONLY = {
    "stats": "prints counts",
    "schema": "prints JSON Schema",
    "publish": "uploads to the Hub; reads the build folder",
    "verify": "builds into a temporary folder of the system",
    "diff": "downloads into a temporary folder of the system",
    "audit": "prints the probes' figures (a build writes them into its own folder)",
}
# Commands that edit the sources in place: no separate output to overlap; their edits are one journaled
# commit (tests/safety/test_kills.py).
IN_PLACE = {
    "check": "--fix rewrites the sources",
    "translate": "writes the translations and the memory into the sources",
}
# Commands that write from nothing the user gives: no input to overlap; a file in the way refuses the
# whole (tests/test_init.py), and what they write is one commit.
NO_INPUT = {"init": "writes a new benchmark from the package's starter"}
WRITE_OPTIONS = {"--out", "-o", "--report", "--fix"}


@dataclass
class Writer:
    """A command that writes: its inputs and outputs by name, and ``make``, which creates the inputs under
    a folder and returns the command line (without outputs), the input paths and a safe place for each
    output."""

    inputs: tuple[str, ...]
    outputs: dict[str, str]  # option → the code of its refusal
    make: Callable[[Path], tuple[list[str], dict[str, Path], dict[str, Path]]]


def _file(path: Path, text: str = "{}\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _build(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
    import shutil

    sources = tmp / "in-sources" / "sources"
    shutil.copytree(FIXTURES / "mini_sources", sources)
    cards = _folder(tmp / "in-cards" / "cards")
    _file(cards / "README.md.j2", "{{ pretty_name }}\n")
    args = ["build", "--sources", str(sources), "--cards", str(cards)]
    return args, {"sources": sources, "cards": cards}, {"--out": tmp / "out" / "build"}


def _eval(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
    dataset = _folder(tmp / "in-dataset" / "build")
    model = _folder(tmp / "in-model" / "model")
    prompt = _file(tmp / "in-prompt" / "prompt.j2", "{{ context }}\n")
    args = ["eval", "--dataset", str(dataset), "--model", str(model), "--prompt-file", str(prompt)]
    return args, {"dataset": dataset, "model": model, "prompt": prompt}, {"--out": tmp / "out" / "run"}


def _score(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
    predictions = _file(tmp / "in-predictions" / "predictions.jsonl", '{"example_id": "1"}\n')
    dataset = _folder(tmp / "in-dataset" / "build")
    args = ["score", str(predictions), "--dataset", str(dataset)]
    return args, {"predictions": predictions, "dataset": dataset}, {"--out": tmp / "out" / "run"}


def _compare(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
    a, b = _folder(tmp / "in-a" / "run-a"), _folder(tmp / "in-b" / "run-b")
    return ["compare", str(a), str(b)], {"run a": a, "run b": b}, {"--out": tmp / "out" / "cmp"}


def _import(name: str, folder_input: bool = False, files: tuple[str, ...] = ()) -> Writer:
    def make(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
        if folder_input:
            data = _folder(tmp / "in-data" / "templates")
            _file(data / "vocabulary.csv", "x\n")
        else:
            data = _file(tmp / "in-data" / "release.json", "[]\n")
        inputs = {"input": data}
        args = ["import", name, str(data)]
        for option in files:
            inputs[option] = _file(tmp / f"in-{option.strip('-')}" / "rows.jsonl")
            args += [option, str(inputs[option])]
        return args, inputs, {"--out": tmp / "out" / "sources", "--report": tmp / "out" / "r.json"}

    return Writer(("input", *files), {"--out": "IM056", "--report": "CL010"}, make)


def _export(harness: str) -> Writer:
    def make(tmp: Path) -> tuple[list[str], dict[str, Path], dict[str, Path]]:
        build = _folder(tmp / "in-build" / "build")
        return ["export", harness, str(build), "--local"], {"build": build}, {"--out": tmp / "out" / "tasks"}

    return Writer(("build",), {"--out": "EX003"}, make)


WRITERS: dict[str, Writer] = {
    "build": Writer(("sources", "cards"), {"--out": "B003"}, _build),
    "eval": Writer(("dataset", "model", "prompt"), {"--out": "CL010"}, _eval),
    "score": Writer(("predictions", "dataset"), {"--out": "CL010"}, _score),
    "compare": Writer(("run a", "run b"), {"--out": "CL010"}, _compare),
    "import bbq-templates": _import("bbq-templates", folder_input=True, files=("--names-from", "--compare")),
    "import bbq-jsonl": _import("bbq-jsonl"),
    "import sobaco-json": _import("sobaco-json"),
    "import jubaku-jsonl": _import("jubaku-jsonl"),
    "export lm-eval": _export("lm-eval"),
    "export inspect": _export("inspect"),
}


def cli_commands() -> dict[str, Any]:
    """Every command of the CLI by its full name (``import bbq-jsonl``), subcommands included."""
    root = typer.main.get_command(app)
    found: dict[str, Any] = {}

    def walk(group: Any, prefix: str) -> None:
        context = group.make_context(group.name, [], resilient_parsing=True)
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            full = f"{prefix} {name}".strip()
            if hasattr(command, "list_commands"):
                inner = command.make_context(name, [], resilient_parsing=True)
                names = command.list_commands(inner)
                if names == [name]:  # `import` builds each subcommand as a group of itself
                    found[full] = command.get_command(inner, name)
                else:
                    walk(command, full)
            else:
                found[full] = command

    walk(root, "")
    return found


def test_every_command_is_in_the_table() -> None:
    names = set(cli_commands())
    listed = set(WRITERS) | set(IN_PLACE) | set(NO_INPUT) | set(READ_ONLY)
    assert names - listed == set(), (
        "add these commands to WRITERS (with their inputs and outputs), IN_PLACE, NO_INPUT or READ_ONLY"
    )
    assert listed - names == set(), "these commands are gone: take them out of the tables"


def test_a_command_with_a_write_option_is_never_listed_as_read_only() -> None:
    for name, command in cli_commands().items():
        options = {flag for param in command.params for flag in getattr(param, "opts", [])}
        if options & WRITE_OPTIONS:
            assert name in WRITERS or name in IN_PLACE or name in NO_INPUT, f"{name} writes"


def _snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` (links as links) with a digest of its bytes: nothing may change or appear."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "link:" + os.readlink(path)
            elif path.is_file():
                found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[relative] = "folder"
    return found


RELATIONS = ("is", "holds", "lies inside", "links to")


def _place(tmp: Path, relation: str, other: Path) -> Path:
    """A path that ``relation`` ``other``."""
    if relation == "is":
        return other
    if relation == "holds":
        return other.parent
    if relation == "lies inside":
        return other / "out"
    link = tmp / "link"
    link.symlink_to(other, target_is_directory=other.is_dir())
    return link


CASES = [
    (command, option, other, relation)
    for command, writer in WRITERS.items()
    for option in writer.outputs
    for other in [*writer.inputs, *(o for o in writer.outputs if o != option)]
    for relation in RELATIONS
]


@pytest.mark.parametrize(("command", "option", "other", "relation"), CASES)
def test_an_output_never_overlaps_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str, other: str, relation: str
) -> None:
    work = _folder(tmp_path / "work")  # the working folder, apart from every input and output
    monkeypatch.chdir(work)
    writer = WRITERS[command]
    args, inputs, places = writer.make(tmp_path)
    target = inputs.get(other) or places[other]
    if not target.exists() and relation != "is":
        target.parent.mkdir(parents=True, exist_ok=True)  # an output place: its folder exists
    places[option] = _place(tmp_path, relation, target)
    for name, place in places.items():
        args += [name, str(place)]
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    # two outputs that overlap: the refusal is the later one's
    codes = {writer.outputs[option], writer.outputs.get(other, writer.outputs[option])}
    assert any(code in result.output for code in codes), result.output
    assert "Traceback" not in result.output
    assert _snapshot(tmp_path) == before  # no input byte changed, nothing created (no folder, no lock)
