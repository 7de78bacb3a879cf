"""The full names BBQ's released rows give its Race_ethnicity proper-name templates (``--names-from``).

BBQ's generator pairs five random first names of the stereotyped ethnicities, each with a random last
name of its ethnicity, with five random names of other ethnicities: a template's possible rows number
millions, so no build holds them all, and a seeded draw of our own reproduces none of the released
ones. Given the released rows, each such template takes the names they use instead: its target group
is every stereotyped person those rows name, its other group every other person.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from .bbq_jsonl import read_rows
from .bbq_templates import RACE, matches_group
from .report import ImportReport


@dataclass
class ReleasedNames:
    """The persons one template's released rows name, in the order they first appear."""

    targets: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    unusable: list[Diagnostic] = field(default_factory=list)  # rows whose persons cannot be told apart
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (target, other), once each
    gender: dict[str, str] = field(default_factory=dict)  # name → the gender its tag gives ("" if none)

    def add(self, target: str, other: str, genders: tuple[str, str] = ("", "")) -> None:
        if (target, other) not in self.pairs:
            self.pairs.append((target, other))
        for name, names, gender in ((target, self.targets, genders[0]), (other, self.others, genders[1])):
            self.gender.setdefault(name, gender)
            if name not in names:
                names.append(name)

    def by_gender(self) -> list[tuple[str, ReleasedNames]]:
        """The names split by gender (suffix ``-F``, ``-M``): BBQ pairs two names of one gender, and a
        template pairs every target with every other. Whole when a pair crosses genders or a name has
        none."""
        genders = sorted(set(self.gender.values()))
        if len(genders) < 2 or "" in genders or any(self.gender[t] != self.gender[o] for t, o in self.pairs):
            return [("", self)]
        parts = []
        for gender in genders:
            part = ReleasedNames(unusable=[] if parts else self.unusable)
            for target, other in self.pairs:
                if self.gender[target] == gender:
                    part.add(target, other, (gender, gender))
            parts.append((f"-{gender}", part))
        return parts


def read_released_names(paths: Sequence[Path], category: str = RACE) -> dict[str, ReleasedNames]:
    """Per ``Q_id`` of ``category``: the persons of its released rows, told apart by answer_info's tag
    (``F-Black``: gender, then ethnicity) against the stereotyped groups. Rows of other categories are
    passed over; a row whose persons cannot be told apart is kept as a finding (IM052) for its template
    to report when it uses the names. An unreadable file (IM001) or a line that is not a BBQ-format row
    (IM051) raises DiagnosticError: the names would be incomplete."""
    scratch = ImportReport()
    rows = read_rows(paths, scratch)
    if scratch.diagnostics:
        raise DiagnosticError(
            [
                replace(
                    d,
                    code="IM051",
                    message=d.message.removesuffix("; row skipped"),
                    hint="pass BBQ's released data/<Category>.jsonl to --names-from",
                )
                for d in scratch.diagnostics
            ]
        )
    found: dict[str, ReleasedNames] = {}
    for row in rows:
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
        (target, target_tag), (other, other_tag) = (
            persons[stereotyped.index(True)],
            persons[stereotyped.index(False)],
        )
        names.add(target, other, (_gender(target_tag), _gender(other_tag)))
    return found


def _gender(tag: str) -> str:
    """``F-Black`` → ``F``; a tag without a gender part → ""."""
    return tag.split("-", 1)[0] if "-" in tag else ""
