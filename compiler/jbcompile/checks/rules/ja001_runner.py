"""Codes the runner reports about the run itself; they have docs and settings like any rule."""

from __future__ import annotations

from collections.abc import Iterable

from ...diagnostics import Severity
from ..base import Finding, Rule, register


class _RunnerRule(Rule):
    japanese = False

    def check(self, ctx: object) -> Iterable[Finding]:
        return ()  # reported by the runner, not by a pass over the sources


@register
class RuleCrashed(_RunnerRule):
    """A check rule (or a kind's text expansion) failed with an internal error.

    The run goes on with the other rules; the finding names the rule and the error, so the gap in the
    report is visible instead of silent.

    Anti-pattern:
        A lint run that stops at the first internal error and reports nothing else.

    Better:
        Report the crash as JA001 at the file being checked, and open an issue with the message.
    """

    code = "JA001"
    name = "rule-crashed"
    severity = Severity.ERROR


@register
class UnusedSuppression(_RunnerRule):
    """A `# jbcompile: ignore[CODE] reason` comment silences nothing.

    The finding it was written for is gone (fixed, or the text moved); a stale suppression would hide
    the next real finding on that line.

    Anti-pattern:
        disambiguating_context: その{{NAME1}}は…  # jbcompile: ignore[JA103] 指示語は不要

    Better:
        disambiguating_context: その{{NAME1}}は…
    """

    code = "JA002"
    name = "unused-suppression"
    severity = Severity.WARNING


@register
class MalformedSuppression(_RunnerRule):
    """A suppression comment names an unknown code or gives no reason.

    A suppression must say which finding it silences and why, so that a reviewer can judge it.

    Anti-pattern:
        text: 誰ですか  # jbcompile: ignore[JA104]

    Better:
        text: 誰ですか  # jbcompile: ignore[JA104] 原典の表記をそのまま残す
    """

    code = "JA003"
    name = "malformed-suppression"
    severity = Severity.ERROR


@register
class UnknownRuleSetting(_RunnerRule):
    """`checks:` in dataset.yaml sets the severity of a code that no rule has.

    Usually a typo: the setting would silently do nothing.

    Anti-pattern:
        checks: {JA13: off}

    Better:
        checks: {JA103: off}
    """

    code = "JA004"
    name = "unknown-rule-setting"
    severity = Severity.WARNING


@register
class FixDidNotConverge(_RunnerRule):
    """`jbcompile check --fix` did not reach a state where a pass changes nothing.

    Fixes are applied in passes until nothing changes, with a limit on the number of passes and a
    memory of the states already seen. When fixes undo each other or keep growing the text, the
    sources are restored as they were and the findings are reported as not fixable.

    Anti-pattern:
        Two normalization entries that rewrite each other ('，': '、' and '、': '，').

    Better:
        One direction per character in rules/normalization.yaml.
    """

    code = "JA005"
    name = "fix-did-not-converge"
    severity = Severity.ERROR
