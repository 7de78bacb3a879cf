"""A large build's second process (jbcompile.sidework): the lint rules, the audit's model library and its
fits run there, and the build folder is byte for byte what a build without it writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jbcompile.build as build_module
import jbcompile.sidework as sidework
import pytest
from jbcompile.build import build_folder
from jbcompile.project import load_project

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the side process forks (Linux)")


def _corpus(root: Path, templates: int) -> Path:
    spec = importlib.util.spec_from_file_location("bench_synthetic", REPO / "benchmarks" / "synthetic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_corpus(root, templates)
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JBBQ-like benchmark of 20 templates: enough for the audit's model (five folds by template) and
    for lint findings (its persons differ in a second attribute: JA119)."""
    return _corpus(tmp_path_factory.mktemp("corpus") / "sources", 20)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _submitted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions the side process is given (it still runs them)."""
    names: list[str] = []
    submit = sidework.SideProcess.submit

    def spy(self, function, *args):
        target = args[0] if function is sidework._on_inherited else function
        names.append(getattr(target, "__name__", None) or target.func.__name__)
        return submit(self, function, *args)

    monkeypatch.setattr(sidework.SideProcess, "submit", spy)
    return names


def test_a_build_with_a_side_process_writes_what_one_without_writes(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone, _ = build_folder(load_project(corpus), tmp_path / "alone")
    monkeypatch.setattr(sidework, "PARALLEL_MIN_TEMPLATES", 1)
    names = _submitted(monkeypatch)
    beside, _ = build_folder(load_project(corpus), tmp_path / "beside")

    assert names[:2] == ["run_source_checks", "load_probe_libraries"]
    assert names.count("cross_validated_scores") == 2  # the model of each config (full, lite) fitted there
    assert _files(tmp_path / "alone") == _files(tmp_path / "beside")
    assert [d.code for d in beside.diagnostics] == [d.code for d in alone.diagnostics]
    assert "JA119" in {d.code for d in beside.diagnostics}  # the lint rules' findings came back
    model = [r for r in beside.audit.results if r.probe == "context-free"]
    assert model and all(r.not_run is None for r in model), model


def _broken_checks(project, *, release=False):
    raise RuntimeError("a lint rule broke")


def test_a_failure_in_the_side_process_fails_the_build_and_keeps_the_old_one(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "build"
    build_folder(load_project(corpus), out)
    before = _files(out)
    monkeypatch.setattr(sidework, "PARALLEL_MIN_TEMPLATES", 1)
    monkeypatch.setattr(build_module, "run_source_checks", _broken_checks)
    with pytest.raises(RuntimeError, match="a lint rule broke"):
        build_folder(load_project(corpus), out)
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]  # no staging folder left behind


def test_the_side_process_dies_with_a_build_killed_outright(tmp_path: Path) -> None:
    """A build killed with SIGKILL cannot shut its pool down: its worker must not live on, blocked on a
    pipe that it holds both ends of."""
    import os
    import signal
    import subprocess
    import time

    import psutil

    sources = _corpus(tmp_path / "sources", sidework.PARALLEL_MIN_TEMPLATES)
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    command = [sys.executable, "-m", "jbcompile", "build", "-s", str(sources), "-o", str(tmp_path / "out")]
    build = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        parent = psutil.Process(build.pid)
        deadline = time.monotonic() + 60
        while not (workers := parent.children()):
            assert build.poll() is None, "the build ended before it forked its worker"
            assert time.monotonic() < deadline, "the build forked no worker"
            time.sleep(0.02)
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
        gone, alive = psutil.wait_procs(workers, timeout=5)
    finally:
        build.kill()
        build.wait()
    for worker in alive:
        worker.kill()
    assert not alive, f"the worker outlived the killed build: {alive}"
