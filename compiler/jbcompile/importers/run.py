"""The steps every import takes, whatever its format: refuse what it may not do before reading anything,
read, write the sources atomically, then check them against the input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .interface import Importer, ProgressBar, no_progress
from .report import ImportReport
from .writer import check_inputs, check_report_path, check_target, write_sources


def input_groups(importer: Importer, inputs: Sequence[Path], options: Mapping[str, Any]) -> list[list[Path]]:
    """The input files, one group per argument or file option: a file may be given to two of them (as
    --names-from and --compare), but not twice to one."""
    groups = [list(inputs)]
    for option in importer.options:
        value = options.get(option.name)
        if option.type is Path:
            groups.append(list(value or []) if option.many else [] if value is None else [value])
    return groups


def run_import(
    importer: Importer,
    inputs: Sequence[Path],
    options: Mapping[str, Any],
    out: Path,
    *,
    force: bool = False,
    report_path: Path | None = None,
    progress: ProgressBar = no_progress,
) -> ImportReport:
    """Refuse an --out the import may not replace, an input given twice or a --report it cannot write
    (before reading any input); read the input into a draft, write it atomically as ``out``, then check
    the written sources against the input. Returns the report; a DiagnosticError before the write means
    nothing was written. Options not given take their defaults."""
    options = importer.option_values(options)
    groups = input_groups(importer, inputs, options)
    for group in groups:
        check_inputs(group)
    check_target(out, force, [path for group in groups for path in group])
    check_report_path(report_path)
    imported = importer.read(inputs, options)
    write_sources(imported.draft, out, imported.report, force=force)
    importer.verify_round_trip(out, imported, progress)
    return imported.report
