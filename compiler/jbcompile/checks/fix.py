"""``jbcompile check --fix``: apply the rules' edits to the YAML sources until a pass changes nothing.

The loop is guarded (sqlfluff's design): it stops when a pass changes nothing, and gives up after
:data:`MAX_PASSES` passes or when it meets a state it has already been in. Giving up changes no file and
reports JA005; so does a pass that leaves the sources unreadable. Each pass rewrites files through
:func:`jbcompile.yamledit.apply_edits`, which keeps comments, key order and every byte outside the
edited characters.

All or nothing: the passes run on a copy of the sources beside them, under the sources' claim
(:func:`jbcompile.outputs.claim`: a second ``--fix`` waits); the files that changed then replace theirs
in one journaled commit (:meth:`jbcompile.outputs.Claim.commit`), which the next run rolls forward if
a kill cuts it short. A file that cannot be written (read-only, full disk) is found before the commit,
or its failure takes back every file already renamed; either way S017 names it and no file is changed.

Sources whose ``dataset.yaml`` sets ``keep_as_written: true`` (what ``jbcompile import`` writes: the texts
are a release's own) are never rewritten: the findings are reported, and the report says how many fixes
were held back, so that the caller can name the setting.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Edit, Severity
from ..outputs import Claim, claim, location, renamed
from ..reading import DATA_FILE, SOURCE, check_file, read_bytes
from ..sourcefiles import walk_sources
from ..yamledit import apply_edits

MAX_PASSES = 10


@dataclass
class FixReport:
    passes: int = 0
    edits_applied: int = 0
    changed_files: list[str] = field(default_factory=list)
    converged: bool = True
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what remains after fixing
    held_back: int = 0  # fixable findings left alone because dataset.yaml sets keep_as_written


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {path: read_bytes(path, SOURCE) for path in sorted(root.rglob("*.yaml")) if path.is_file()}


def _state(files: dict[Path, bytes]) -> str:
    digest = hashlib.sha256()
    for path, data in sorted(files.items()):
        digest.update(str(path).encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def _unwritable(shown: dict[Path, Path]) -> list[Diagnostic]:
    """Files --fix would have to rewrite but may not (the file or its folder is read-only); ``shown``:
    each file → the path to name it by."""
    out = []
    for path, name in sorted(shown.items()):
        if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
            out.append(_write_problem(name, "permission denied"))
    return out


def _write_problem(path: Path, why: str) -> Diagnostic:
    return Diagnostic(
        code="S017",
        message=f"--fix cannot write {path}: {why}; no file was changed",
        path=str(path),
        hint="make the sources folder writable (or fix the findings by hand), then run --fix again",
    )


def fix_sources(
    root: Path,
    *,
    lang: str = "ja",
    release: bool = False,
    only: Iterable[str] | None = None,
    max_passes: int = MAX_PASSES,
) -> FixReport:
    """Fix what the rules can fix in the sources folder ``root``; DiagnosticError if it does not load.

    ``only`` restricts the fixes (and the findings reported) to some rule codes.
    """

    root = Path(root)
    try:
        with claim(root, "check --fix") as place:
            return _fix_held(root, place, lang, release, only, max_passes)
    except OSError as exc:  # not held (a read-only place), or a commit taken back: nothing was changed
        where = Path(exc.filename) if exc.filename else root
        raise DiagnosticError([_write_problem(where, exc.strerror or str(exc))]) from None


def _fix_held(
    root: Path, place: Claim, lang: str, release: bool, only: Iterable[str] | None, max_passes: int
) -> FixReport:
    """The fix of ``root``, held as ``place``: passes on a copy, then one commit of the fixed files."""
    work = place.temp_folder(location(root), "fix")
    try:
        copies = _copy_sources(root, work)
        original = {copy: read_bytes(copy, DATA_FILE) for copy in copies}
        report = _fix_passes(work, _snapshot(work), lang, release, only, max_passes)
    except DiagnosticError as error:
        raise DiagnosticError(renamed(error.diagnostics, work, root)) from None
    except OSError as exc:  # the copy could not be written: nothing was changed
        where = Path(exc.filename) if exc.filename else work
        problem = _write_problem(where, exc.strerror or str(exc))
        raise DiagnosticError(renamed([problem], work, root)) from None
    report.diagnostics = renamed(report.diagnostics, work, root)
    fixed = [copy for copy in copies if report.converged and read_bytes(copy, DATA_FILE) != original[copy]]
    shown = {copies[copy]: root / copy.relative_to(work) for copy in fixed}
    refused = _unwritable(shown)
    if refused:
        raise DiagnosticError(refused)
    place.commit({copies[copy]: read_bytes(copy, DATA_FILE) for copy in fixed})  # every fixed file, or none
    report.changed_files = [str(path) for path in shown.values()]
    return report


def _copy_sources(root: Path, work: Path) -> dict[Path, Path]:
    """Copy every file of the sources into ``work`` (links become plain files there, so that no edit
    reaches the sources before the commit); each copy → the file it stands for."""
    copies = {}
    for path in walk_sources(root).files:
        copy = work / path.relative_to(root)
        copy.parent.mkdir(parents=True, exist_ok=True)
        check_file(path, DATA_FILE)  # a regular file within its bound, copied in blocks
        shutil.copyfile(path, copy)
        copies[copy] = location(path)
    return copies


def _fix_passes(
    root: Path,
    original: dict[Path, bytes],
    lang: str,
    release: bool,
    only: Iterable[str] | None,
    max_passes: int,
) -> FixReport:
    from ..project import load_project
    from .runner import run_checks

    seen = {_state(original)}
    report = FixReport()
    first_findings: list[Diagnostic] | None = None
    only = list(only) if only is not None else None
    for _ in range(max_passes):
        try:
            project = load_project(root, lang)
        except DiagnosticError as exc:
            if first_findings is None:
                raise
            return _gave_up(report, first_findings, "a fix left the sources unreadable", exc.diagnostics)
        diagnostics = run_checks(project, release=release, only=only)
        if first_findings is None:
            first_findings = diagnostics
        report.diagnostics = diagnostics
        by_file: dict[str, list[tuple[tuple, Edit]]] = defaultdict(list)
        for diagnostic in diagnostics:
            if diagnostic.edits and diagnostic.path and diagnostic.key_path is not None:
                by_file[diagnostic.path].extend((diagnostic.key_path, edit) for edit in diagnostic.edits)
        if project.dataset.keep_as_written:  # a release's own text: report, never rewrite
            report.held_back = sum(1 for d in diagnostics if d.edits)
            break
        if not by_file:
            break
        changed = 0
        for path, edits in sorted(by_file.items()):
            outcome = apply_edits(Path(path), edits)
            changed += len(outcome.spliced) + len(outcome.rewritten)
        report.passes += 1
        report.edits_applied += changed
        if not changed:
            break
        state = _state(_snapshot(root))
        if state in seen:
            return _gave_up(report, first_findings, "fixes undo each other", [])
        seen.add(state)
    else:
        return _gave_up(report, first_findings or [], f"still changing after {max_passes} passes", [])
    return report


def _gave_up(report: FixReport, findings: list[Diagnostic], why: str, extra: list[Diagnostic]) -> FixReport:
    report.converged = False
    report.changed_files = []
    report.edits_applied = 0
    report.diagnostics = [
        *findings,
        *extra,
        Diagnostic(
            code="JA005",
            message=f"--fix did not converge ({why}); the sources were left as they were",
            severity=Severity.ERROR,
            hint="fix the findings by hand, or correct rules/normalization.yaml if its entries conflict",
        ),
    ]
    return report
