"""Small helpers shared by the spine's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jbcompile.build import compile_project
from jbcompile.compiled import Compiled
from jbcompile.diagnostics import Diagnostic, DiagnosticError
from jbcompile.project import load_project


def compile_folder(root: Path, lang: str = "ja", checks: bool = False) -> Compiled:
    return compile_project(load_project(root, lang=lang), checks=checks)


def problems_of(root: Path, lang: str = "ja", checks: bool = False) -> list[Diagnostic]:
    try:
        compile_folder(root, lang=lang, checks=checks)
    except DiagnosticError as error:
        return error.diagnostics
    raise AssertionError("expected the sources to be rejected")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def cli(*args: str, cwd: Path | None = None, columns: str | None = None) -> subprocess.CompletedProcess:
    """`jbcompile ARGS` in a fresh process, as a user runs it outside a terminal (output captured).

    ``columns``: the COLUMNS the process sees; None leaves it unset (rich then assumes 80 columns).
    """
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env["NO_COLOR"] = "1"
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "jbcompile.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
