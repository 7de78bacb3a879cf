"""What an import could not carry over, per template, and how much of the input the result reproduces.

Nothing an importer meets is dropped silently: every skipped row, approximated field or unrecoverable
template becomes a coded Diagnostic here, attached to its template (or to the input as a whole).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, Severity, to_json_record

GENERAL = "(input)"  # findings that belong to no single template
UNREAD = "(rows not read)"  # skipped rows that name no group (a line that is not JSON, no category)


@dataclass
class TemplateReport:
    template: str  # template id, or the upstream reference when no template came out of it
    upstream: str | None = None
    rows: int = 0  # input rows of this template
    reproduced: int = 0  # of them, rows the compiled sources reproduce
    findings: list[Diagnostic] = field(default_factory=list)

    @property
    def coverage(self) -> float | None:
        return self.reproduced / self.rows if self.rows else None


@dataclass
class ImportReport:
    templates: dict[str, TemplateReport] = field(default_factory=dict)
    files_written: list[str] = field(default_factory=list)
    release: dict[str, dict] = field(default_factory=dict)  # category → released rows reproduced
    # input rows skipped as malformed, per the group (category) they name, else UNREAD: the per-group
    # figures count them as rows not reproduced, so that they add up to the total
    skipped: dict[str, int] = field(default_factory=dict)

    def template(self, name: str, upstream: str | None = None) -> TemplateReport:
        report = self.templates.get(name)
        if report is None:
            report = self.templates[name] = TemplateReport(name, upstream)
        elif upstream and not report.upstream:
            report.upstream = upstream
        return report

    def add(self, name: str | None, diagnostic: Diagnostic) -> None:
        self.template(name or GENERAL).findings.append(diagnostic)

    def rename(self, old: str, new: str) -> None:
        """A provisional name (e.g. an upstream reference) became a template id."""
        if old == new or old not in self.templates:
            return
        report = self.templates.pop(old)
        report.template = new
        if new in self.templates:
            existing = self.templates[new]
            existing.rows += report.rows
            existing.reproduced += report.reproduced
            existing.findings.extend(report.findings)
        else:
            self.templates[new] = report

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for report in self.templates.values() for d in report.findings]

    @property
    def total_rows(self) -> int:
        return sum(r.rows for r in self.templates.values())

    @property
    def reproduced_rows(self) -> int:
        return sum(r.reproduced for r in self.templates.values())

    @property
    def coverage(self) -> float | None:
        total = self.total_rows
        return self.reproduced_rows / total if total else None

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    def to_json(self) -> dict:
        return {
            "rows": self.total_rows,
            "reproduced": self.reproduced_rows,
            "coverage": self.coverage,
            "files_written": self.files_written,
            "release_coverage": self.release,
            "templates": [
                {
                    "template": r.template,
                    "upstream": r.upstream,
                    "rows": r.rows,
                    "reproduced": r.reproduced,
                    "coverage": r.coverage,
                    "findings": [to_json_record(d) for d in r.findings],
                }
                for r in sorted(self.templates.values(), key=lambda r: r.template)
            ],
        }
