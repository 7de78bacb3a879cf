"""The full names BBQ's released rows give its Race_ethnicity proper-name templates (``--names-from``).

BBQ's generator pairs five random first names of the stereotyped ethnicities, each with a random last
name of its ethnicity, with five random names of other ethnicities: a template's possible rows number
millions, so no build holds them all, and a seeded draw of our own reproduces none of the released
ones. Given the released rows, each such template takes the names they use instead: its target group
is every stereotyped person those rows name, its other group every other person.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from .bbq_jsonl import parse_row
from .bbq_templates import RACE, matches_group


@dataclass
class ReleasedNames:
    """The persons one template's released rows name, in the order they first appear."""

    targets: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    rows: int = 0
    unusable: list[Diagnostic] = field(default_factory=list)  # rows whose persons cannot be told apart

    def add(self, target: str, other: str) -> None:
        self.rows += 1
        for name, names in ((target, self.targets), (other, self.others)):
            if name not in names:
                names.append(name)


def read_released_names(paths: Sequence[Path], category: str = RACE) -> dict[str, ReleasedNames]:
    """Per ``Q_id`` of ``category``: the persons of its released rows, told apart by answer_info's tag
    (``F-Black``: gender, then ethnicity) against the stereotyped groups. Rows of other categories are
    passed over; a row whose persons cannot be told apart is kept as a finding (IM052) for its template
    to report when it uses the names; an unreadable file or row raises DiagnosticError (IM051)."""
    from ..project import display_path

    found: dict[str, ReleasedNames] = {}
    problems: list[Diagnostic] = []
    for path in paths:
        display = display_path(Path(path))
        try:
            lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(_problem(display, None, f"cannot read {display}: {exc}"))
            continue
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                row = parse_row(json.loads(raw), display, number)
            except (json.JSONDecodeError, ValueError) as exc:
                problems.append(_problem(display, number, f"not a BBQ-format row: {exc}"))
                continue
            if row.category != category:
                continue
            names = found.setdefault(row.question_index, ReleasedNames())
            persons = [(row.persons[i], row.tags[i]) for i in range(3) if i != row.unknown_index]
            stereotyped = [matches_group(tag.split("-", 1)[-1], row.stereotyped) for _, tag in persons]
            if stereotyped.count(True) != 1 or not all(text for text, _ in persons):
                names.unusable.append(
                    row.diagnostic(
                        "IM052",
                        f"cannot tell the stereotyped person by the tags {[t for _, t in persons]} "
                        f"(stereotyped groups {list(row.stereotyped)}); the row's names are not used",
                        Severity.WARNING,
                    )
                )
                continue
            names.add(persons[stereotyped.index(True)][0], persons[stereotyped.index(False)][0])
    if problems:
        raise DiagnosticError(problems)
    return found


def _problem(path: str, line: int | None, message: str) -> Diagnostic:
    return Diagnostic(
        code="IM051",
        message=message,
        path=path,
        line=line,
        col=1 if line else None,
        hint="pass BBQ's released data/<Category>.jsonl to --names-from",
    )
