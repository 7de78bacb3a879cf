"""The build folder swap survives a kill at every step, and concurrent builds into one folder.

Each kill runs a real build in a child process that SIGKILLs itself at one step of the swap; the next
build must find the previous build (or the new one) whole, and leave no staging or old folder behind.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from jbcompile.build import write_build
from jbcompile.emit.manifest import read_manifest
from jbcompile.fsio import recover_folder

from tests.helpers import compile_folder, edit

REPO = Path(__file__).resolve().parent.parent

# The child builds, counting the file system calls of the swap; at call number KILL_AT of kind KILL_ON
# it kills itself, before the call ("before") or just after it ("after").
CHILD = textwrap.dedent(
    """
    import os, shutil, signal, sys
    from pathlib import Path
    from jbcompile import fsio
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    kill_on, kill_at, when = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    counts = {"replace": 0, "rmtree": 0}

    def wrap(name, real):
        def call(*args, **kwargs):
            counts[name] += 1
            hit = name == kill_on and counts[name] == kill_at
            if hit and when == "before":
                os.kill(os.getpid(), signal.SIGKILL)
            result = real(*args, **kwargs)
            if hit and when == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        return call

    fsio.os.replace = wrap("replace", os.replace)
    fsio.shutil.rmtree = wrap("rmtree", shutil.rmtree)
    write_build(compile_project(load_project(Path(sys.argv[1])), checks=False), Path(sys.argv[2]))
    """
)


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _child(sources: Path, out: Path, kill_on: str, kill_at: int, when: str) -> int:
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'compiler'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(sources), str(out), kill_on, str(kill_at), when],
        env=env,
        timeout=300,
    ).returncode


# The swap of an existing build: replace #1 moves out → .out.old-*, replace #2 moves staging → out,
# rmtree #1 removes the old folder (before it, a stale-leftover sweep runs no rmtree on a clean folder).
STEPS = [
    ("replace", 1, "before", "old"),  # staging written, nothing moved
    ("replace", 1, "after", "old"),  # no out at all: the old build sits in .out.old-*
    ("replace", 2, "after", "new"),  # new build in place, old one not yet removed
    ("rmtree", 1, "before", "new"),  # same, removal not started
    ("rmtree", 1, "after", "new"),  # done, but killed before returning
]


@pytest.mark.parametrize(("kill_on", "kill_at", "when", "survivor"), STEPS)
def test_a_kill_at_every_step_of_the_swap_is_repaired_by_the_next_build(
    mini_sources: Path, tmp_path: Path, kill_on: str, kill_at: int, when: str, survivor: str
) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    trees = {"old": _tree(out)}
    edit(mini_sources / "templates/Age/age-work.yaml", "新しい会計ソフト", "新しい経理ソフト")
    expected = tmp_path / "expected"
    write_build(compile_folder(mini_sources), expected)
    trees["new"] = _tree(expected)
    assert trees["new"] != trees["old"]
    assert _child(mini_sources, out, kill_on, kill_at, when) == -9
    # Whatever step it died at, the repair the next build starts with gives back one whole build …
    recover_folder(out, "tmp")
    assert _tree(out) == trees[survivor]
    # … and the next build finishes the job and leaves nothing beside it.
    write_build(compile_folder(mini_sources), out)
    assert _tree(out) == trees["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "expected", "sources"]


def test_a_kill_while_writing_the_staging_folder_keeps_the_previous_build(
    mini_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    old = _tree(out)
    assert _child(mini_sources, out, "replace", 1, "before") == -9
    assert _tree(out) == old
    assert any(p.name.startswith(".build.tmp-") for p in tmp_path.iterdir())
    write_build(compile_folder(mini_sources), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_stale_staging_and_old_folders_are_cleaned_and_a_lost_build_restored(
    mini_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    old = _tree(out)
    out.rename(tmp_path / ".build.old-abc123")  # as a kill between the two renames leaves it
    (tmp_path / ".build.tmp-xyz").mkdir()
    (tmp_path / ".build.tmp-xyz" / "half.parquet").write_bytes(b"PAR1")
    recover_folder(out, "tmp")
    assert _tree(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_concurrent_builds_into_one_folder_leave_one_whole_build(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'compiler'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    command = [
        sys.executable,
        "-m",
        "jbcompile.cli",
        "build",
        "--sources",
        str(mini_sources),
        "--out",
        str(out),
    ]
    children = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = [(child.wait(timeout=300), child.stderr.read()) for child in children]
    for child in children:
        child.stdout.close()
        child.stderr.close()
    assert all(code == 0 for code, _ in results), results
    manifest = read_manifest(out)
    assert {name for name in _tree(out) if name != "manifest.json"} == set(manifest["files"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_an_atomic_write_through_a_link_keeps_the_link(tmp_path: Path) -> None:
    from jbcompile.fsio import write_atomic

    target = tmp_path / "shared.yaml"
    target.write_text("a: 1\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    write_atomic(link, "a: 2\n")
    assert link.is_symlink() and target.read_text() == "a: 2\n"
