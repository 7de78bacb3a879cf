"""Rows added, removed and changed between two builds, per config, category and template.

Rows are matched by ``example_id`` (stable across builds by design), so the diff of a release says
exactly which questions a changelog entry touches. Each side's rows are read the way ``eval`` reads
them (:func:`.buildfolder.verified_table`): a build altered after it was written is refused (P005,
P016), never reported as a difference.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .buildfolder import BuildFolder, verified_table

NONE = "-"


@dataclass(frozen=True)
class GroupDiff:
    """The changes of one template in one config."""

    config: str
    category: str
    template_id: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "category": self.category,
            "template_id": self.template_id,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
        }


@dataclass
class ConfigDiff:
    old_rows: int
    new_rows: int
    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    changed_columns: dict[str, int] = field(default_factory=dict)


@dataclass
class BuildDiff:
    old: dict[str, Any]  # label and version
    new: dict[str, Any]
    configs: dict[str, ConfigDiff]
    groups: list[GroupDiff]

    @property
    def identical(self) -> bool:
        return not self.groups

    def as_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "identical": self.identical,
            "configs": {name: vars(c) for name, c in self.configs.items()},
            "groups": [g.as_dict() for g in self.groups],
        }


@dataclass(frozen=True)
class RowTable:
    """One config's rows keyed by example_id, each row a tuple in ``columns`` order (tuples are much
    cheaper than dicts for tens of thousands of rows)."""

    columns: tuple[str, ...]
    rows: dict[str, tuple[Any, ...]]

    def aligned(self, columns: tuple[str, ...]) -> dict[str, tuple[Any, ...]]:
        """The rows with ``columns`` (a superset), None where this table has no such column."""
        if columns == self.columns:
            return self.rows
        index = {name: i for i, name in enumerate(self.columns)}
        picks = [index.get(name) for name in columns]
        return {key: tuple(None if i is None else row[i] for i in picks) for key, row in self.rows.items()}


def read_table(build: BuildFolder, config: str, label: str) -> RowTable:
    """A config's rows by example_id, from the bytes the build's manifest vouches for (P005, P016 when
    they are not); P013 when rows cannot be matched (no or repeated example_id)."""
    if config not in build.rows:
        return RowTable((), {})
    columns = verified_table(build, config)[0].to_pydict()
    ids = columns.get("example_id")
    rows = dict(zip(ids, zip(*columns.values(), strict=True), strict=True)) if ids is not None else {}
    if ids is None or len(rows) != len(ids) or not all(isinstance(i, str) for i in ids):
        problem = "have no example_id column" if ids is None else "repeat or lack example_id values"
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P013",
                    message=f"{label}: the rows of config {config} {problem}; rows cannot be matched",
                    path=str(build.root),
                    hint="diff works on builds whose rows carry unique example_id values",
                )
            ]
        )
    return RowTable(tuple(columns), rows)


def diff_rows(config: str, before: RowTable, after: RowTable) -> tuple[ConfigDiff, list[GroupDiff]]:
    """Pure: the changes between two tables of one config, grouped by category and template."""
    columns = before.columns + tuple(c for c in after.columns if c not in before.columns)
    old, new = before.aligned(columns), after.aligned(columns)
    group_of = _group_key(columns)
    summary = ConfigDiff(old_rows=len(old), new_rows=len(new))
    per_group: dict[tuple[str, str], dict[str, list[str]]] = {}
    changed_columns: Counter[str] = Counter()
    changes: list[tuple[tuple[Any, ...], str, str]] = []  # (row, change, example_id)
    for example_id, row in new.items():
        previous = old.get(example_id)
        if previous is None:
            changes.append((row, "added", example_id))
        elif previous != row:
            changes.append((row, "changed", example_id))
            changed_columns.update(name for name, a, b in zip(columns, previous, row, strict=True) if a != b)
        else:
            summary.unchanged += 1
    changes += [(row, "removed", example_id) for example_id, row in old.items() if example_id not in new]
    for row, change, example_id in changes:
        group = per_group.setdefault(group_of(row), {"added": [], "removed": [], "changed": []})
        group[change].append(example_id)
    groups = []
    for (category, template_id), found in sorted(per_group.items()):
        added, removed, changed = (tuple(sorted(found[k])) for k in ("added", "removed", "changed"))
        groups.append(GroupDiff(config, category, template_id, added, removed, changed))
        summary.added += len(added)
        summary.removed += len(removed)
        summary.changed += len(changed)
    summary.changed_columns = dict(sorted(changed_columns.items()))
    return summary, groups


def _group_key(columns: tuple[str, ...]) -> Callable[[tuple[Any, ...]], tuple[str, str]]:
    positions = [columns.index(name) if name in columns else None for name in ("category", "template_id")]

    def key(row: tuple[Any, ...]) -> tuple[str, str]:
        return tuple(str(row[i] or NONE) if i is not None else NONE for i in positions)  # type: ignore[return-value]

    return key


def diff_builds(old: BuildFolder, new: BuildFolder, old_label: str, new_label: str) -> BuildDiff:
    configs: dict[str, ConfigDiff] = {}
    groups: list[GroupDiff] = []
    with _no_cyclic_gc():
        for config in list(old.rows) + [name for name in new.rows if name not in old.rows]:
            before, after = read_table(old, config, old_label), read_table(new, config, new_label)
            configs[config], config_groups = diff_rows(config, before, after)
            groups += config_groups
    return BuildDiff(
        old={
            "label": old_label,
            "version": old.version,
            "compiler_version": old.manifest.get("compiler_version"),
        },
        new={
            "label": new_label,
            "version": new.version,
            "compiler_version": new.manifest.get("compiler_version"),
        },
        configs=configs,
        groups=groups,
    )


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Rows are acyclic; the cyclic collector would only rescan them again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
