"""Bring BBQ-format data in as editable sources: template CSVs (``bbq-templates``) and released rows
(``bbq-jsonl``, with a round-trip check). Both fill a :class:`SourcesDraft` and write it atomically.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from .bbq_jsonl import SourceRow, import_bbq_jsonl
from .bbq_templates import import_bbq_templates
from .report import ImportReport, TemplateReport
from .roundtrip import verify_round_trip
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
    "SourceRow",
    "SourcesDraft",
    "TemplateReport",
    "import_bbq_jsonl",
    "import_bbq_templates",
    "verify_round_trip",
    "write_sources",
]
