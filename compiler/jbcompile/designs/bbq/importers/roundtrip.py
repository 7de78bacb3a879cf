"""The round trips of the BBQ importers: compiling the imported sources reproduces every row of the input
(``import bbq-jsonl``), or of the released rows given with ``--compare`` (``import bbq-templates``).

A row counts as reproduced when the compiled template has a row with the same context, question, set of
option texts and gold option text. The wording of the "unknown" option is compared as one class: our
compiler picks it per row from dataset.yaml's ``unknown_options`` by a seeded hash (the importer writes the
data's own unknown wordings there), so which wording a given row shows may differ from the original.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ....diagnostics import Severity
from ....importers.report import ImportReport
from .rows import SourceRow, compiled_signature

MAX_LISTED = 3  # unreproduced rows listed per template; the rest are counted
Progress = Callable[[int, int], None]  # (templates done, templates in all)


def compiled_signatures(sources: Path, lang: str) -> dict[str, set[tuple]]:
    """Signatures of every row the compiler makes from ``sources``, per template id."""
    from ....project import load_project
    from ... import get_kind

    project = load_project(sources, lang=lang)
    found: dict[str, set[tuple]] = {}
    for template in project.templates:
        rows = get_kind(template.kind).expand(template, project)
        found[template.id] = {compiled_signature(row) for row in rows}
    return found


def count_reproduced(sources: Path, lang: str, rows: Sequence[SourceRow], report: ImportReport) -> None:
    """Count, per template, the input rows the compiled sources reproduce; list the others (the round
    trip of ``import bbq-jsonl``)."""
    compiled = compiled_signatures(sources, lang)
    missed: dict[str, list[SourceRow]] = defaultdict(list)
    categories: dict[str, CategoryCoverage] = {}
    for row in rows:
        entry = categories.setdefault(row.category, CategoryCoverage(row.category))
        entry.rows += 1
        if not row.templates:
            continue
        if any(row.signature() in compiled.get(name, set()) for name in row.templates):
            report.template(row.templates[0]).reproduced += 1
            entry.reproduced += 1
        else:
            missed[row.templates[0]].append(row)
    for category, skipped in report.skipped.items():  # rows skipped as malformed: not reproduced
        categories.setdefault(category, CategoryCoverage(category)).rows += skipped
    report.release = {
        name: {"rows": c.rows, "reproduced": c.reproduced, "rate": c.rate}
        for name, c in sorted(categories.items())
    }
    for template, lost in missed.items():
        for row in lost[:MAX_LISTED]:
            report.add(
                template,
                row.diagnostic(
                    "IM008",
                    f"row not reproduced by the compiled template ({row.condition}, {row.polarity}): "
                    f"{row.context[:80]!r}",
                    Severity.WARNING,
                ),
            )
        if len(lost) > MAX_LISTED:
            report.add(
                template,
                lost[MAX_LISTED].diagnostic(
                    "IM008", f"… and {len(lost) - MAX_LISTED} more rows not reproduced", Severity.WARNING
                ),
            )


@dataclass
class CategoryCoverage:
    """How many released rows of one category the compiled sources reproduce."""

    category: str
    rows: int = 0
    reproduced: int = 0

    @property
    def rate(self) -> float | None:
        return self.reproduced / self.rows if self.rows else None


def category_signatures(
    sources: Path, lang: str, categories: Iterable[str] | None = None, progress: Progress | None = None
) -> dict[str, set[tuple]]:
    """Signatures of every compiled row, per category (only ``categories``, when given); one template is
    expanded at a time, so only the signatures stay in memory."""
    from ....project import load_project
    from ... import get_kind

    project = load_project(sources, lang=lang)
    wanted = None if categories is None else set(categories)
    templates = [t for t in project.templates if wanted is None or t.model.category in wanted]
    found: dict[str, set[tuple]] = defaultdict(set)
    for done, template in enumerate(templates, 1):
        rows = get_kind(template.kind).expand(template, project)
        found[template.model.category].update(compiled_signature(row) for row in rows)
        del rows
        if progress is not None:
            progress(done, len(templates))
    return found


def release_coverage(
    sources: Path, lang: str, rows: Sequence[SourceRow], progress: Progress | None = None
) -> tuple[dict[str, CategoryCoverage], list[SourceRow]]:
    """Per category, the released rows whose signature a compiled row of that category has; and the
    rows not reproduced (a template import does not know which template a released row came from)."""
    compiled = category_signatures(sources, lang, {row.category for row in rows}, progress)
    coverage: dict[str, CategoryCoverage] = {}
    missed: list[SourceRow] = []
    for row in rows:
        entry = coverage.setdefault(row.category, CategoryCoverage(row.category))
        entry.rows += 1
        if row.signature() in compiled.get(row.category, set()):
            entry.reproduced += 1
        else:
            missed.append(row)
    return coverage, missed


def report_release_coverage(
    report: ImportReport, coverage: dict[str, CategoryCoverage], missed: Sequence[SourceRow]
) -> None:
    """Every released row the sources do not reproduce, in the report (listed per category)."""
    report.release = {
        name: {"rows": c.rows, "reproduced": c.reproduced, "rate": c.rate}
        for name, c in sorted(coverage.items())
    }
    for row in missed:
        report.add(
            f"(release {row.category})",
            row.diagnostic(
                "IM029",
                f"released row not reproduced ({row.question_index}/{row.version}, {row.condition}, "
                f"{row.polarity}): {row.context[:80]!r}",
                Severity.WARNING,
            ),
        )
