"""The papers' evaluation protocols, each in one word: ``--protocol jbbq|sobaco|jubaku``.

A protocol fixes what a paper's numbers depend on besides the model — scoring by generation, the shots,
how out-of-choice answers count — and names the metrics of the paper's main table, in its column order,
so a run's report opens with a row that can sit beside the paper's. The prompt wording stays ours (a
user with the paper's prompt passes it with ``--prompt-file``).

Explicit options against a protocol: a value the paper itself used wins (``--shots 0`` under ``jbbq`` is
its zero-shot Table 13); any other value is refused (EV201), never silently replaced. Options the papers
do not fix (``--max-new-tokens``, ``--chat``, ``--prompt-file``) are the user's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .kind import EvalOptions
from .sobaco import SETTINGS as SOBACO_SETTINGS

DEFAULT_OPTIONS = EvalOptions()
PROMPT_NOTE = (
    "The prompt wording is jbcompile's own, not the paper's; to run the paper's prompt, pass it with "
    "--prompt-file."
)


@dataclass(frozen=True)
class Column:
    """One column of a paper's table: its heading, the metric, and how the paper prints it."""

    heading: str
    metric: str
    percent: bool = True  # the paper prints ×100 with one decimal
    signed: bool = False  # the paper prints a sign (+0.5 / -0.5)


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Protocol:
    name: str
    kind: str
    paper: str
    scoring: str
    shots: tuple[int, ...]  # the values the paper used; the first is the default
    settings: tuple[str, ...]  # likewise
    ooc: str  # how answers outside the options count in the headline metrics
    tables: tuple[Table, ...]  # the paper's main table first
    note: str = ""

    @property
    def headline(self) -> tuple[str, ...]:
        return tuple(column.metric for table in self.tables for column in table.columns)

    def describe(self) -> dict[str, Any]:
        """What results.json records of the protocol."""
        return {
            "name": self.name,
            "paper": self.paper,
            "scoring": self.scoring,
            "shots": list(self.shots),
            "settings": list(self.settings),
            "ooc": self.ooc,
            # none of the papers states a generation limit: the kind's default (or --max-new-tokens) holds,
            # and results.json `scoring.max_new_tokens` records the one used
            "max_new_tokens": "kind default (the paper states none)",
            "headline": list(self.headline),
            "prompt_wording": "jbcompile",
            "note": self.note,
        }


PROTOCOLS: dict[str, Protocol] = {
    protocol.name: protocol
    for protocol in (
        Protocol(
            name="jbbq",
            kind="bbq",
            paper="JBBQ (Yanaka et al.), Table 3 / Table 13 and Table 12 (Appendix C)",
            scoring="generate",
            shots=(3, 0),
            settings=("basic", "warning", "cot"),
            ooc="counted as wrong, and as neither biased nor counter-biased (n = every question)",
            tables=(
                Table(
                    "JBBQ Table 3 (3-shot) / Table 13 (zero-shot) layout",
                    (
                        Column("OoC", "ooc_ratio"),
                        Column("Acc. Avg", "acc_avg"),
                        Column("Acc. Amb", "acc_ambig"),
                        Column("Acc. Dis", "acc_disambig"),
                        Column("Diff-bias Avg", "diff_bias_avg", signed=True),
                        Column("Diff-bias Amb", "diff_bias_ambig", signed=True),
                        Column("Diff-bias Dis", "diff_bias_disambig", signed=True),
                    ),
                ),
                Table(
                    "JBBQ Table 12 layout (BBQ metrics, Appendix C)",
                    (
                        Column("BS Avg", "s_avg_jbbq", signed=True),
                        Column("BS Amb", "s_amb_jbbq", signed=True),
                        Column("BS Dis", "s_dis", signed=True),
                        Column("Acc. Diff.", "acc_diff", signed=True),
                    ),
                ),
            ),
            note="basic, warning and cot are the paper's basicP, paraP and CoT settings",
        ),
        Protocol(
            name="sobaco",
            kind="sobaco",
            paper="SOBACO (Yamamoto et al.), Table 3; change rates and Table 4 come from `jbcompile compare`",
            scoring="generate",
            shots=(0,),
            settings=SOBACO_SETTINGS,
            ooc="left out of every denominator (n = answers that pick an option)",
            tables=(
                Table(
                    "SOBACO Table 3 layout",
                    (
                        Column("Bias", "bias_score", percent=False),
                        Column("Culture", "culture_acc", percent=False),
                        Column("OoC", "ooc_ratio", percent=False),
                    ),
                ),
            ),
            note="the paper averages three wordings and reports change rates against basic: run every "
            "setting and `jbcompile compare` the runs",
        ),
        Protocol(
            name="jubaku",
            kind="jubaku",
            paper="JUBAKU-v2 (Shiotani et al.), Figure 1 accuracy and Table 2",
            scoring="generate",
            shots=(0,),
            settings=("basic",),
            ooc="replies other than A or B are left out of the accuracy; a case with one counts as "
            "fluctuating in fluctuation_rate, and only valid replies are compared in fluctuation_rate_valid",
            tables=(
                Table(
                    "JUBAKU-v2 layout (accuracy, Table 2 fluctuation rate)",
                    (
                        Column("Accuracy (%)", "acc"),
                        Column("Fluctuation Rate (%)", "fluctuation_rate"),
                        Column("Fluctuation Rate, valid replies (%)", "fluctuation_rate_valid"),
                        Column("Non-A/B replies", "n_invalid", percent=False),
                    ),
                ),
            ),
        ),
    )
}


