"""The build folder swap survives a kill at every step, and concurrent builds into one folder.

Each kill runs a real build in a child process that SIGKILLs itself at one step of the swap; whatever
reads the folder next (:func:`jbcompile.outputs.settle`, or the next build's claim) must find the
previous build or the new one whole, and leave no staging, old folder or journal behind.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jbcompile.build import write_build
from jbcompile.emit.manifest import read_manifest
from jbcompile.outputs import settle

from tests.helpers import compile_folder, edit
from tests.safety.children import run_code

REPO = Path(__file__).resolve().parent.parent

# The child builds (a compile without the lint rules, as the tests' own builds), killed at one step.
CHILD = """
from pathlib import Path
from jbcompile.build import compile_project, write_build
from jbcompile.project import load_project

write_build(compile_project(load_project(Path(sys.argv[1])), checks=False), Path(sys.argv[2]))
"""


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _child(sources: Path, out: Path, kill_on: str, kill_at: int, when: str) -> int:
    return run_code(CHILD, str(sources), str(out), kill=(f"{kill_on}:outputs", kill_at, when)).returncode


# The swap of an existing build: replace #1 moves out → .out.jbcompile-old-*, replace #2 moves the
# staging folder → out, rmtree #1 removes the old folder (nothing is removed before: the folder's journal
# is new).
STEPS = [
    ("replace", 1, "before", "new"),  # staging written and the commit journaled: it is rolled forward
    ("replace", 1, "after", "new"),  # no out at all: the old build sits aside, the new one is staged
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
    # Whatever step it died at, the journal's repair gives back one whole build …
    settle(out)
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
    assert any(p.name.startswith(".build.jbcompile-build-") for p in tmp_path.iterdir())
    write_build(compile_folder(mini_sources), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_what_only_looks_like_a_leftover_is_never_removed(mini_sources: Path, tmp_path: Path) -> None:
    """Leftovers are known by the journal that announced them, never guessed from their names."""
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    lookalikes = [tmp_path / ".build.old-abc123", tmp_path / ".build.jbcompile-build-0123abcd"]
    for folder in lookalikes:
        folder.mkdir()
        (folder / "mine.txt").write_text("keep")
    settle(out)
    write_build(compile_folder(mini_sources), out)
    assert all((folder / "mine.txt").read_text() == "keep" for folder in lookalikes)


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
