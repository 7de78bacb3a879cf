"""A release's rows in JSON Lines, read by the tool's one reader (:mod:`jbcompile.jsonl`) and parsed by
the importer that knows the format.

A file that cannot be opened stops the import (IM001; F001/F002 for a file beyond the bound of a release
or one that is not a regular file, after every file was tried: nothing is written);
a line that is not a readable JSON object, or a row that does not fit the format, is skipped, reported
where it stands and counted as an input row not reproduced; so is a row that repeats an earlier one
(IM064: the same name, or the same content under another name), which ``score`` and ``audit`` refuse
(EV121): the import keeps the first and counts each row of the input once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..jsonl import JsonCodes, limited, read_json_lines, repeated
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
    # the fields that name a row, and those that qualify the name (BBQ numbers its rows per category):
    # two rows of one name, or of one content apart from the name, are one row given twice (IM064)
    name_fields: tuple[str, ...] = ("example_id",)
    name_scope: tuple[str, ...] = ()
    # whether one content under two names is a repeat: not in BBQ's format, whose release gives a pair
    # it drew twice the same ambiguous rows under their own ids
    same_content: bool = True


REPEATED = "IM064"


def row_name(data: Any, fields: Sequence[str], scope: Sequence[str] = ()) -> Hashable | None:
    """What names a row (``scope`` and ``fields`` values, as JSON text), or None when it lacks a name."""
    if not isinstance(data, dict) or any(data.get(name) is None for name in fields):
        return None
    return json.dumps([data.get(name) for name in (*scope, *fields)], ensure_ascii=False)


def row_content(data: Any, fields: Sequence[str]) -> Hashable:
    """A row's content apart from the fields that name it, as canonical JSON text."""
    if not isinstance(data, dict):
        return json.dumps(data, ensure_ascii=False, sort_keys=True)
    rest = {key: value for key, value in data.items() if key not in fields}
    return json.dumps(rest, ensure_ascii=False, sort_keys=True)


def repeats(
    rows: Sequence[Any], fields: Sequence[str], scope: Sequence[str] = (), same_content: bool = True
) -> dict[int, tuple[int, str]]:
    """Each row (by position) that repeats an earlier one → (the earlier one's position, what they share:
    ``name``, ``content`` or ``both``). Found by :func:`jbcompile.jsonl.repeated`, as ``score`` finds an
    example id on two lines."""
    found: dict[int, tuple[int, str]] = {}
    contents = [row_content(row, fields) if same_content else None for row in rows]
    for what, keys in (("content", contents), ("name", [row_name(row, fields, scope) for row in rows])):
        for positions in repeated(keys).values():
            for position in positions[1:]:
                both = found.get(position, (None, ""))[0] == positions[0]
                found[position] = (positions[0], "both" if both else what)
    return found


def repeat_problem(
    code: str,
    row: Any,
    what: str,
    fields: Sequence[str],
    path: str,
    line: int | None,
    first: tuple[str, int | None],
) -> Diagnostic:
    """The diagnostic of a row given twice (``what`` it shares with the earlier one: :func:`repeats`), at
    the later line, naming the earlier one."""
    where = f"line {first[1]}" if first[0] == path else f"{first[0]}:{first[1]}"
    name = ", ".join(f"{field} {row.get(field)!r}" for field in fields) if isinstance(row, dict) else ""
    content = f"content (all but {', '.join(fields)})"
    same = {"name": name, "content": content, "both": f"{name} and {content}"}[what]
    return Diagnostic(
        code,
        f"the row at {where} has the same {same}: a row given twice is imported once and counts once, "
        "so this one is skipped and counted as not reproduced",
        path=path,
        line=line,
        col=1,
        hint=f"keep one of the two rows (the one you mean{', with its own ' + fields[0] if fields else ''})",
    )


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
    parsed: list[tuple[Row, Any, str, int]] = []  # row, its JSON, file, line
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
                parsed.append((parse(data, display, number), data, display, number))
            except ValueError as exc:
                skipped.append(
                    Diagnostic(codes.unfit, str(exc), path=display, line=number, col=1, hint=codes.hint)
                )
                groups[number] = codes.group(data) if codes.group is not None else None
        _report_skipped(skipped, groups, report, codes)
    twice = repeats(
        [data for _, data, _, _ in parsed], codes.name_fields, codes.name_scope, codes.same_content
    )
    for position, (first, what) in sorted(twice.items()):
        _, data, display, number = parsed[position]
        _, _, first_path, first_line = parsed[first]
        report.template(GENERAL).rows += 1
        group = codes.group(data) if codes.group is not None else None
        report.skipped[group or UNREAD] = report.skipped.get(group or UNREAD, 0) + 1
        report.add(
            None,
            repeat_problem(
                REPEATED, data, what, codes.name_fields, display, number, (first_path, first_line)
            ),
        )
    rows = [row for position, (row, _, _, _) in enumerate(parsed) if position not in twice]
    if unopened:
        raise DiagnosticError(unopened)
    return rows


def _report_skipped(
    skipped: list[Diagnostic], groups: dict[int, str | None], report: ImportReport, codes: RowCodes
) -> None:
    """Each line of one file that did not come in: reported, and counted as an input row not reproduced
    in the group it names."""
    for problem in sorted(skipped, key=lambda d: d.line or 0):
        report.template(GENERAL).rows += 1
        group = groups.get(problem.line or 0)
        report.skipped[group or UNREAD] = report.skipped.get(group or UNREAD, 0) + 1
        report.add(None, replace(problem, message=f"{problem.message}; row skipped", hint=codes.hint))


def require_rows(rows: Sequence[Any], report: ImportReport, hint: str) -> None:
    """IM001 when no row of the input could be read, together with what kept the rows out (a CSV, a
    field missing on every line …): the reasons, not only that nothing came in."""
    if rows:
        return
    reasons = [finding for template in report.templates.values() for finding in template.findings]
    raise DiagnosticError(
        [*limited(reasons), Diagnostic(code="IM001", message="no readable rows in the input", hint=hint)]
    )
