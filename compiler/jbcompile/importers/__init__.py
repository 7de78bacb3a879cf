"""The machinery every importer shares: a :class:`SourcesDraft` written atomically as a sources folder,
and the :class:`ImportReport` of what came in and what did not. The importers themselves live in their
design's package (``designs/<name>/importers``).
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from .report import ImportReport, TemplateReport
from .writer import SourcesDraft, write_folder


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


__all__ = [
    "ImportReport",
    "SourcesDraft",
    "TemplateReport",
    "write_sources",
]
