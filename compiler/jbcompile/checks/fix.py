"""``jbcompile check --fix``: apply the rules' edits to the YAML sources until a pass changes nothing.

The loop is guarded (sqlfluff's design): it stops when a pass changes nothing, and gives up after
:data:`MAX_PASSES` passes or when it meets a state it has already been in. Giving up restores every
file as it was and reports JA005; so does a pass that leaves the sources unreadable. Each pass writes
its files atomically through :func:`jbcompile.yamledit.apply_edits`, which keeps comments, key order
and every byte outside the edited characters.

All or nothing: a file that cannot be written (read-only, full disk) is found before the pass writes,
or its failure undoes every file already fixed; either way S017 names it and no file is changed.

Sources whose ``dataset.yaml`` sets ``keep_as_written: true`` (what ``jbcompile import`` writes: the texts
are a release's own) are never rewritten: the findings are reported, and the report says how many fixes
were held back, so that the caller can name the setting.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Edit, Severity
from ..fsio import write_atomic
from ..reading import SOURCE, read_bytes
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


def _restore(original: dict[Path, bytes]) -> None:
    for path, data in original.items():
        if read_bytes(path, SOURCE) != data:
            write_atomic(path, data)


def _unwritable(paths: Iterable[Path]) -> list[Diagnostic]:
    """Files --fix would have to rewrite but may not (the file or its folder is read-only)."""
    out = []
    for path in sorted(set(paths)):
        if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
            out.append(_write_problem(path, "permission denied"))
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
    original = _snapshot(root)
    try:
        return _fix_passes(root, original, lang, release, only, max_passes)
    except OSError as exc:  # all or nothing: a file that cannot be written undoes every fix before it
        _restore(original)
        where = Path(exc.filename) if exc.filename else root
        raise DiagnosticError([_write_problem(where, exc.strerror or str(exc))]) from None
    except BaseException:
        _restore(original)
        raise


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
            _restore(original)
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
        refused = _unwritable(Path(path) for path in by_file)
        if refused:  # fix_sources restores what earlier passes wrote
            raise DiagnosticError(refused)
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
            _restore(original)
            return _gave_up(report, first_findings, "fixes undo each other", [])
        seen.add(state)
    else:
        _restore(original)
        return _gave_up(report, first_findings or [], f"still changing after {max_passes} passes", [])
    current = _snapshot(root)
    report.changed_files = [str(p) for p, data in original.items() if current.get(p) != data]
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
