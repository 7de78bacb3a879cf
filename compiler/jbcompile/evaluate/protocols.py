"""The papers' evaluation protocols, each in one word (``--protocol NAME``); each design declares its
paper's in ``EvalKind.protocols`` (e.g. ``designs/<name>/protocol.py``).

A protocol fixes what a paper's numbers depend on besides the model — scoring by generation, the shots,
how out-of-choice answers count — and names the metrics of the paper's main table, in its column order,
so a run's report opens with a row that can sit beside the paper's. The prompt wording stays ours (a
user with the paper's prompt passes it with ``--prompt-file``).

Explicit options against a protocol: a value the paper itself used wins (``--shots 0`` under a protocol
whose paper also reports zero-shot results); any other value is refused (EV201), never silently
replaced. Options the papers do not fix (``--max-new-tokens``, ``--chat``, ``--prompt-file``) are the user's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .kind import EvalOptions

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
    # how the paper decoded and read replies, where it says so (the design's kind applies it)
    max_new_tokens: str = "kind default (the paper states none)"
    reading: str = "as a person reads a reply (docs/eval.md, Raw replies)"
    # the tables of another task, where the paper lays that task out otherwise (e.g. bias detection)
    task_tables: tuple[tuple[str, tuple[Table, ...]], ...] = ()

    def tables_for(self, task: str) -> tuple[Table, ...]:
        """The paper's tables for ``task``: its own layout where it has one, else the main tables."""
        return dict(self.task_tables).get(task, self.tables)

    def headline_for(self, task: str) -> tuple[str, ...]:
        return tuple(column.metric for table in self.tables_for(task) for column in table.columns)

    @property
    def headline(self) -> tuple[str, ...]:
        return tuple(column.metric for table in self.tables for column in table.columns)

    def describe(self, task: str = "qa") -> dict[str, Any]:
        """What results.json records of the protocol (``scoring.max_new_tokens`` there is the limit used)."""
        return {
            "name": self.name,
            "paper": self.paper,
            "scoring": self.scoring,
            "shots": list(self.shots),
            "settings": list(self.settings),
            "ooc": self.ooc,
            "max_new_tokens": self.max_new_tokens,
            "reading": self.reading,
            "headline": list(self.headline_for(task)),
            "prompt_wording": "jbcompile",
            "note": self.note,
        }


def all_protocols() -> dict[str, Protocol]:
    """Every registered design's protocols, by name."""
    from .kind import all_eval_kinds

    return {protocol.name: protocol for kind in all_eval_kinds() for protocol in kind.protocols}


def get_protocol(name: str | None) -> Protocol | None:
    if name is None:
        return None
    protocols = all_protocols()
    if name not in protocols:
        raise DiagnosticError(
            [Diagnostic("EV200", f"unknown --protocol {name!r}; use {', '.join(protocols)}")]
        )
    return protocols[name]


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
    own = [p.name for p in all_protocols().values() if p.kind == kind_name]
    return [
        Diagnostic(
            "EV202",
            f"--protocol {protocol.name} is for {protocol.kind} datasets; this dataset is {kind_name}",
            hint=f"use --protocol {own[0]} or drop --protocol" if own else "drop --protocol",
        )
    ]
