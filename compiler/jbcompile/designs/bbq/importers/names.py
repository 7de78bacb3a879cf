"""The full names BBQ's released rows give its proper-name templates (``--names-from``).

BBQ's generator pairs five random first names of the stereotyped ethnicities, each with a random last
name of its ethnicity, with five random names of other ethnicities: a template's possible rows number
millions, so no build holds them all, and a seeded draw of our own reproduces none of the released
ones. Given the released rows, each such template takes the names they use instead: its target group
is every stereotyped person those rows name, its other group every other person. The intersectional
files (Race_x_SES, Race_x_gender) are read the same way; their target is the person whose tag has both
the stereotyped race and the template's second attribute (``Known_stereotyped_var2``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ....diagnostics import Diagnostic, DiagnosticError, Severity
from ....importers.report import ImportReport
from .common import RACE, matches_group
from .rows import SourceRow, read_rows


@dataclass
class ReleasedNames:
    """The persons one template's released rows name, in the order they first appear."""

    targets: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    unusable: list[Diagnostic] = field(default_factory=list)  # rows whose persons cannot be told apart
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (target, other), once each
    gender: dict[str, str] = field(default_factory=dict)  # name → the gender its tag gives ("" if none)
    tags: dict[str, str] = field(default_factory=dict)  # name → its answer_info tag, as released

    def add(
        self, target: str, other: str, genders: tuple[str, str] = ("", ""), tags: tuple[str, str] = ("", "")
    ) -> None:
        if (target, other) not in self.pairs:
            self.pairs.append((target, other))
        for name, names, gender, tag in (
            (target, self.targets, genders[0], tags[0]),
            (other, self.others, genders[1], tags[1]),
        ):
            self.gender.setdefault(name, gender)
            self.tags.setdefault(name, tag)
            if name not in names:
                names.append(name)

    def by_target(self) -> list[tuple[str, list[str]]]:
        """Each stereotyped person with the persons the released rows pair it with, in order of first
        appearance: an intersectional template pairs only these, not every target with every other."""
        partners: dict[str, list[str]] = {}
        for target, other in self.pairs:
            partners.setdefault(target, []).append(other)
        return list(partners.items())

    def by_gender(self) -> list[tuple[str, ReleasedNames]]:
        """The names split by gender (suffix ``-F``, ``-M``): BBQ pairs two names of one gender, and a
        template pairs every target with every other. Whole when a pair crosses genders or a name has
        none."""
        genders = sorted(set(self.gender.values()))
        if len(genders) < 2 or "" in genders or any(self.gender[t] != self.gender[o] for t, o in self.pairs):
            return [("", self)]
        parts: list[tuple[str, ReleasedNames]] = []
        for gender in genders:
            part = ReleasedNames(unusable=[] if parts else self.unusable)
            for target, other in self.pairs:
                if self.gender[target] == gender:
                    part.add(target, other, (gender, gender))
            parts.append((f"-{gender}", part))
        return parts


def read_released_rows(paths: Sequence[Path]) -> list[SourceRow]:
    """The rows of the ``--names-from`` files. An unreadable file (IM001) or a line that is not a
    BBQ-format row (IM051) raises DiagnosticError: the names would be incomplete."""
    scratch = ImportReport()
    rows = read_rows(paths, scratch)
    if scratch.diagnostics:
        raise DiagnosticError(
            [
                replace(
                    d,
                    code="IM051",
                    message=d.message.removesuffix("; row skipped"),
                    hint="pass BBQ's released data/<Category>.jsonl files",
                )
                for d in scratch.diagnostics
            ]
        )
    return rows


# Reads a person of a released row whose answer_info entry is empty off the row's texts: (text, tag).
Recover = Callable[[SourceRow, int], "tuple[str, str] | None"]


def released_names(
    rows: Sequence[SourceRow],
    category: str = RACE,
    var2: Mapping[str, str] | None = None,
    recover: Recover | None = None,
) -> dict[str, ReleasedNames]:
    """Per ``Q_id`` of ``category``: the persons of its released rows, told apart by answer_info's tag
    (``F-Black``: gender, then ethnicity) against the stereotyped groups. For an intersectional file,
    ``var2`` gives each ``Q_id``'s stereotyped second attribute, which leads its tags (``lowSES-F-Black``,
    ``F-Black``) and must match too. Rows of other categories are passed over; a row whose persons
    cannot be told apart is kept as a finding (IM052) for its template to report when it uses the names.
    BBQ's generator leaves some persons' answer_info empty (``["", ""]``); ``recover`` may read them off
    the row's options."""
    found: dict[str, ReleasedNames] = {}
    for row in rows:
        if row.category != category:
            continue
        names = found.setdefault(row.question_index, ReleasedNames())
        persons = [_person(row, i, recover) for i in range(3) if i != row.unknown_index]
        wanted = (var2 or {}).get(row.question_index)
        stereotyped = [is_target(tag, row.stereotyped, wanted) for _, tag in persons]
        if stereotyped.count(True) != 1 or not all(text for text, _ in persons):
            names.unusable.append(
                row.diagnostic(
                    "IM052",
                    f"cannot tell the stereotyped person by the tags {[t for _, t in persons]} "
                    f"(stereotyped groups {list(row.stereotyped)}"
                    + (f", second attribute {wanted}" if wanted else "")
                    + "); the row's names are not used",
                    Severity.WARNING,
                )
            )
            continue
        (target, target_tag), (other, other_tag) = (
            persons[stereotyped.index(True)],
            persons[stereotyped.index(False)],
        )
        names.add(target, other, (_gender(target_tag), _gender(other_tag)), (target_tag, other_tag))
    return found


def _person(row: SourceRow, index: int, recover: Recover | None) -> tuple[str, str]:
    """The text and tag answer_info gives option ``index``; an empty one read off by ``recover``."""
    text, tag = row.persons[index], row.tags[index]
    if (not text or not tag) and recover is not None:
        return recover(row, index) or (text, tag)
    return text, tag


def is_target(tag: str, groups: Sequence[str], var2: str | None) -> bool:
    """``F-Black`` is stereotyped when Black is; with a second attribute, ``lowSES-F-Black`` (or
    ``F-Black`` in Race_x_gender) only when its leading part is that attribute as well."""
    if var2 is None:
        return matches_group(tag.split("-", 1)[-1], groups)
    return tag.split("-", 1)[0] == var2 and matches_group(tag.rsplit("-", 1)[-1], groups)


def _gender(tag: str) -> str:
    """``F-Black`` → ``F``; a tag without a gender part → ""."""
    return tag.split("-", 1)[0] if "-" in tag else ""
