"""Bounded reads and unique JSON keys (issue 23 §7, §9): one reader and one JSON parser for every file the
tool reads, so that a device, a FIFO, a huge or growing file, or a key given twice is refused with a
coded diagnostic by every command — never read until the memory is gone, waited on, or guessed at."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from jbcompile import limits, reading
from jbcompile.cli import app
from jbcompile.codes import all_codes
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.jsonfile import CODES
from jbcompile.jsonl import DuplicateKey, loads, read_json, read_json_lines
from typer.testing import CliRunner

from tests.conftest import FIXTURES, REPO
from tests.importers.conftest import EN_SPECS, write_template_csvs

PACKAGE = REPO / "compiler" / "jbcompile"


# ---- the limits: constants of one module, the docs generated from them ------------------------------------


def test_the_docs_table_is_generated_from_the_constants() -> None:
    text = (REPO / "docs" / "guarantees.md").read_text("utf-8")
    start, end = text.index(limits.TABLE_START), text.index(limits.TABLE_END) + len(limits.TABLE_END)
    assert text[start:end] + "\n" == limits.limits_table(), (
        "run: python -m jbcompile.limits docs/guarantees.md"
    )


def test_every_limit_is_a_documented_constant_and_every_kind_names_one() -> None:
    constants = {
        name for name, value in vars(limits).items() if name.startswith("MAX_") and isinstance(value, int)
    }
    documented = {limit.name for limit in limits.LIMITS}
    assert constants == documented
    declared = all_codes()
    assert all(limit.code in declared for limit in limits.LIMITS)
    kinds = [value for value in vars(reading).values() if isinstance(value, reading.FileKind)]
    assert len(kinds) >= 9 and all(kind.limit in documented for kind in kinds)
    assert all(kind.code == next(x.code for x in limits.LIMITS if x.name == kind.limit) for kind in kinds)
    # the loader and the schema use the module's constants, not copies of their own
    from jbcompile import loader
    from jbcompile.schema.dataset import BuildLimits

    assert loader.MAX_DEPTH is limits.MAX_DEPTH and loader.MAX_TEXT_CHARS is limits.MAX_TEXT_CHARS
    assert (
        BuildLimits().max_rows == limits.MAX_ROWS
        and BuildLimits().max_template_rows == limits.MAX_TEMPLATE_ROWS
    )


# Reading a file's bytes, or handing a path to a library that opens it, happens in the reader alone; the
# exceptions are writes, the tool's own docs and the model sampling of resume (16 blocks of a regular file).
RAW_READ = re.compile(
    r"(?<!reading)\.read_text\(|(?<!reading)\.read_bytes\(|(?<![\w.])open\(|\.open\(\s*\"r|\.open\(\)|json\.loads?\(|yaml\.(safe_)?load\(|"
    r"pq\.read_table\(|pq\.ParquetFile\(|FileSystemLoader\(|csv\.(reader|DictReader)\(|load_dataset\("
)
STRING = re.compile(r"\"[^\"]+\"|'[^']+'")  # a call named in a message is no call (a mode keeps its letter)
ALLOWED = {
    "reading.py": "the reader itself",
    "jsonl.py": "the JSON parser itself (json.loads with the hook; the shape probe of a first line)",
    "fsio.py": "rewrites the tool's own docs (python -m jbcompile.codes …)",
    "codes.py": "reads the tool's own docs",
    "evaluate/resume.py": "samples 16 blocks of each regular file of a model folder",
    "evaluate/dataset.py": "pyarrow and datasets get a path only after check_file (see _check_folder_files)",
    "evaluate/harness_logs.py": "an .eval archive, after check_file: its members measured a block at a time",
    "publish/buildfolder.py": "pyarrow gets a path only after check_file",
    "checks/morph.py": "csv.reader over MeCab's output, not a file",
    "designs/bbq/importers/templates.py": "csv over the text the reader returned",
    "evaluate/predictions.py": "appends to the predictions log (a write)",
    "evaluate/backends/remote.py": "appends to the requests log (a write)",
    "audit/run.py": "pyarrow gets a path only after check_file (ParquetRows)",
    "emit/data.py": "writes the data files",
    "outputs.py": "reads its own lock file and journal, bounded (MAX_JOURNAL_BYTES, one header line)",
    # below the reader (diagnostics scrub messages with it, and the reader reports through diagnostics)
    "redaction.py": "reads the saved Hub token, a regular file only, at most 4 KiB (_TOKEN_FILE_LIMIT)",
}


def test_no_file_is_read_but_through_the_reader() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        shown = path.relative_to(PACKAGE).as_posix()
        if shown in ALLOWED:
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            code = STRING.sub(lambda m: m.group()[:2] + m.group()[0], line).split("#", 1)[0]
            if RAW_READ.search(code):
                found.append(f"{shown}:{number}: {line.strip()}")
    assert not found, "read these through jbcompile.reading / jbcompile.jsonl:\n" + "\n".join(found)


# ---- the reader --------------------------------------------------------------------------------------------


def _finishes(action: Callable[[], object], seconds: float = 20) -> object:
    """Run ``action`` in a thread; fail (instead of hanging the suite) when it does not end in time."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the command waited (or read) without end"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


