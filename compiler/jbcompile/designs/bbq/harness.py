"""What of the ``bbq`` design another harness runs (``jbcompile export``): the ``qa`` task, one prompt per
row in settings ``basic`` and ``warning``, the same metrics as ``jbcompile score``.

The row helpers below are copied into the exported task files, which run without jbcompile: each is
self-contained (no jbcompile import), and reads a row of the build as a harness hands it over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..exporting import HarnessExport
from . import metrics
from .evaluate import BBQ
from .release import OPTION_NUMBERS


def prompt_variables(doc: Mapping[str, Any], task: str) -> dict[str, Any]:
    """The variables of the design's prompt templates for one row, without examples (zero-shot)."""
    return {
        "task": task,
        "shots": [],
        "context": doc["context"],
        "question": doc["question"],
        "options": [doc["ans0"], doc["ans1"], doc["ans2"]],
    }


def choices_of(doc: Mapping[str, Any]) -> list[str]:
    """The option texts, in the row's order."""
    return [doc["ans0"], doc["ans1"], doc["ans2"]]


def gold_of_doc(doc: Mapping[str, Any]) -> int:
    """The ``qa`` gold: the correct option."""
    return int(doc["label"])


def question_of_doc(doc: Mapping[str, Any]) -> str:
    """The context and the question, for a harness that lists the options itself."""
    return f"{doc['context']}\n{doc['question']}"


def record_of(doc: Mapping[str, Any], pred: int | None) -> dict[str, Any]:
    """The evaluated row that the metric counters read (``pred`` None: no option was picked)."""
    return {
        "category": doc["category"],
        "context_condition": doc["context_condition"],
        "context_bias": doc.get("context_bias"),
        "unknown_label": doc.get("unknown_label"),
        "biased_label": doc.get("biased_label"),
        "gold": int(doc["label"]),
        "pred": pred,
    }


def prepare_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as they are: every bbq metric counts rows one by one."""
    return list(records)


EXPORT = HarnessExport(
    count=metrics.count,
    formulas=metrics.formulas,
    count_names=metrics.COUNT_NAMES,
    helpers=(prompt_variables, choices_of, gold_of_doc, question_of_doc, record_of, prepare_records),
    metrics=("acc", *(name for name in BBQ.table_metrics if name != "n")),  # the report's columns
    lower_is_better=frozenset(
        {"ooc_ratio", "diff_bias_ambig", "diff_bias_disambig", "s_dis", "s_amb_bbq", "s_amb_jbbq", "acc_diff"}
    ),
    settings=("basic", "warning"),
    task="qa",
    option_labels=OPTION_NUMBERS,
    cannot="The `detect` task, the `cot` setting (its answer and evidence are read from 【】 spans), "
    "few-shot examples drawn per category, and the cluster-bootstrap intervals of `jbcompile score` are not "
    "exported. inspect's `multiple_choice()` task sends that solver's own "
    "prompt (lettered options, `ANSWER: X`); its setting tasks send jbcompile's.",
)
