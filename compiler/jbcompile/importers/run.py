"""The steps every import takes, whatever its format: refuse what it may not do before reading anything,
read, write the sources atomically, then check them against the input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..fsio import write_atomic
from ..jsonl import dumps
from ..outputs import overlaps, refuse, writing
from .interface import Importer, ProgressBar, no_progress
from .report import ImportReport
from .writer import check_inputs, outputs_of, report_problems, target_problems, write_sources


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
    """Refuse, before reading any input, an input given twice, an output that is, holds or lies inside an
    input (or the other output), an --out the import may not replace and a --report it cannot write;
    read the input into a draft; then, holding --out and --report (:func:`jbcompile.outputs.writing`),
    write the sources atomically, check them against the input and write the report. Returns the
    report; a DiagnosticError before the write means nothing was written. Options not given take their
    defaults."""
    options = importer.option_values(options)
    groups = input_groups(importer, inputs, options)
    for group in groups:
        check_inputs(group)
    named = [("an input", path) for group in groups for path in group]
    outputs = outputs_of(out, report_path)
    refuse([*overlaps(outputs, named), *target_problems(out, force), *report_problems(report_path, force)])
    imported = importer.read(inputs, options)
    with writing(outputs, named, "import"):
        refuse(report_problems(report_path, force))  # again, now that it is held
        write_sources(imported.draft, out, imported.report, force=force)
        importer.verify_round_trip(out, imported, progress)
        if report_path is not None:
            write_atomic(report_path, dumps(imported.report.to_json(), indent=2) + "\n")
    return imported.report
