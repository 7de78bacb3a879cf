"""Run the rules over a project and turn their findings into diagnostics.

The runner owns everything around the rules: one shared analysis context, positions (the token
inside the scalar), severities (rule default, dataset.yaml ``checks:`` overrides, ``--release``),
inline suppressions, and turning a crashing rule into a JA001 diagnostic instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Severity
from ..sourcefiles import text_file_problems
from .base import Finding, Rule
from .corpus import CheckContext
from .positions import Locator
from .ruledata import load_rule_data
from .rules import all_rules
from .suppress import Suppressions

if TYPE_CHECKING:
    from ..projecttypes import Project

_SETTINGS = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}


def severity_of(rule: type[Rule], settings: Mapping[str, str], *, release: bool = False) -> Severity | None:
    """The severity a rule reports with in this project; None when it is switched off."""
    if release and rule.release_error:
        return Severity.ERROR
    setting = settings.get(rule.code)
    if setting == "off":
        return None
    return _SETTINGS.get(setting or "", rule.severity)


def run_checks(
    project: Project, *, release: bool = False, only: Iterable[str] | None = None
) -> list[Diagnostic]:
    """Every finding of every enabled rule over ``project``, sorted; never raises for a rule's bug.

    ``only`` restricts the run to some codes (tests, ``--select``); the runner's own codes always run.
    """
    rules = all_rules()
    settings = dict(project.dataset.checks)
    known = {rule.code for rule in rules}
    wanted = {code.upper() for code in only} if only is not None else None
    diagnostics: list[Diagnostic] = []
    severities = {rule.code: severity_of(rule, settings, release=release) for rule in rules}

    def emit(code: str, finding: Finding, severity: Severity) -> None:
        if finding.position is None:
            line, col = locator.locate(finding.doc, finding.key_path, finding.offset)
        else:
            line, col = finding.position
        anchor = finding.key_path if finding.position is None else None  # a comment: its own line only
        if suppressions.silences(code, finding.doc, anchor, line):
            return
        diagnostics.append(
            Diagnostic(
                code=code,
                message=finding.message,
                path=finding.doc.path,
                line=line,
                col=col,
                severity=finding.severity or severity,
                hint=_with_fix(finding.hint, held_back) if finding.edits else finding.hint,
                key_path=tuple(finding.key_path),
                edits=finding.edits,
            )
        )

    locator = Locator()
    held_back = project.dataset.keep_as_written
    suppressions = Suppressions()
    for code in sorted(set(settings) - known):
        if severities["JA004"] is not None:
            emit("JA004", _setting_finding(project, code, known), severities["JA004"])

    data, problems = load_rule_data(project.root)
    # README.md, CHANGELOG.md, the translations: read by no loader, yet scanned whole (JA120, JA121)
    said = {*project.documents, *(problem.path for problem in problems if problem.path)}
    diagnostics += text_file_problems(project.root, said)
    if data is None:
        return sorted(diagnostics + problems, key=Diagnostic.sort_key)
    ctx = CheckContext(project, data, release=release)
    ran: set[str] = set()
    for rule in rules:
        severity = severities[rule.code]
        if severity is None or (wanted is not None and rule.code not in wanted):
            continue
        if rule.japanese and project.lang != "ja":
            continue
        ran.add(rule.code)
        try:
            findings = list(rule().check(ctx))
        except Exception as exc:  # a rule's bug is reported, never a traceback
            if severities["JA001"] is not None:
                emit("JA001", _crash_finding(project, rule.code, exc), severities["JA001"])
            continue
        for finding in findings:
            emit(rule.code, finding, severity)

    for template, error in ctx.problems:
        if severities["JA001"] is not None:
            finding = Finding(
                template.doc,
                ("id",),
                f"the {template.kind} kind failed to fill this template's texts: "
                f"{type(error).__name__}: {error}",
                hint="checks that need filled texts skipped this template; please report this bug",
            )
            emit("JA001", finding, severities["JA001"])
    for path in project.documents:  # files without findings may still hold stale suppressions
        suppressions.of(path)
    diagnostics.extend(_suppression_diagnostics(suppressions, known, ran, severities))
    return sorted(set(diagnostics), key=Diagnostic.sort_key)


def _with_fix(hint: str | None, held_back: bool) -> str:
    """A fixable finding's hint says whether ``check --fix`` makes the change; the rules say only what the
    change is. Under keep_as_written it does not (the texts are a release's own: :mod:`.fix`)."""
    if held_back:
        return (
            f"{hint}; by hand: `check --fix` rewrites nothing while dataset.yaml sets keep_as_written, "
            "or suppress the finding with a reason"
        )
    return f"{hint}; `jbcompile check --fix` does it"


def _setting_finding(project: Project, code: str, known: set[str]) -> Finding:
    return Finding(
        project.dataset_doc,
        ("checks", code),
        f"checks: no rule has the code {code!r}",
        hint="see `jbcompile check --explain CODE`; known codes are " + ", ".join(sorted(known)),
    )


def _crash_finding(project: Project, code: str, exc: BaseException) -> Finding:
    return Finding(
        project.dataset_doc,
        (),
        f"rule {code} failed: {type(exc).__name__}: {exc}",
        hint="the other rules ran; please report this bug with the sources that trigger it",
    )


def _suppression_diagnostics(
    suppressions: Suppressions, known: set[str], ran: set[str], severities: dict[str, Severity | None]
) -> Sequence[Diagnostic]:
    out: list[Diagnostic] = []
    for entry in suppressions.all():
        unknown = [code for code in entry.codes if code not in known]
        if (unknown or not entry.reason or not entry.codes) and severities["JA003"] is not None:
            problem = (
                f"unknown code(s) {', '.join(unknown)}"
                if unknown
                else "no code given"
                if not entry.codes
                else "no reason given"
            )
            out.append(
                Diagnostic(
                    code="JA003",
                    message=f"malformed suppression: {problem}",
                    severity=severities["JA003"],
                    hint="write `# jbcompile: ignore[CODE] why this finding is acceptable`",
                    path=entry.path,
                    line=entry.line,
                    col=entry.col,
                )
            )
            continue
        stale = [code for code in entry.codes if code in ran and code not in entry.used]
        if stale and severities["JA002"] is not None:
            out.append(
                Diagnostic(
                    code="JA002",
                    message=f"suppression of {', '.join(stale)} silences nothing",
                    severity=severities["JA002"],
                    hint="remove it (the finding it was written for is gone)",
                    path=entry.path,
                    line=entry.line,
                    col=entry.col,
                )
            )
    return out
