"""The compile pipeline: sources → checked project → rows per config → verified → build folder.

``compile_project`` is pure (no writes); ``write_build`` writes the folder atomically, so a failed build
leaves the previous one untouched.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from .diagnostics import Diagnostic, DiagnosticError, Severity, has_errors
from .fsio import replaced_folder
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
    """sha256 over every source file (path and bytes), independent of file system order.

    The files are those of :func:`jbcompile.sourcefiles.walk_sources`, the rule the loader follows too: a file
    the build reads is always in the hash, and a file it skips never is.
    """
    from .sourcefiles import walk_sources

    digest = hashlib.sha256()
    root = Path(root)
    for path in walk_sources(root).files:
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        with path.open("rb") as handle:  # in blocks: a large stray file must not fill the memory
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


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
    diagnostics.extend(_drop_optional_empty(project, configs))
    diagnostics.extend(_emptiness(project, configs))
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


def _drop_optional_empty(project: Project, configs: dict[str, ConfigRows]) -> list[Diagnostic]:
    """A kind's config with no rows while another of its configs has some (``sobaco_dummy`` of a set
    without dummy problems) is left out of the build, with a note, rather than shipped empty."""
    from .project import display_path

    notes = []
    for name, config in list(configs.items()):
        if config.rows or not any(o.rows for o in configs.values() if o.kind == config.kind):
            continue
        del configs[name]
        notes.append(
            Diagnostic(
                code="B007",
                message=f"config {name!r} has no rows (no template of that sort): left out of the build",
                path=display_path(project.root),
                severity=Severity.INFO,
            )
        )
    return notes


def _emptiness(project: Project, configs: dict[str, ConfigRows]) -> list[Diagnostic]:
    """An empty build is always a mistake (a missing or misspelled templates/, every template skipped)."""
    from .project import display_path

    if not project.templates:
        return [
            Diagnostic(
                code="B002",
                message=f"no template to build in {display_path(project.root / 'templates')}",
                path=display_path(project.root),
                hint="add templates under templates/<Category>/, or translate them for this --lang",
            )
        ]
    return [
        Diagnostic(
            code="B006",
            message=f"config {name!r} has no rows",
            path=display_path(project.root),
            hint="check that the templates of this kind expand to rows (see the other diagnostics)",
        )
        for name, config in configs.items()
        if not config.rows
    ]


def write_build(
    compiled: Compiled,
    out_dir: Path,
    *,
    formats: Sequence[str] = ("parquet",),
    cards_dir: Path | None = None,
) -> dict:
    """Write the build folder atomically; return the manifest.

    Refuses (B001, B003) a folder that is not a build, or one whose replacement would take the sources
    or the working folder with it; any write failure (B004) leaves the previous build as it was.
    """
    from .emit import write_folder

    out_dir = Path(out_dir)
    empty = _emptiness(compiled.project, compiled.configs)
    if empty:
        raise DiagnosticError(empty)
    with write_errors(out_dir, "the build folder"):
        _refuse_unsafe_out(out_dir, compiled.project.root)
    with (
        write_errors(out_dir, "the build folder"),
        replaced_folder(out_dir, "tmp", before=lambda: _refuse_foreign_folder(out_dir)) as staging,
        _no_cyclic_gc(),
    ):
        manifest = write_folder(compiled, staging, formats=formats, cards_dir=cards_dir)
    return manifest


_WRITE_HINTS = {
    errno.ENOSPC: "free some disk space, or choose --out on another disk",
    errno.EDQUOT: "free some space in your quota, or choose --out on another disk",
    errno.EFBIG: "a file size limit is set (ulimit -f): raise it, or write elsewhere",
    errno.EACCES: "choose a --out you may write to",
    errno.EPERM: "choose a --out you may write to",
    errno.EROFS: "the file system is read-only: choose another --out",
}


@contextmanager
def write_errors(out: Path, what: str) -> Iterator[None]:
    """Turn a failed write (full disk, size limit, permissions …) into a B004 diagnostic, no traceback."""
    try:
        yield
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "error")
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B004",
                    message=f"cannot write {what} {out}: {exc.strerror or exc} ({name}); the previous "
                    "one is untouched",
                    path=str(out),
                    hint=_WRITE_HINTS.get(exc.errno or 0, "check the folder and the disk"),
                )
            ]
        ) from None


def check_out_dir(out_dir: Path, sources: Path) -> None:
    """Refuse a --out that a build may not replace, before spending time on compiling (B001, B003).

    Sources that are not a sources folder (no dataset.yaml) are left for the loader to report.
    """
    if not (Path(sources) / "dataset.yaml").is_file():
        return
    with write_errors(Path(out_dir), "the build folder"):
        _refuse_unsafe_out(Path(out_dir), sources)
        _refuse_foreign_folder(Path(out_dir))


def _refuse_unsafe_out(out_dir: Path, sources: Path) -> None:
    """Replacing --out must never take the working folder or the sources with it."""
    out = Path(os.path.abspath(out_dir))
    resolved = out.resolve()
    here = Path.cwd().resolve()
    root = Path(sources).resolve()
    problem = None
    if resolved == here or here.is_relative_to(resolved):
        problem = "is the working folder or holds it"
    elif root.is_relative_to(resolved):
        problem = f"holds the sources ({sources})"
    elif resolved.is_relative_to(root):
        problem = f"is inside the sources ({sources}): their hash would change with every build"
    if problem:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B003",
                    message=f"--out {out_dir} {problem}; a build replaces its whole folder",
                    path=str(out_dir),
                    hint="choose a folder of its own, e.g. --out build",
                )
            ]
        )


# Files a file manager drops into any folder it shows; replacing them loses nothing.
_DESKTOP_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


def _refuse_foreign_folder(out_dir: Path) -> None:
    """Only an empty folder, or a build folder (by its manifest's content), may be replaced."""
    from .emit.manifest import is_jbcompile_manifest, read_manifest

    problem = None
    if out_dir.is_symlink():
        problem = "is a symbolic link (a build would replace the link, not write where it points)"
    elif out_dir.exists() and not out_dir.is_dir():
        problem = "exists and is not a folder"
    elif out_dir.is_dir() and any(out_dir.iterdir()):
        if not is_jbcompile_manifest(out_dir / "manifest.json"):
            problem = "exists and is not a jbcompile build folder (no manifest written by jbcompile)"
        else:
            listed = set(read_manifest(out_dir)["files"]) | {"manifest.json"}
            foreign = sorted(
                p.relative_to(out_dir).as_posix()
                for p in out_dir.rglob("*")
                if not p.is_dir()
                and p.relative_to(out_dir).as_posix() not in listed
                and p.name not in _DESKTOP_LITTER
            )
            if foreign:
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                problem = f"holds files that are not part of the build ({shown})"
    if problem:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B001",
                    message=f"{out_dir} {problem}; refusing to replace it",
                    path=str(out_dir),
                    hint="choose another --out, or move those files away yourself",
                )
            ]
        )
