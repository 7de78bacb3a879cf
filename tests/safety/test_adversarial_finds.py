"""What the adversarial run (benchmarks/adversarial.py) found, held: each test failed before its fix."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from tests.helpers import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_a_symlink_loop_given_as_an_input_is_a_coded_diagnostic(tmp_path: Path) -> None:
    # pathlib (Python < 3.13) raises RuntimeError, not OSError, on a loop met while resolving a path
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    result = cli("import", "jubaku-jsonl", str(loop), "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "CL002" in result.stderr and "ELOOP" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("what", ["fifo", "loop", "folder"])
def test_translate_refuses_a_source_file_it_cannot_read(tmp_path: Path, what: str) -> None:
    # it used to leave such a file out and say "0 text(s) would be billed", exit 0
    sources = tmp_path / "sources"
    shutil.copytree(FIXTURES / "mini_sources", sources)
    vocab = next((sources / "vocab").glob("*.yaml"))
    vocab.unlink()
    if what == "fifo":
        os.mkfifo(vocab)
    elif what == "loop":
        vocab.symlink_to(vocab)
    else:
        vocab.mkdir()
    result = CliRunner().invoke(app, ["translate", "--sources", str(sources), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "S013" in result.output and vocab.name in result.output
