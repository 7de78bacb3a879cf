"""The audit's result: per config and probe, its figures per scope against its bar — the one record that
`jbcompile audit` prints, the manifest keeps (``manifest.json`` → ``audit``), the card shows and
``publish`` reads back. Figures are rounded to four places, so the same rows give the same bytes.

Diagnostics (docs/audit.md):

- AU001 a probe exceeds its bar in a scope (error for ``build --release`` and ``publish``, else warning)
- AU002 ``audit.probes`` in dataset.yaml names a probe no design of the dataset has (warning)
- AU003 a probe could not run and the user can change that (e.g. scikit-learn is missing) (warning)
- AU004 ``publish``: the build records no readable audit (error)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..diagnostics import Diagnostic, Severity
from ..schema.dataset import AuditSettings

if TYPE_CHECKING:
    from ..loader import LoadedDocument

WORST_SHOWN = 5  # templates listed per probe
PLACES = 4


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TemplateReport(_Record):
    category: str
    template: str
    rows: int
    value: float


ScopeStatus = Literal["above", "over, not significant", "within", "not judged"]
STATUS_TEXT: dict[str, str] = {  # how the CLI and the card say a status
    "above": "ABOVE",
    "over, not significant": "over, not significant",
    "within": "within",
    "not judged": "—",
}


def scope_status(
    value: float, judged: float, threshold: float | None, *, templates: int, rate: bool, fewest: int = 2
) -> ScopeStatus:
    """Where a scope stands against its bar: *above* when the judged figure (the lower end of the
    interval, or a rate's share) is over it; *over, not significant* when only the point figure is (a
    lean too small or too noisy to refuse a release, but worth reading); else *within*.

    A rule read in its best direction on a single template is right on all of its rows whenever the
    template leans one way, so one template is never *above* by an accuracy (a starter benchmark); a
    rate counts a defect in the rows and is. A model probe needs ``fewest`` templates (its folds): a
    category of three cases (a small dataset's) is three decisions of a model, not a lean it can show."""
    if threshold is None:
        return "not judged"
    if round(judged, PLACES) > round(threshold, PLACES) and (rate or templates >= fewest):
        return "above"
    if round(value, PLACES) > round(threshold, PLACES):
        return "over, not significant"
    return "within"


class ScopeReport(_Record):
    """A probe's figures over a config, or over one of its categories, with its worst templates."""

    rows: int
    templates: int
    value: float  # the probe's accuracy (or, for a defect count, the share of rows with the defect)
    low: float  # 95% interval, bootstrap over templates
    high: float
    chance: float
    threshold: float | None  # None: reported, not judged (audit.probes.<name>.off, or Probe.judged)
    exceeds: bool  # status == "above": what refuses a release
    status: ScopeStatus
    rule: str  # the variant of the rule that answers the scope: its best fixed direction there
    worst: list[TemplateReport]  # the templates it answers best, best first


class ProbeReport(_Record):
    """One probe on one config."""

    config: str
    kind: str
    probe: str
    title: str
    scores: str  # which rows it answers
    chance_basis: str
    measure: Literal["accuracy", "rate"]
    judged_on: Literal["low", "value"]  # which figure must stay under the bar
    not_run: str | None = None  # why the probe has no figures
    warn: bool = False  # not_run is worth a warning
    overall: ScopeReport | None = None
    categories: dict[str, ScopeReport] = {}

    def exceeded(self) -> list[tuple[str, ScopeReport]]:
        """The scopes (``overall`` first, then categories) whose figure is above the bar."""
        return self.scopes("above")

    def scopes(self, status: ScopeStatus) -> list[tuple[str, ScopeReport]]:
        """The scopes (``overall`` first, then categories) with this status."""
        scopes = [("overall", self.overall), *self.categories.items()] if self.overall else []
        return [(name, scope) for name, scope in scopes if scope is not None and scope.status == status]


class AuditReport(_Record):
    settings: AuditSettings
    results: list[ProbeReport]

    @property
    def passed(self) -> bool:
        return not any(result.exceeded() for result in self.results)

    def record(self) -> dict:
        """What the manifest keeps."""
        return {"passed": self.passed, **self.model_dump(mode="json")}


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def bar_text(result: ProbeReport, scope: ScopeReport, settings: AuditSettings) -> str:
    """How the bar was set, e.g. "chance 50.0% + 5 points"."""
    own = settings.probes.get(result.probe)
    if own is not None and own.max is not None:
        return "its own bar (audit.probes)"
    if result.measure == "rate" and (own is None or own.margin is None):
        return "no row may have it"
    margin = own.margin if own is not None and own.margin is not None else settings.margin
    return f"chance {percent(scope.chance)} + {100 * margin:g} points"


def problems(
    report: AuditReport,
    *,
    release: bool,
    doc: LoadedDocument | None = None,
    path: str | None = None,
    template_files: Mapping[str, str] | None = None,
) -> list[Diagnostic]:
    """AU001 per probe and scope above its bar (errors for a release), AU003 per probe that could not
    run for a reason the user can change. Located at ``audit.probes.<name>`` of ``doc`` when given (where
    a bar is set); ``template_files`` (template id → its file) names the file of each worst template,
    where the rewriting the hint asks for happens."""
    files = template_files or {}
    severity = Severity.ERROR if release else Severity.WARNING
    found = []
    for result in report.results:
        if result.not_run and result.warn:
            found.append(
                _at(
                    doc,
                    path,
                    result.probe,
                    "AU003",
                    f"[{result.config}] probe {result.probe} did not run: {result.not_run}",
                    severity=Severity.WARNING,
                    hint="see docs/audit.md",
                )
            )
        exceeded = result.exceeded()
        if not exceeded:
            continue
        judged = "the lower end of its 95% interval" if result.judged_on == "low" else "its share"
        scopes = "; ".join(
            f"{'all' if name == 'overall' else name}: {percent(scope.value)} of {scope.rows:,} rows "
            f"({percent(scope.low)}–{percent(scope.high)}), bar {percent(scope.threshold or 0)}"
            for name, scope in exceeded
        )
        first = exceeded[0][1]
        where = {t.template: f" ({files[t.template]})" if t.template in files else "" for t in first.worst}
        worst = ", ".join(
            f"{t.template}{where[t.template]} {percent(t.value)} of {t.rows}" for t in first.worst
        )
        found.append(
            _at(
                doc,
                path,
                result.probe,
                "AU001",
                # the title stands on its own (it may hold parentheses: "longer (or shorter)")
                f"[{result.config}] probe {result.probe} is above its bar on {result.scores} "
                f"({bar_text(result, first, report.settings)}; {judged} is compared) — {scopes}; "
                f"the probe: {result.title}; rule: {first.rule or result.probe}; worst templates: {worst}",
                severity=severity,
                hint="rewrite the templates so that the cue no longer gives the answer (docs/audit.md); "
                f"or, with a reason, set audit.probes.{result.probe} in dataset.yaml",
            )
        )
    return found


def unknown_probe_problems(settings: AuditSettings, known: set[str], doc: LoadedDocument) -> list[Diagnostic]:
    """AU002 for each name under ``audit.probes`` that no probe of the dataset's designs has."""
    return [
        doc.diagnostic(
            ("audit", "probes", name),
            "AU002",
            f"audit.probes names {name!r}, which no probe of this dataset's designs is",
            severity=Severity.WARNING,
            hint=f"use one of: {', '.join(sorted(known))}" if known else "remove it",
        )
        for name in settings.probes
        if name not in known
    ]


def _at(
    doc: LoadedDocument | None, path: str | None, probe: str, code: str, message: str, **kwargs
) -> Diagnostic:
    if doc is not None:
        return doc.diagnostic(("audit", "probes", probe), code, message, **kwargs)
    return Diagnostic(code, message, path=path, **kwargs)