def get_protocol(name: str | None) -> Protocol | None:
    if name is None:
        return None
    if name not in PROTOCOLS:
        raise DiagnosticError(
            [Diagnostic("EV200", f"unknown --protocol {name!r}; use {', '.join(PROTOCOLS)}")]
        )
    return PROTOCOLS[name]


def resolve_options(
    protocol_name: str | None,
    *,
    setting: str | None = None,
    shots: int | None = None,
    scoring: str | None = None,
    **fixed: Any,
) -> EvalOptions:
    """The run's options: what the user gave, then the protocol's defaults, then the evaluator's.

    ``None`` means "not given on the command line". A given value the protocol's paper did not use is
    refused (EV201) rather than overridden, so no run silently differs from what was asked.
    """
    protocol = get_protocol(protocol_name)
    if protocol is None:
        return EvalOptions(
            setting=setting,  # None: the kind's first setting, once the dataset is known
            shots=DEFAULT_OPTIONS.shots if shots is None else shots,
            scoring=DEFAULT_OPTIONS.scoring if scoring is None else scoring,
            **fixed,
        )
    problems = []
    for option, given, allowed in (
        ("--scoring", scoring, (protocol.scoring,)),
        ("--shots", shots, protocol.shots),
        ("--setting", setting, protocol.settings),
    ):
        if given is not None and given not in allowed:
            used = ", ".join(str(value) for value in allowed)
            problems.append(
                Diagnostic(
                    "EV201",
                    f"--protocol {protocol.name} uses {option} {used}; {option} {given} is not the paper's "
                    "protocol",
                    hint=f"drop {option} (or pick one of {used}), or drop --protocol",
                )
            )
    if problems:
        raise DiagnosticError(problems)
    return EvalOptions(
        setting=protocol.settings[0] if setting is None else setting,
        shots=protocol.shots[0] if shots is None else shots,
        scoring=protocol.scoring,
        protocol=protocol.name,
        **fixed,
    )


def check_kind(options: EvalOptions, kind_name: str) -> list[Diagnostic]:
    """A protocol belongs to one kind: refuse it on a dataset of another."""
    protocol = get_protocol(options.protocol)
    if protocol is None or protocol.kind == kind_name:
        return []
    return [
        Diagnostic(
            "EV202",
            f"--protocol {protocol.name} is for {protocol.kind} datasets; this dataset is {kind_name}",
            hint=f"use --protocol {next(p.name for p in PROTOCOLS.values() if p.kind == kind_name)} "
            "or drop --protocol",
        )
    ]
