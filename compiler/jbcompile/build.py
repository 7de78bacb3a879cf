"""The compile pipeline: sources → checked project → rows per config → verified → build folder.

``compile_project`` is pure (no writes); ``write_build`` writes the folder atomically, so a failed build
leaves the previous one untouched.
"""

from __future__ import annotations

import gc
import hashlib
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .diagnostics import Diagnostic, DiagnosticError, has_errors
from .fsio import staging_folder, swap_folder
from .kinds import ConfigSpec, Row, get_kind
from .project import Project

FORMATS = ("parquet", "jsonl")


@dataclass
class ConfigRows:
    spec: ConfigSpec
    kind: str
    rows: list[Row] = field(default_factory=list)


@dataclass
class Compiled:
    project: Project
    configs: dict[str, ConfigRows]
    diagnostics: list[Diagnostic]  # warnings and notes that did not stop the build

    @cached_property
    def sources_hash(self) -> str:
        return sources_hash(self.project.root)

    @property
    def default_config(self) -> str | None:
        return next(
            (name for name, c in self.configs.items() if c.spec.default), next(iter(self.configs), None)
        )


ProgressCallback = Callable[[str, int, int], None]


def sources_hash(root: Path) -> str:
    """sha256 over every file of a sources folder (path and bytes), independent of file system order."""
    digest = hashlib.sha256()
    root = Path(root)
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not _hidden(p.relative_to(root))):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") or part == "__pycache__" for part in relative.parts)


def run_source_checks(project: Project, *, release: bool = False) -> list[Diagnostic]:
    """The lint rules of `jbcompile check`, when that module is installed in this version."""
    try:
        from .checks import run_checks
    except ImportError:
        return []
    return list(run_checks(project, release=release))


# Below this many templates the lint rules run in this process: forking would cost more than it saves.
PARALLEL_CHECKS_MIN_TEMPLATES = 100
_FORKED_PROJECT: tuple[Project, bool] | None = None


def _checks_of_forked_project() -> list[Diagnostic]:
    assert _FORKED_PROJECT is not None
    project, release = _FORKED_PROJECT
    return run_source_checks(project, release=release)


def _start_checks(project: Project, release: bool) -> Callable[[], list[Diagnostic]]:
    """Start the lint rules; return how to wait for their findings.

    On a large benchmark they run in a forked process while this one expands the templates (two cores,
    two independent jobs); the child inherits the loaded project, so nothing is pickled on the way in.
    """
    global _FORKED_PROJECT
    if len(project.templates) < PARALLEL_CHECKS_MIN_TEMPLATES or not sys.platform.startswith("linux"):
        findings = run_source_checks(project, release=release)
        return lambda: findings
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _FORKED_PROJECT = (project, release)
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    try:
        future = pool.submit(_checks_of_forked_project)
    finally:
        _FORKED_PROJECT = None

    def wait() -> list[Diagnostic]:
        try:
            return future.result()
        finally:
            pool.shutdown()

    return wait


def compile_project(
    project: Project,
    *,
    checks: bool = True,
    release: bool = False,
    progress: ProgressCallback | None = None,
) -> Compiled:
    """Expand every template into its configs and verify every invariant; raise on any error.

    Check findings and expansion problems are reported together, so one run shows every problem.
    """
    diagnostics: list[Diagnostic] = list(project.notes)
    findings = _start_checks(project, release) if checks else list
    configs: dict[str, ConfigRows] = {}
    present = sorted({t.kind for t in project.templates}, key=_kind_rank)
    for kind_name in present:
        for spec in get_kind(kind_name).configs:
            configs[spec.name] = ConfigRows(spec, kind_name)
    total = len(project.templates)
    with _no_cyclic_gc():
        for done, template in enumerate(sorted(project.templates, key=lambda t: (t.model.category, t.id)), 1):
            built = get_kind(template.kind).build(template, project)
            diagnostics.extend(built.diagnostics)
            for config, rows in built.rows.items():
                configs[config].rows.extend(rows)
            if progress:
                progress("expand", done, total)
        for name, config in configs.items():
            diagnostics.extend(get_kind(config.kind).verify(name, config.rows, project))
    diagnostics[len(project.notes) : len(project.notes)] = findings()
    if has_errors(diagnostics):
        raise DiagnosticError(diagnostics)
    return Compiled(project, configs, diagnostics)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Rows are acyclic dicts; the cyclic collector would only rescan them, again and again (~25%)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _kind_rank(kind: str) -> int:
    from .kinds import kind_names

    return kind_names().index(kind)


def write_build(
    compiled: Compiled,
    out_dir: Path,
    *,
    formats: Sequence[str] = ("parquet",),
    cards_dir: Path | None = None,
) -> dict:
    """Write the build folder atomically; return the manifest."""
    from .emit import write_folder

    out_dir = Path(out_dir)
    _refuse_foreign_folder(out_dir)
    staging = staging_folder(out_dir, "tmp")
    try:
        with _no_cyclic_gc():
            manifest = write_folder(compiled, staging, formats=formats, cards_dir=cards_dir)
        swap_folder(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _refuse_foreign_folder(out_dir: Path) -> None:
    if out_dir.exists() and (
        not out_dir.is_dir() or (any(out_dir.iterdir()) and not (out_dir / "manifest.json").exists())
    ):
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B001",
                    message=f"{out_dir} exists and is not a jbcompile build folder; refusing to replace it",
                    path=str(out_dir),
                    hint="choose another --out, or remove that folder yourself",
                )
            ]
        )
