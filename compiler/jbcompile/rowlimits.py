"""How many rows a build may make, checked before any template is expanded.

A template's rows multiply: fillers × fillers × every lexical alternative × orders. A filler list pasted
twice, or a few slots with many alternatives, can ask for billions of rows, which would fill the disk
long before the build ends. Each design counts a template's rows by arithmetic (``Kind.row_count``), so
the loader refuses a template, or a dataset, above its limits (B008, naming the template and its count)
before anything is expanded; ``dataset.yaml``'s ``limits`` raise or lower them (defaults in
:mod:`jbcompile.limits`). A design that cannot count is held to the same limits while its rows stream
(:class:`RowBudget`), so no design escapes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .diagnostics import Diagnostic, DiagnosticError

if TYPE_CHECKING:
    from .projecttypes import Project, SourceTemplate

_HINT = "use fewer fillers or lexical alternatives (persons' `only:`), split the template, or raise "


def _template_problem(template: SourceTemplate, count: int, limit: int, counted: bool) -> Diagnostic:
    grown = f"expands to {count:,} rows" if counted else f"passed {limit:,} rows while it was expanded"
    return template.diagnostic(
        ("id",),
        "B008",
        f"template {template.id} {grown}; a template may give at most {limit:,}",
        hint=_HINT + "`limits: {max_template_rows: …}` in dataset.yaml",
    )


def _dataset_problem(project: Project, total: int, limit: int, largest: list[tuple[int, str]]) -> Diagnostic:
    named = ", ".join(f"{template_id} {count:,}" for count, template_id in largest)
    return project.dataset_doc.diagnostic(
        ("limits",),
        "B008",
        f"the templates expand to {total:,} rows together; a build may hold at most {limit:,} "
        f"(the largest: {named})",
        hint=_HINT + "`limits: {max_rows: …}` in dataset.yaml",
    )


def row_counts(project: Project) -> dict[str, int | None]:
    """Template id → the rows it gives (every config together); None where its design cannot count."""
    from .designs import get_kind

    return {t.id: get_kind(t.kind).row_count(t, project) for t in project.templates}


def row_limit_problems(project: Project) -> list[Diagnostic]:
    """B008 for each template above ``max_template_rows``, and for a dataset above ``max_rows``."""
    limits = project.dataset.limits
    counts = row_counts(project)
    problems = [
        _template_problem(template, count, limits.max_template_rows, True)
        for template in project.templates
        if (count := counts[template.id]) is not None and count > limits.max_template_rows
    ]
    total = sum(count or 0 for count in counts.values())
    if total > limits.max_rows:
        largest = sorted(((c, i) for i, c in counts.items() if c), key=lambda x: (-x[0], x[1]))[:3]
        problems.append(_dataset_problem(project, total, limits.max_rows, largest))
    return problems


class RowBudget:
    """The same limits, held while the rows stream: stops a build the moment a template (or the whole)
    passes them, whatever ``row_count`` said."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.total = 0
        self.template: SourceTemplate | None = None
        self.of_template = 0

    def take(self, template: SourceTemplate, rows: int) -> None:
        limits = self.project.dataset.limits
        if template is not self.template:
            self.template, self.of_template = template, 0
        self.of_template += rows
        self.total += rows
        if self.of_template > limits.max_template_rows:
            raise DiagnosticError(
                [_template_problem(template, self.of_template, limits.max_template_rows, False)]
            )
        if self.total > limits.max_rows:
            message = f"the build passed {limits.max_rows:,} rows at template {template.id}"
            raise DiagnosticError(
                [
                    self.project.dataset_doc.diagnostic(
                        ("limits",), "B008", message, hint=_HINT + "`limits: {max_rows: …}` in dataset.yaml"
                    )
                ]
            )
