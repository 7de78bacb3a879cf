"""Child processes for the safety tests: the real CLI, killed at a chosen step or made to wait for a rival.

A step is one file system call made by jbcompile's own code: ``replace:outputs`` (an ``os.replace`` from
:mod:`jbcompile.outputs`), ``link:outputs``, ``unlink:outputs``, ``rmtree:outputs``, ``replace:fsio`` …,
and ``journal:<what>`` for a line written to a journal (``journal:temp``, ``journal:commit``,
``journal:done`` …). ``kill`` names the step, which of its occurrences, and whether the child dies just
before or just after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent

_STEPS = """
import json, os, shutil, signal, sys

kill_on, kill_nth, when = None, 0, None
spec = os.environ.get("JB_KILL")
if spec:
    kill_on, nth, when = spec.rsplit(" ", 2)
    kill_nth = int(nth)
log = os.environ.get("JB_STEPS")
seen = {}
steps = []

def label(name, args):
    if name == "write":
        try:
            return "journal:" + next(iter(json.loads(bytes(args[1]).decode("utf-8"))))
        except Exception:
            return None
    return name

def counted(name, real):
    def call(*args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        step = label(name, args) if caller.startswith("jbcompile") else None
        if step is not None and not step.startswith("journal:"):
            step = f"{step}:{caller.rsplit('.', 1)[-1]}"
        hit = False
        if step is not None:
            steps.append(step)
            seen[step] = seen.get(step, 0) + 1
            hit = step == kill_on and seen[step] == kill_nth
            if log:
                with open(log, "a") as handle:
                    handle.write(step + "\\n")
        if hit and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = real(*args, **kwargs)
        if hit and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return call

for name in ("replace", "link", "unlink", "write", "mkdir"):
    setattr(os, name, counted(name, getattr(os, name)))
shutil.rmtree = counted("rmtree", shutil.rmtree)
"""

_RIVAL = """
import os, time
from pathlib import Path
from jbcompile import outputs

marker = Path(os.environ["JB_RIVAL"])
state = {"waited": False}
real_notify, real_open = outputs.notify, outputs._open_lock

def notify(text):
    state["waited"] = True
    marker.touch()
    real_notify(text)

def open_lock(place):
    held = real_open(place)
    deadline = time.monotonic() + 120
    while not state["waited"] and not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # hold the place until the rival waits for it
    return held

outputs.notify, outputs._open_lock = notify, open_lock
"""

_MAIN = """
sys.argv = ["jbcompile", *sys.argv[1:]]
from jbcompile.cli import main
main()
"""


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", **extra)
    env["PYTHONPATH"] = f"{REPO / 'compiler'}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


Kill = tuple[str, int, str]  # (step, occurrence, "before" | "after")


def run_code(
    code: str,
    *args: str,
    cwd: Path | None = None,
    kill: Kill | None = None,
    steps: Path | None = None,
) -> subprocess.CompletedProcess:
    """Python ``code`` in a child (``sys.argv[1:]`` = ``args``); ``kill``: (step, occurrence, "before" |
    "after"); ``steps``: a file that gets every step the child takes, one a line."""
    extra = {}
    if kill is not None:
        extra["JB_KILL"] = " ".join(map(str, kill))
    if steps is not None:
        extra["JB_STEPS"] = str(steps)
    return subprocess.run(
        [sys.executable, "-c", "import sys\n" + _STEPS + code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(**extra),
        timeout=300,
    )


def run_cli(
    *args: str, cwd: Path | None = None, kill: Kill | None = None, steps: Path | None = None
) -> subprocess.CompletedProcess:
    """``jbcompile ARGS`` in a child (see :func:`run_code`)."""
    return run_code(_MAIN, *args, cwd=cwd, kill=kill, steps=steps)


def start_rivals(commands: list[list[str]], marker: Path, cwd: Path | None = None) -> list[subprocess.Popen]:
    """Start the commands at once; the first to hold its output keeps it until another one waits for it,
    so that they really run at the same time."""
    code = "import sys\n" + _RIVAL + _MAIN
    return [
        subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=_env(JB_RIVAL=str(marker)),
        )
        for args in commands
    ]


def finish(children: list[subprocess.Popen]) -> list[tuple[int, str]]:
    """Each child's exit code and its output (stdout and stderr)."""
    results = []
    for child in children:
        out, err = child.communicate(timeout=300)
        results.append((child.returncode, out + err))
    return results
