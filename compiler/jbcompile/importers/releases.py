"""A release's rows in JSON Lines, read by the tool's one reader (:mod:`jbcompile.jsonl`) and parsed by
the importer that knows the format.

A file that cannot be opened stops the import (IM001; F001/F002 for a file beyond the bound of a release
or one that is not a regular file, after every file was tried: nothing is written);
a line that is not a readable JSON object, or a row that does not fit the format, is skipped, reported
where it stands and counted as an input row not reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..jsonl import JsonCodes, limited, read_json_lines
from ..paths import display_path
from ..reading import RELEASE
from .report import GENERAL, UNREAD, ImportReport

Row = TypeVar("Row")
# Parses one JSON object of ``path`` at ``line`` as the format's row; a ValueError says what does not fit.
Parse = Callable[[dict[str, Any], str, int], Row]


@dataclass(frozen=True)
class RowCodes:
    """The codes an importer reports its rows' problems under."""

    unreadable: str  # a line that is not JSON (nor UTF-8 text, nor shallow enough to parse)
    unfit: str  # a JSON line that is not a row of the format (not an object, a field missing or wrong)
    hint: str  # what the format's rows look like (the hint of every row skipped)
    # the group (a category) a row that does not fit still names, or None: the import's per-group
    # figures count it there (``ImportReport.skipped``)
    group: Callable[[Any], str | None] | None = None


def read_release_rows(
    paths: Sequence[Path], parse: Parse[Row], report: ImportReport, codes: RowCodes
) -> list[Row]:
    """Every row of the files, parsed; what cannot come in is in ``report`` (a row not reproduced)."""
    json_codes = JsonCodes(
        not_json=codes.unreadable,
        too_deep=codes.unreadable,
        not_text=codes.unreadable,
        not_object=codes.unfit,
        not_rows=codes.unfit,
    )
    rows: list[Row] = []
    unopened: list[Diagnostic] = []
    for path in paths:
        display = display_path(Path(path))
        try:  # the shown path names the same file (relative to the working folder where it can be)
            lines = read_json_lines(Path(display), json_codes, RELEASE)
        except OSError as exc:
            unopened.append(
                Diagnostic(
                    code="IM001",
                    message=f"cannot read {display}: {exc}",
                    path=display,
                    hint="check the path and that the file can be read",
                )
            )
            continue
        except DiagnosticError as error:  # not a regular file, or beyond the bound of a release (F001/F002)
            unopened.extend(error.diagnostics)
            continue
        skipped = list(lines.problems)
        if not lines.records and not skipped:  # an empty file among the inputs is said, not passed over
            report.add(
                None,
                Diagnostic(
                    "IM001",
                    f"{display} holds no rows: nothing came from it",
                    path=display,
                    severity=Severity.WARNING,
                    hint="check that this is the file you meant (a release's file is not empty)",
                ),
            )
        groups: dict[int, str | None] = {}  # line → the group a skipped row names
        for number, data in lines.records:
            try:
                rows.append(parse(data, display, number))
            except ValueError as exc:
                skipped.append(
                    Diagnostic(codes.unfit, str(exc), path=display, line=number, col=1, hint=codes.hint)
                )
                groups[number] = codes.group(data) if codes.group is not None else None
        for problem in sorted(skipped, key=lambda d: d.line or 0):
            report.template(GENERAL).rows += 1
            group = groups.get(problem.line or 0)
            report.skipped[group or UNREAD] = report.skipped.get(group or UNREAD, 0) + 1
            report.add(None, replace(problem, message=f"{problem.message}; row skipped", hint=codes.hint))
    if unopened:
        raise DiagnosticError(unopened)
    return rows


def require_rows(rows: Sequence[Any], report: ImportReport, hint: str) -> None:
    """IM001 when no row of the input could be read, together with what kept the rows out (a CSV, a
    field missing on every line …): the reasons, not only that nothing came in."""
    if rows:
        return
    reasons = [finding for template in report.templates.values() for finding in template.findings]
    raise DiagnosticError(
        [*limited(reasons), Diagnostic(code="IM001", message="no readable rows in the input", hint=hint)]
    )
