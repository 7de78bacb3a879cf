"""What of the ``jubaku`` design another harness runs (``jbcompile export``): the A/B choice, one prompt
per row in setting ``basic``, and the metrics of ``jbcompile score`` (the fluctuation rates included:
they are computed over the whole task, grouping a case's variants by ``template_id``).

The row helpers below are copied into the exported task files, which run without jbcompile: each is
self-contained (no jbcompile import), and reads a row of the build as a harness hands it over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..exporting import HarnessExport
from .evaluate import JUBAKU, LETTERS, choice, count, formulas, with_case_weights


def prompt_variables(doc: Mapping[str, Any], task: str) -> dict[str, Any]:
    """The variables of the design's prompt template for one row."""
    return {
        "instruction": doc["instruction"],
        "context": doc["context"],
        "options": [doc["ans0"], doc["ans1"]],
    }


def choices_of(doc: Mapping[str, Any]) -> list[str]:
    """The two responses, A then B."""
    return [doc["ans0"], doc["ans1"]]


def gold_of_doc(doc: Mapping[str, Any]) -> int:
    """The neutral response."""
    return int(doc["label"])


def question_of_doc(doc: Mapping[str, Any]) -> str:
    """The instruction and the dialogue, for a harness that lists the responses itself."""
    return f"{doc['instruction']}\n\n{doc['context']}"


def record_of(doc: Mapping[str, Any], pred: int | None) -> dict[str, Any]:
    """The evaluated row that the metric counters read (``pred`` None: neither A nor B)."""
    return {
        "category": doc["category"],
        "template_id": doc["template_id"],
        "label": int(doc["label"]),
        "gold": int(doc["label"]),
        "pred": pred,
    }


def prepare_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record with its case's weight and whether the case fluctuates (see ``with_case_weights``)."""
    return with_case_weights(list(records))


EXPORT = HarnessExport(
    count=count,
    formulas=formulas,
    count_names=JUBAKU.count_names,
    helpers=(
        prompt_variables,
        choices_of,
        gold_of_doc,
        question_of_doc,
        record_of,
        choice,
        with_case_weights,
        prepare_records,
    ),
    metrics=("acc", "acc_all", "invalid_rate", "a_share", "fluctuation_rate", "fluctuation_rate_valid"),
    lower_is_better=frozenset({"invalid_rate", "fluctuation_rate", "fluctuation_rate_valid"}),
    settings=JUBAKU.settings,
    task="qa",
    option_labels=LETTERS,
    cannot="Few-shot prompts and the cluster-bootstrap intervals of `jbcompile score` are not exported. "
    "The fluctuation rates need every variant of a case in one run: "
    "`--limit` cuts cases apart. inspect's `multiple_choice()` task sends that solver's own prompt "
    "(lettered options, `ANSWER: X`); its setting tasks send jbcompile's.",
)
