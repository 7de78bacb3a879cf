"""Write an importer's :class:`~.draft.SourcesDraft` as a sources folder, atomically, and refuse the
inputs and targets an import must not use.

The folder is validated against the schema (loaded by the compiler's own loader) and written in one
step: it appears whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..jsonl import limited
from ..outputs import Output, claim, location, refuse, renamed
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


def report_problems(path: Path | None, force: bool = False) -> list[Diagnostic]:
    """A --report that cannot or may not be written, found before the import writes anything and again
    once it is held: a folder or a file in a missing folder (IM059); a file inside a run, build or
    comparison folder of jbcompile, which is that folder's own; an existing file that is not an import
    report of ours, without --force (IM060)."""
    if path is None:
        return []
    path = Path(path)
    problem = None
    if path.is_dir():
        problem = "is a folder"
    elif not path.parent.is_dir():
        problem = f"is in a folder that does not exist ({path.parent})"
    if problem is not None:
        return [
            Diagnostic(
                code="IM059",
                message=f"--report {path} {problem}",
                path=str(path),
                hint="give a file in an existing folder",
            )
        ]
    held = held_by(path)
    if held is not None:
        problem, hint = f"lies inside {held}", "write the report outside that folder"
    elif (path.exists() or path.is_symlink()) and not force and not is_import_report(path):
        problem = "exists and is not an import report"
        hint = "choose a new --report file, or pass --force to replace it"
    else:
        return []
    return [Diagnostic(code="IM060", message=f"--report {path} {problem}", path=str(path), hint=hint)]


def is_import_report(path: Path) -> bool:
    """Whether ``path`` holds an import report (``ImportReport.to_json``), recognized by its content."""
    from ..evaluate.predictions import json_object

    written = json_object(path)
    return (
        written is not None
        and set(written) >= {"rows", "reproduced", "coverage", "files_written", "templates"}
        and isinstance(written.get("templates"), list)
    )


def held_by(path: Path) -> str | None:
    """The jbcompile folder ``path`` would be written into (a run of eval or score, a build, a
    comparison), named; None if none. Its files are that folder's: another command writing there
    would mix two outputs in one folder."""
    from ..evaluate.compare.write import is_compare_folder
    from ..evaluate.predictions import is_run_folder
    from ..sourcefiles import is_jbcompile_manifest

    for folder in location(path).parents:
        if is_run_folder(folder):
            return f"the run folder {folder}"
        if is_jbcompile_manifest(folder / "manifest.json"):
            return f"the build folder {folder}"
        if is_compare_folder(folder):
            return f"the comparison folder {folder}"
    return None


def outputs_of(out: Path, report_path: Path | None) -> list[Output]:
    """An import's outputs: --out, replaced whole (IM056 when it overlaps an input), and --report."""
    report = [Output("--report", Path(report_path))] if report_path is not None else []
    return [Output("--out", Path(out), "IM056", whole=True), *report]


def target_problems(out: Path, force: bool) -> list[Diagnostic]:
    """Whether --out may be replaced: a file never is, a folder that is not empty only with --force
    (IM020). Asked before any work is done, and again once the folder is held."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        problem, hint = "is a file; --out names the sources folder to write", "choose a new --out folder"
    elif out.exists() and any(out.iterdir()) and not force:
        problem, hint = "exists and is not empty", "choose a new --out folder, or pass --force to replace it"
    else:
        return []
    return [Diagnostic(code="IM020", message=f"{out} {problem}", path=str(out), hint=hint)]


def write_folder(files: dict[str, str], out: Path, force: bool = False, lang: str = "ja") -> None:
    """Write ``files`` as the folder ``out`` in one step, after checking it loads as a project.

    The folder is built next to ``out``, loaded with the compiler's own loader (so what is written is a
    sources folder ``jbcompile build`` accepts), then swapped in — all under ``out``'s claim, taken
    before ``out`` is judged (IM020).
    """
    from ..project import load_project

    out = Path(out)
    with claim(out, "import") as place:
        refuse(target_problems(out, force))
        with place.replaced_folder("import") as staging:
            for relative, text in files.items():
                path = staging / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            try:
                load_project(staging, lang=lang)
            except DiagnosticError as error:  # name the folder the user asked for, not the staging copy
                raise DiagnosticError(renamed(error.diagnostics, staging, out)) from None


def write_sources(draft: SourcesDraft, out: Path, report: ImportReport, force: bool = False) -> None:
    """Write the draft as the sources folder ``out`` (validated, atomic) and note the files in the report.

    An import that brought nothing in writes nothing, and says why at the input files themselves.
    """
    if not draft.templates:
        reasons = [d for d in report.diagnostics if d.severity is not Severity.INFO]
        hint = (
            "check the input files named above (their columns and format)"
            if reasons
            else "the input holds nothing to import (an empty file or list): give the release's own file"
        )
        raise DiagnosticError(
            [
                *limited(reasons),
                Diagnostic("IM037", "nothing was imported: no template came from the input", hint=hint),
            ]
        )
    files = draft.files()
    write_folder(files, Path(out), force=force, lang=draft.lang)
    report.files_written = sorted(files)
