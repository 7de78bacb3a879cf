"""The papers' evaluation protocols, each in one word (``--protocol NAME``); each design declares its
paper's in ``EvalKind.protocols`` (a :class:`~.kind.Protocol`, e.g. ``designs/<name>/protocol.py``).

A protocol fixes what a paper's numbers depend on besides the model — scoring by generation, the shots,
how out-of-choice answers count — and names the metrics of the paper's main table, in its column order,
so a run's report opens with a row that can sit beside the paper's. The prompt wording stays ours (a
user with the paper's prompt passes it with ``--prompt-file``); results.json and the report say whose
wording a run's replies answered (:data:`PROMPT_WORDINGS`).

Explicit options against a protocol: a value the paper itself used wins (``--shots 0`` under a protocol
whose paper also reports zero-shot results); any other value is refused (EV201), never silently
replaced. Options the papers do not fix (``--max-new-tokens``, ``--chat``, ``--prompt-file``) are the user's.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .kind import EvalOptions, Protocol
from .registered import all_eval_kinds

DEFAULT_OPTIONS = EvalOptions()
# Whose words the prompts were, as results.json's ``protocol.prompt_wording`` says it, and the report's
# line on it: a protocol fixes how a paper scored, not what its prompt said, so a figure under a
# protocol is the paper's only as far as its prompt is.
JBCOMPILE, PROMPT_FILE, RELEASE, HARNESS, UNKNOWN = (
    "jbcompile",
    "prompt-file",
    "release",
    "harness",
    "unknown",
)
PROMPT_WORDINGS = {
    JBCOMPILE: "jbcompile's own, not the paper's; to run the paper's prompt, pass it with --prompt-file.",
    PROMPT_FILE: "the user's prompt file {name} (--prompt-file); jbcompile cannot tell whether it is the "
    "paper's.",
    RELEASE: "the release's own prompt, shipped with each row and sent as it is.",
    HARNESS: "the prompt of the harness that wrote these replies, not jbcompile's and not known to it; "
    "whether it is the paper's is for that harness to say.",
    UNKNOWN: "not recorded: these predictions came without the run.json of the run that made them, which "
    "names its prompt.",
}


def prompt_wording(prompt_file: str | None, *, verbatim: bool = False, harness: bool = False) -> str:
    """Whose wording a run's prompts had: another harness's (``score`` of its replies), a release's own
    (``verbatim``), the user's ``--prompt-file``, or jbcompile's."""
    if harness:
        return HARNESS
    if verbatim:
        return RELEASE
    return PROMPT_FILE if prompt_file else JBCOMPILE


def prompt_note(wording: str | None, prompt_file: str | None = None) -> str:
    """The report's sentence on a run's prompt wording (a results.json from before the field named
    more than jbcompile's own, or without it, reads as jbcompile's, as it was written)."""
    name = f"`{prompt_file}`" if prompt_file else "(not named)"
    text = PROMPT_WORDINGS.get(wording or JBCOMPILE, PROMPT_WORDINGS[JBCOMPILE])
    return "The prompt wording is " + text.format(name=name)


def all_protocols() -> dict[str, Protocol]:
    """Every registered design's protocols, by name."""
    return {protocol.name: protocol for kind in all_eval_kinds() for protocol in kind.protocols}


def get_protocol(name: str | None) -> Protocol | None:
    if name is None:
        return None
    protocols = all_protocols()
    if name not in protocols:
        raise DiagnosticError(
            [Diagnostic("EV200", f"unknown --protocol {name!r}", hint=f"use {', '.join(protocols)}")]
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


def resolve_temperature(protocol_name: str | None, given: float | None, thinking: bool = False) -> float:
    """The run's sampling temperature: the given one, else the one the protocol's paper decoded at (for
    a reasoning model, with ``thinking``, its own), else 0 (greedy). A given one the paper did not use is
    refused (EV201)."""
    problems = temperature_problems(protocol_name, given, thinking)
    if problems:
        raise DiagnosticError(problems)
    protocol = get_protocol(protocol_name)
    paper = protocol.temperature_for(thinking) if protocol else None
    return given if given is not None else paper if paper is not None else 0.0


def temperature_problems(
    protocol_name: str | None, given: float | None, thinking: bool, *, detected: str | None = None
) -> list[Diagnostic]:
    """EV201 for a temperature other than the one the protocol's paper decoded at (where it says);
    ``detected``: why the run is a reasoning model's although no --thinking was given (its chat template
    opens a think block, its replies carry reasoning), so the temperature was chosen for another model."""
    protocol = get_protocol(protocol_name)
    paper = protocol.temperature_for(thinking) if protocol else None
    if protocol is None or paper is None or given is None or given == paper:
        return []
    which = (
        " a reasoning model (--thinking)" if thinking and protocol.reasoning_temperature is not None else ""
    )
    paper_text = f"--protocol {protocol.name} decodes{which} at temperature {paper:g}, as its paper did"
    if detected:
        message = (
            f"{detected}, so it runs as a reasoning model; {paper_text}, and this run's temperature is "
            f"{given:g}"
        )
        hint = "add --thinking (it sets the paper's temperature), or drop --protocol"
    else:
        message = f"{paper_text}; --temperature {given:g} is not the paper's protocol"
        hint = "drop --temperature, or drop --protocol"
    return [Diagnostic("EV201", message, hint=hint)]


def decoding_problems(
    protocol_name: str | None, thinking: bool, own_decoding: str | None
) -> list[Diagnostic]:
    """EV201 for a backend option that hands decoding to the service (``own_decoding`` says how) under a
    protocol whose paper fixed its temperature and limits: the run would be recorded at the paper's
    temperature and limits without being decoded at them."""
    protocol = get_protocol(protocol_name)
    paper = protocol.temperature_for(thinking) if protocol else None
    if protocol is None or paper is None or own_decoding is None:
        return []
    return [
        Diagnostic(
            "EV201",
            f"--protocol {protocol.name} decodes as its paper did, here at temperature {paper:g} ("
            f"{protocol.max_new_tokens}); {own_decoding}: not the paper's protocol",
            hint="drop that option (--thinking alone reads a reasoning model's answer after its "
            "thinking), or drop --protocol",
        )
    ]


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
