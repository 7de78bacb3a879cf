"""The package's type hints hold: mypy, with the settings of pyproject.toml's ``[tool.mypy]``, finds no
error in ``compiler/jbcompile``.

It runs inside the test command so that the README's one command (and ``.ci/run``, which runs it) checks
the types too. mypy keeps its cache in ``.mypy_cache``: a first run takes minutes, later ones seconds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named mypy" not in done.stderr, 'mypy is missing: pip install -e ".[test]"'
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, (
        "mypy finds type errors in compiler/jbcompile (fix the types; an ignore needs its code and a "
        f"reason):\n{done.stdout}{done.stderr}"
    )
