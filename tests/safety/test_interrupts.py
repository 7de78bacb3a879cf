"""Ctrl-C inside the work: the last line says what was kept, or that nothing was written
(docs/guarantees.md, "What a stop says"). A build stopped so exited 130 with no message at all; a score
stopped before it held its folder said only "interrupted."."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import compile_folder
from tests.safety.children import run_code
from tests.safety.conftest import FIXTURES, tree, write_predictions

# Python code run before the CLI: Ctrl-C (SIGINT to the process) when ``target`` is first called. Python
# keeps SIGINT ignored when it starts with it ignored (a command run in the background by a shell without
# job control, as some CI runners do): the child takes Python's own handler first, as a terminal's has.
_INTERRUPT_AT = """
import importlib, os, signal
signal.signal(signal.SIGINT, signal.default_int_handler)
module_name, name = os.environ["JB_INTERRUPT_AT"].rsplit(":", 1)
module = importlib.import_module(module_name)
real = getattr(module, name)
def interrupting(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)
setattr(module, name, interrupting)
sys.argv = ["jbcompile", *sys.argv[1:]]
from jbcompile.cli import main
main()
"""


def _interrupted(at: str, *args: str, cwd: Path) -> tuple[int, str]:
    code = "import os\nos.environ['JB_INTERRUPT_AT'] = " + repr(at) + "\n" + _INTERRUPT_AT
    result = run_code(code, *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stderr.strip().splitlines()[-1]


# the build's data files are opened in its staging folder: the work is under way
BUILD_STEP = "jbcompile.emit:DataFiles"


def test_a_build_stopped_half_way_says_nothing_was_written(tmp_path: Path) -> None:
    sources = shutil.copytree(FIXTURES / "mini_sources", tmp_path / "sources")
    code, last = _interrupted(BUILD_STEP, "build", "-s", str(sources), "--out", "out", cwd=tmp_path)
    assert code == 130 and last == "interrupted; nothing was written.", last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sources"]


def test_a_build_stopped_half_way_says_the_previous_build_is_as_it_was(tmp_path: Path) -> None:
    from jbcompile.build import write_build

    sources = shutil.copytree(FIXTURES / "mini_sources", tmp_path / "sources")
    write_build(compile_folder(sources), tmp_path / "out")
    before = tree(tmp_path / "out")
    code, last = _interrupted(BUILD_STEP, "build", "-s", str(sources), "--out", "out", cwd=tmp_path)
    assert code == 130, last
    assert last == "interrupted; nothing was written; the previous build in out is as it was.", last
    assert tree(tmp_path / "out") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "sources"]


def test_a_score_stopped_before_it_wrote_says_nothing_was_written(
    tmp_path: Path, lite_rows: list[dict]
) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", lite_rows, 0)
    args = ["score", str(predictions), "--out", "out", "--prediction-field", "prediction"]
    # the inputs are being read (hashed for the run's record): the folder is not held yet
    code, last = _interrupted("jbcompile.evaluate.score:score_inputs", *args, cwd=tmp_path)
    assert code == 130 and last == "interrupted; nothing was written.", last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]


def test_a_score_stopped_while_writing_says_what_it_kept(tmp_path: Path, lite_rows: list[dict]) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", lite_rows, 0)
    args = ["score", str(predictions), "--out", "out", "--prediction-field", "prediction"]
    code, last = _interrupted("jbcompile.evaluate.score:write_outputs", *args, cwd=tmp_path)
    assert code == 130 and last.startswith("interrupted; ") and last != "interrupted.", last
    assert "nothing was written" in last or "kept" in last, last


def test_a_build_stopped_after_its_commit_says_the_new_build_is_in_place(tmp_path: Path) -> None:
    sources = shutil.copytree(FIXTURES / "mini_sources", tmp_path / "sources")
    args = ("build", "-s", str(sources), "--out", "out")
    code, last = _interrupted("jbcompile.cli.build:print_diagnostics", *args, cwd=tmp_path)
    assert (
        code == 130 and last == "interrupted; the new build was put in out before the stop (it is whole)."
    ), last
    assert (tmp_path / "out" / "manifest.json").is_file()


def test_a_stop_writes_out_the_control_characters_of_the_names_it_lists(
    tmp_path: Path, lite_rows: list[dict]
) -> None:
    """The account of a stop names the user's folder and files through ``text.shown_name``: a line break
    or an escape sequence in --out is written out (``<U+001B>``), never sent to the terminal."""
    predictions = write_predictions(tmp_path / "p.jsonl", lite_rows, 0)
    out = "o\x1b[2Jx\ny"
    (tmp_path / out).mkdir()  # an empty folder of the user's: the account names it
    args = ["score", str(predictions), "--out", out, "--prediction-field", "prediction"]
    code, last = _interrupted("jbcompile.evaluate.score:write_outputs", *args, cwd=tmp_path)
    assert code == 130 and last.startswith("interrupted; "), last
    assert "o<U+001B>[2Jx<U+000A>y" in last and "\x1b" not in last, last


def test_the_account_lines_name_folders_and_files_as_shown(tmp_path: Path) -> None:
    """Each place that words an account (a stopped eval or score, a stopped build, the files a failed
    stage kept) writes the names out."""
    from jbcompile.cli.build import _kept_by_build
    from jbcompile.evaluate.predictions import folder_state, kept_on_disk

    folder = tmp_path / "run\x1b]0;title\x07"
    folder.mkdir()
    (folder / "old\tname.txt").write_text("x", encoding="utf-8")
    before = folder_state(folder)
    (folder / "old\tname.txt").unlink()
    (folder / "predictions.jsonl").write_text("{}\n", encoding="utf-8")
    account = kept_on_disk(folder, before, {}, True, "eval")
    assert "run<U+001B>]0;title<U+0007>/predictions.jsonl (1 prediction" in account, account
    assert "removed " in account and "old<U+0009>name.txt" in account, account
    assert not any(char in account for char in "\x1b\x07\t"), account
    for account in (
        kept_on_disk(folder, folder_state(folder), {}, True, "eval"),
        _kept_by_build(folder, None),
    ):
        assert "<U+001B>" in account and "\x1b" not in account, account


def test_a_failed_stage_names_the_files_it_kept_as_shown(capsys) -> None:  # type: ignore[no-untyped-def]
    """A line break in a kept file's name cannot forge a line of its own (the console writes out escape
    sequences already; a name's line break and tab are ``shown_name``'s)."""
    import typer
    from jbcompile.cli.app import fail
    from jbcompile.diagnostics import Diagnostic, DiagnosticError

    error = DiagnosticError(
        [Diagnostic("EV001", "x", hint="y")], written=[Path("kept\n1 error(s); nothing was written")]
    )
    assert isinstance(fail(error), typer.Exit)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith("; kept kept<U+000A>1 error(s); nothing was written."), last
