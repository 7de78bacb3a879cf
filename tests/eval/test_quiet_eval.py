"""`eval -q` prints no progress bar, ours or the model libraries' (loading weights is one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_quiet_eval_shows_no_progress_bar(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "jbcompile", "eval", "--model", str(tiny_model),
               "--dataset", str(build_dir), "--out", str(tmp_path / "run"),
               "--limit", "4", "--bootstrap", "20"]  # fmt: skip
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY")
    }
    loud = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert loud.returncode == 0, loud.stderr
    assert "Loading weights" in loud.stdout + loud.stderr  # what -q has to silence is really printed
    quiet = subprocess.run([*command[:-6], "--out", str(tmp_path / "quiet"), *command[-4:], "-q"],
                           capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    assert quiet.returncode == 0, quiet.stderr
    assert "Loading weights" not in quiet.stdout + quiet.stderr
    assert "%|" not in quiet.stdout + quiet.stderr


def test_quiet_after_the_hub_library_was_imported() -> None:
    """A process (a notebook, a script calling the CLI twice) that imported huggingface_hub already: its
    submodules load lazily, so `-q` imports the one it silences rather than stop with a traceback."""
    code = (
        "import sys, huggingface_hub\n"
        "assert 'huggingface_hub.utils' not in sys.modules\n"
        "from jbcompile.cli.eval import _library_logs\n"
        "_library_logs(quiet=True, verbose=False)\n"
        "print('silenced')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "silenced" in done.stdout, done.stderr
