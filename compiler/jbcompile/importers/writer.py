"""Write an importer's :class:`~.draft.SourcesDraft` as a sources folder, atomically, and refuse the
inputs and targets an import must not use.

The folder is validated against the schema (loaded by the compiler's own loader) and written in one
step: it appears whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..fsio import replaced_folder, taken_with
from ..sourcefiles import display_path
from .draft import SourcesDraft
from .report import ImportReport


def check_inputs(inputs: Sequence[Path]) -> None:
    """Refuse an input file given twice (its rows would count twice): IM057."""
    seen: dict[Path, Path] = {}
    problems = []
    for path in inputs:
        key = Path(path).resolve()
        if key in seen:
            problems.append(
                Diagnostic(
                    code="IM057",
                    message=f"{path} is given twice (as {seen[key]} too); its rows would be counted twice",
                    path=str(path),
                    hint="pass each file once",
                )
            )
        seen.setdefault(key, Path(path))
    if problems:
        raise DiagnosticError(problems)


def check_report_path(path: Path | None) -> None:
    """Refuse a --report that cannot be written, before the import writes anything (IM059)."""
    if path is None:
        return
    problem = None
    if Path(path).is_dir():
        problem = "is a folder"
    elif not Path(path).parent.is_dir():
        problem = f"is in a folder that does not exist ({Path(path).parent})"
    if problem:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM059",
                    message=f"--report {path} {problem}",
                    path=str(path),
                    hint="give a file in an existing folder",
                )
            ]
        )


def check_target(out: Path, force: bool, inputs: Sequence[Path] = ()) -> None:
    """Refuse, before any work is done, a --out that is a file, a non-empty folder (unless --force),
    or a folder whose replacement would take the working folder or an input with it (IM056)."""
    out = Path(out)
    taken = taken_with(out, [("an input", Path(path)) for path in inputs])
    if taken is not None:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM056",
                    message=f"--out {out} {taken}; an import replaces its whole --out folder",
                    path=str(out),
                    hint="choose a new folder of its own, e.g. --out sources",
                )
            ]
        )
    if out.exists() and not out.is_dir():
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM020",
                    message=f"{out} is a file; --out names the sources folder to write",
                    path=str(out),
                    hint="choose a new --out folder",
                )
            ]
        )
    if out.exists() and any(out.iterdir()) and not force:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM020",
                    message=f"{out} exists and is not empty",
                    path=str(out),
                    hint="choose a new --out folder, or pass --force to replace it",
                )
            ]
        )


def _outside_staging(diagnostic: Diagnostic, staging: Path, out: Path) -> Diagnostic:
    from dataclasses import replace

    path = diagnostic.path or ""
    for prefix in (str(staging), display_path(staging)):
        if path.startswith(prefix):
            return replace(diagnostic, path=display_path(out) + path[len(prefix) :])
    return replace(diagnostic, message=diagnostic.message.replace(staging.name, out.name))


def write_folder(files: dict[str, str], out: Path, force: bool = False, lang: str = "ja") -> None:
    """Write ``files`` as the folder ``out`` in one step, after checking it loads as a project.

    The folder is built next to ``out``, loaded with the compiler's own loader (so what is written is a
    sources folder ``jbcompile build`` accepts), then swapped in.
    """
    from ..project import load_project

    check_target(out, force)
    out = Path(out)
    # replaced_folder: under a lock, after clearing what an interrupted import left beside ``out``
    with replaced_folder(out, "import") as staging:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        try:
            load_project(staging, lang=lang)
        except DiagnosticError as error:  # name the folder the user asked for, not the staging copy
            raise DiagnosticError([_outside_staging(d, staging, out) for d in error.diagnostics]) from None


def write_sources(draft: SourcesDraft, out: Path, report: ImportReport, force: bool = False) -> None:
    """Write the draft as the sources folder ``out`` (validated, atomic) and note the files in the report.

    An import that brought nothing in writes nothing, and says why at the input files themselves.
    """
    if not draft.templates:
        reasons = [d for d in report.diagnostics if d.severity is not Severity.INFO]
        raise DiagnosticError(
            [
                *reasons,
                Diagnostic(
                    "IM037",
                    "nothing was imported: no template came from the input",
                    hint="check the input files named above (their columns and format)",
                ),
            ]
        )
    files = draft.files()
    write_folder(files, Path(out), force=force, lang=draft.lang)
    report.files_written = sorted(files)