def _refused(path: Path | str, kind: reading.FileKind = reading.RELEASE) -> tuple[str, str]:
    with pytest.raises(DiagnosticError) as error:
        _finishes(lambda: reading.read_bytes(path, kind))
    [problem] = error.value.diagnostics
    return problem.code, problem.message


@pytest.fixture
def fifo(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):  # a reader that blocked on it (a regression) gets its end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_devices_fifos_sockets_and_folders_are_refused_unread(tmp_path: Path, fifo: Path) -> None:
    assert _refused(fifo) == ("F002", "a named pipe (FIFO), where a release file was expected: not read")
    assert _refused("/dev/zero")[1].startswith("a character device")
    assert _refused(tmp_path)[1].startswith("a folder")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s.sock"))
        assert _refused(tmp_path / "s.sock")[1].startswith("a socket")


def test_a_file_above_its_limit_is_refused_by_its_size_even_sparse(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.jsonl"
    with sparse.open("wb") as handle:
        handle.truncate(limits.MAX_RELEASE_BYTES + 1)  # no block is written: refused by its size, unread
    code, message = _refused(sparse)
    assert code == "F001" and f"{limits.MAX_RELEASE_BYTES + 1:,} bytes" in message
    assert "at most 1 GiB (MAX_RELEASE_BYTES)" in message
    assert _refused(sparse, reading.SOURCE)[0] == "Y006"  # a source file: the loader's own code


def test_a_file_is_read_whole_up_to_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RELEASE_BYTES", 10)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"0123456789")
    assert reading.read_bytes(path, reading.RELEASE) == b"0123456789"
    path.write_bytes(b"0123456789A")
    assert _refused(path)[0] == "F001"


def test_a_file_larger_than_it_says_is_still_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RECORD_BYTES", 64)
    maps = Path("/proc/self/maps")  # size 0 by stat, kilobytes when read
    assert os.stat(maps).st_size == 0
    code, message = _refused(maps, reading.RECORD)
    assert code == "F001" and "grew while it was read" in message


def test_template_files_are_bounded_includes_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jinja2

    monkeypatch.setattr(limits, "MAX_PROMPT_FILE_BYTES", 100)
    (tmp_path / "main.j2").write_text('{% include "big.j2" %}', "utf-8")
    (tmp_path / "big.j2").write_text("x" * 101, "utf-8")
    environment = jinja2.Environment(loader=reading.template_loader(tmp_path, reading.PROMPT))
    with pytest.raises(DiagnosticError) as error:
        environment.get_template("main.j2").render()
    assert error.value.diagnostics[0].code == "F001" and error.value.diagnostics[0].path.endswith("big.j2")


# ---- one JSON parser: a key given twice -------------------------------------------------------------------


def test_a_key_given_twice_is_refused_at_any_depth() -> None:
    for text in ('{"pred": 1, "pred": 2}', '[{"a": {"b": 1, "b": 1}}]', '{"a": 1, "\\u0061": 2}'):
        with pytest.raises(DuplicateKey):
            loads(text)
    assert loads('{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}') == {"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}


def test_the_second_key_is_named_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"example_id": 1, "pred": 0}\n{"example_id": 2, "pred": 1, "gold": 1, "pred": 2}\n')
    lines = read_json_lines(path, CODES, reading.PREDICTIONS)
    assert [record for _, record in lines.records] == [{"example_id": 1, "pred": 0}]
    [problem] = lines.problems
    assert (problem.code, problem.line, problem.col) == ("F003", 2, 41)  # the second "pred"
    assert "'pred' appears twice" in problem.message
    document = tmp_path / "run.json"
    document.write_text('{\n  "model": "m",\n  "options": {\n    "seed": 1,\n    "seed": 2\n  }\n}\n')
    with pytest.raises(DiagnosticError) as error:
        read_json(document, reading.RECORD)
    [problem] = error.value.diagnostics
    assert (problem.code, problem.line, problem.col) == ("F003", 5, 5)


# ---- every command that reads a file -------------------------------------------------------------------


def _sources(tmp_path: Path) -> Path:
    root = tmp_path / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    return root


def _built(tmp_path: Path, name: str) -> Path:
    out = tmp_path / "builds" / name
    result = CliRunner().invoke(
        app, ["build", "--sources", str(_sources(tmp_path / f"{name}-sources")), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def _replace_by_fifo(path: Path) -> Path:
    path.unlink()
    os.mkfifo(path)
    return path


def _commands(tmp_path: Path, fifo: Path) -> dict[str, tuple[list[str], str]]:
    """Every command that reads a file the user names, given a FIFO in its place: (args, expected code)."""
    templates = write_template_csvs(tmp_path / "bbq", EN_SPECS)
    broken_csvs = write_template_csvs(tmp_path / "bbq-fifo", EN_SPECS)
    _replace_by_fifo(next(broken_csvs.glob("new_templates - *.csv")))
    sources = _sources(tmp_path)
    fifo_sources = _sources(tmp_path / "fifo")
    _replace_by_fifo(fifo_sources / "templates" / "Age" / "age-work.yaml")
    fifo_in_sources = fifo_sources / "templates" / "Age" / "age-work.yaml"
    cards = tmp_path / "cards"
    cards.mkdir()
    os.mkfifo(cards / "README.md.j2")
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "results.json")
    dataset = tmp_path / "dataset"
    (dataset / "data").mkdir(parents=True)
    os.mkfifo(dataset / "data" / "test.jsonl")
    old, new = _built(tmp_path, "old"), _built(tmp_path, "new")
    _replace_by_fifo(next((new / "data").rglob("*.parquet")))
    model = tmp_path / "model"
    model.mkdir()
    out = str(tmp_path / "out")
    f = str(fifo)
    return {
        "import bbq-jsonl": (["import", "bbq-jsonl", f, "--out", out], "F002"),
        "import jubaku-jsonl": (["import", "jubaku-jsonl", f, "--out", out], "F002"),
        "import sobaco-json": (["import", "sobaco-json", f, "--out", out], "F002"),
        "import bbq-templates": (["import", "bbq-templates", str(broken_csvs), "--out", out], "F002"),
        "--compare": (["import", "bbq-templates", str(templates), "--compare", f, "--out", out], "F002"),
        "--names-from": (
            ["import", "bbq-templates", str(templates), "--names-from", f, "--out", out],
            "F002",
        ),
        # a named path outside --sources is TR015 before it is opened: the FIFO stands inside them
        "translate": (
            ["translate", str(fifo_in_sources), "--sources", str(fifo_sources), "--dry-run"],
            "F002",
        ),
        "score": (["score", f], "F002"),
        "eval --dataset FILE": (["eval", "--model", str(model), "--dataset", f], "F002"),
        "eval --dataset FOLDER": (["eval", "--model", str(model), "--dataset", str(dataset)], "F002"),
        "eval --prompt-file": (
            ["eval", "--model", str(model), "--dataset", str(old), "--prompt-file", f],
            "F002",
        ),
        "compare": (["compare", str(run)], "F002"),
        "build": (["build", "--sources", str(fifo_sources), "--out", out], "S013"),
        "build --cards": (["build", "--sources", str(sources), "--cards", str(cards), "--out", out], "F002"),
        "check": (["check", "--sources", str(fifo_sources)], "S013"),
        "stats": (["stats", "--sources", str(fifo_sources)], "S013"),
        "diff": (["diff", str(old), str(new)], "F002"),
        "audit": (["audit", str(new)], "F002"),
    }


def test_every_command_refuses_a_fifo_at_once_and_writes_nothing(tmp_path: Path, fifo: Path) -> None:
    commands = _commands(tmp_path, fifo)
    runner = CliRunner()
    wrong = {}
    for name, (args, code) in commands.items():
        result = _finishes(lambda args=args: runner.invoke(app, args))
        if (
            result.exit_code != 2
            or code not in result.output
            or result.exception
            and not isinstance(result.exception, SystemExit)
        ):
            wrong[name] = (result.exit_code, result.output[-300:])
        assert not (tmp_path / "out").exists(), name
    assert not wrong, wrong


def test_a_key_given_twice_stops_score_import_and_compare(tmp_path: Path) -> None:
    runner = CliRunner()
    predictions = tmp_path / "predictions.jsonl"
    line = {"example_id": "x", "category": "Age", "gold": 0, "label": 0, "kind": "bbq"}
    predictions.write_text(json.dumps(line)[:-1] + ', "pred": 1, "pred": 0}\n', "utf-8")
    result = runner.invoke(app, ["score", str(predictions)])
    assert result.exit_code == 2 and re.search(
        r"predictions.jsonl:1:\d+: F003 the key 'pred' appears twice", result.output
    )
    release = tmp_path / "ja_templates.json"
    text = '[{"context": "a", "context": "b"}]'
    release.write_text(text, "utf-8")
    result = runner.invoke(app, ["import", "sobaco-json", str(release), "--out", str(tmp_path / "out")])
    assert (
        result.exit_code == 2
        and f"ja_templates.json:1:{text.rindex(chr(34) + 'context') + 1}: F003" in result.output
    )
    run = tmp_path / "run"
    run.mkdir()
    text = '{"schema_version": 1, "metrics": {}, "metrics": {}}'
    (run / "results.json").write_text(text, "utf-8")
    result = runner.invoke(app, ["compare", str(run)])
    assert (
        result.exit_code == 2
        and f"results.json:1:{text.rindex(chr(34) + 'metrics') + 1}: F003" in result.output
    )
    assert not (tmp_path / "out").exists()
