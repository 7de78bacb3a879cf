"""What a compile hands to the writers: the project, each config's rows or counts, and the notes.

Below both :mod:`jbcompile.build` (which makes a :class:`Compiled`) and :mod:`jbcompile.emit` (which
writes one), so that neither imports the other for it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from .designs import ConfigSpec, Row
from .diagnostics import Diagnostic
from .projecttypes import Project
from .sourcefiles import sources_hash

if TYPE_CHECKING:
    from .audit.report import AuditReport

# (stage, done, total): stage "expand" counts templates; "write" counts rows (total None: not known yet)
ProgressCallback = Callable[[str, int, int | None], None]


@dataclass
class ConfigRows:
    """One config of a compile: its row count and templates per category (all the card and the manifest
    need), and its rows when the compile keeps them in memory (no sink)."""

    spec: ConfigSpec
    kind: str
    rows: list[Row] = field(default_factory=list)
    count: int = 0
    categories: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))

    def tally(self, rows: Sequence[Row]) -> None:
        self.count += len(rows)
        for (category, template_id), n in Counter((r["category"], r["template_id"]) for r in rows).items():
            self.categories[category][template_id] += n

    @property
    def template_ids(self) -> set[str]:
        return {template_id for templates in self.categories.values() for template_id in templates}


@dataclass
class Compiled:
    project: Project
    configs: dict[str, ConfigRows]
    diagnostics: list[Diagnostic]  # warnings and notes that did not stop the build
    audit: AuditReport | None = None  # the shortcut audit of the written data (set when it is written)

    @cached_property
    def sources_hash(self) -> str:
        return sources_hash(self.project.root)

    @property
    def default_config(self) -> str | None:
        return next(
            (name for name, c in self.configs.items() if c.spec.default), next(iter(self.configs), None)
        )
