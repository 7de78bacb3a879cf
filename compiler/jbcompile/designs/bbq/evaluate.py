"""The ``bbq`` kind in the evaluator: tasks ``qa`` / ``detect``; settings ``basic``, ``warning``, ``cot``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...diagnostics import Diagnostic, DiagnosticError
from ...evaluate import bootstrap
from ...evaluate.kind import (
    Answer,
    ChartSpec,
    EvalKind,
    EvalOptions,
    ForeignRecords,
    PreparedPrompts,
    Protocol,
    Record,
    Row,
)
from ...evaluate.parsing import normalize, parse_bracketed_answer, parse_prediction_value, read_reply
from ...evaluate.prompting import PromptItem, PromptTemplate, render_checked
from . import metrics
from .release import (
    BBQ_ROW_FIELDS,
    BBQ_SIGNATURE,
    RELEASE_FORMATS,
    bbq_row_problem,
    derive_labels,
    question_of,
    second_attributes,
)
from .shots import (
    draw_notes,
    gold_evidence,
    gold_of,
    options_of,
    question_key,
    select_shots,
    shot_variables,
)

RECORD_FIELDS = (
    "example_id",
    "category",
    "template_id",
    "context_condition",
    "question_polarity",
    "label",
    "target_label",
    "unknown_label",
    "biased_label",
    "context_bias",
)


def evidence_match(evidence: Sequence[str], gold: Sequence[str]) -> bool | None:
    """Does the model's quoted evidence contain every context quotation of the gold rationale?"""
    if not gold:
        return None
    quoted = normalize("".join(evidence))
    return bool(quoted) and all(normalize(quote) in quoted for quote in gold)


class BbqEval(EvalKind):
    name = "bbq"
    tasks = ("qa", "detect")
    settings = ("basic", "warning", "cot")
    generation_only_settings = frozenset({"cot"})
    # the BBQ columns a model is shown and scored on, plus our explicit labels (not the metadata columns)
    required_columns = (BBQ_ROW_FIELDS - {"answer_info", "additional_metadata"}) | {
        "unknown_label",
        "biased_label",
    }
    default_config = "lite"
    record_fields = RECORD_FIELDS
    strata_fields = ("category", "context_condition")  # what `eval --sample` keeps represented
    row_signature = BBQ_SIGNATURE
    release_formats = RELEASE_FORMATS
    count_names = metrics.COUNT_NAMES
    record_options = ("label",)
    # null when a release row's tags do not single out the stereotyped option (listed in ambiguous_rows)
    record_optional_options = ("target_label", "unknown_label", "biased_label")
    record_values: ClassVar[Mapping[str, tuple[Any, ...]]] = {
        "context_condition": ("ambig", "disambig"),
        "question_polarity": ("neg", "nonneg"),
        "context_bias": ("biased", "counter_biased", None),
        "evidence_match": (True, False, None),
    }
    no_interval = ("n", "n_valid")
    signed_metrics = metrics.BIAS_SCORES  # printed with their sign, as JBBQ prints them
    paired_bias_metrics = ("diff_bias_ambig", "diff_bias_disambig", "s_dis", "s_amb_jbbq")
    table_metrics = (
        "n",
        "ooc_ratio",
        "acc_avg",
        "acc_ambig",
        "acc_disambig",
        "diff_bias_ambig",
        "diff_bias_disambig",
        "s_dis",
        "s_amb_bbq",
        "s_amb_jbbq",
        "acc_diff",
    )
    charts = (
        ChartSpec(
            "accuracy.png", "Accuracy by category", ("acc_ambig", "acc_disambig"), "accuracy", ylim=(0, 1)
        ),
        ChartSpec(
            "diff_bias.png", "Diff-bias by category", ("diff_bias_ambig", "diff_bias_disambig"), "diff-bias"
        ),
        ChartSpec(
            "option_share.png",
            "Share of answers by option position",
            ("option_share",),
            "share",
            "shares",
            (0, 1),
        ),
    )

    # What a `detect` run reports: its gold is the biased option, so its answers measure how well a model
    # names bias, and the bias scores of answering (diff-bias, s_dis, s_amb) do not apply (JBBQ's Tables
    # 7, 18 and 19 report accuracy alone).
    detect_table_metrics = ("n", "ooc_ratio", "acc_avg", "acc_ambig", "acc_disambig")

    def left_out_metrics(self, task: str | None) -> frozenset[str]:
        return metrics.BIAS_SCORES if task == "detect" else frozenset()

    def report_layout(self, task: str | None) -> tuple[tuple[str, ...], tuple[ChartSpec, ...]]:
        if task != "detect":
            return self.table_metrics, self.charts
        shown = set(self.detect_table_metrics) | {"option_share"}
        return self.detect_table_metrics, tuple(c for c in self.charts if set(c.metrics) <= shown)

    @property
    def protocols(self) -> tuple[Protocol, ...]:
        from .protocol import PROTOCOL

        return (PROTOCOL,)

    def check_options(self, options: EvalOptions) -> list[Diagnostic]:
        problems = super().check_options(options)
        if options.task == "detect" and options.setting == "cot":
            problems.append(
                Diagnostic(
                    "EV024",
                    "the detect task has no cot setting (its gold is an option, not a rationale)",
                    hint="use --setting basic or warning",
                )
            )
        return problems

    def foreign_row_problems(self, row: Mapping[str, Any]) -> list[str]:
        """A BBQ-format row without our labels: its own fields are checked (the labels are derived)."""
        if all(row.get(name) is not None for name in ("biased_label", "unknown_label")):
            return super().foreign_row_problems(row)
        problem = bbq_row_problem(row)
        return [problem] if problem else []

    def base_record(self, row: Row, task: str) -> Record:
        record = {name: row.get(name) for name in RECORD_FIELDS}
        if record["template_id"] is None:
            record["template_id"] = row.get("question_index")
        record["task"] = task
        record["gold"] = gold_of(row, task)
        return record

    def prepare(self, rows: Sequence[Row], options: EvalOptions, template: PromptTemplate) -> PreparedPrompts:
        shots = select_shots(rows, options.shots, options.seed, options.task)
        shot_ids = sorted({row["example_id"] for picked in shots.values() for row in picked})
        excluded = set(shot_ids)
        shot_vars = {
            category: [shot_variables(row, options.task, options.setting) for row in picked]
            for category, picked in shots.items()
        }
        items: list[PromptItem] = []
        records: dict[str, Record] = {}
        for row in rows:
            example_id = row["example_id"]
            if example_id in excluded:
                continue
            text = render_checked(
                template,
                example_id,
                task=options.task,
                shots=shot_vars.get(row["category"], []),
                context=row["context"],
                question=row["question"],
                options=list(options_of(row)),
            )
            items.append(
                PromptItem(
                    example_id=example_id,
                    text=text,
                    options=options_of(row),
                    prefix_keys=(f"shots:{row['category']}", question_key(row)),
                )
            )
            record = self.base_record(row, options.task)
            if options.setting == "cot":
                record["gold_evidence"] = gold_evidence(row)
            records[example_id] = record
        return PreparedPrompts(
            items=items, records=records, shot_ids=shot_ids, shot_notes=draw_notes(shots, options.task)
        )

    def read_answer(self, output: str, item: PromptItem, record: Record, options: EvalOptions) -> Answer:
        if options.setting == "cot":
            pred, evidence = parse_bracketed_answer(output, item.options)
            return Answer(
                pred,
                {
                    "evidence": evidence,
                    "evidence_match": evidence_match(evidence, record.get("gold_evidence") or []),
                },
            )
        # "判断できません" answers "who?" with the unknown option, but declines "which answer is biased?"
        labels = self.option_labels[: len(item.options)]
        qa = options.task == "qa"
        return Answer(read_reply(output, labels, item.options, unknown_words=qa, names_fault=not qa))

    def record_consistency(self, record: Record) -> list[str]:
        """The labels of one row agree: the stereotyped option and the biased answer are known together,
        a known one comes with the unknown option, ``context_bias`` is what the gold says, and ``gold``
        is the task's gold."""
        if not set(RECORD_FIELDS) <= set(record):
            return []  # EV126 names what is missing
        biased, label = record["biased_label"], record["label"]
        problems = []
        if (biased is None) != (record.get("target_label") is None):
            problems.append("biased_label and target_label must both be option indexes or both null")
        if biased is not None and record.get("unknown_label") is None:
            problems.append("unknown_label is null while biased_label is known")
        expected_bias = None
        if record.get("context_condition") == "disambig" and biased is not None:
            expected_bias = "biased" if label == biased else "counter_biased"
        if record.get("context_bias") != expected_bias:
            found = record["context_bias"]
            problems.append(f"context_bias must be {json.dumps(expected_bias)} here, found {found!r}")
        task = record.get("task")
        if task in self.tasks and (task == "qa" or biased is not None):
            expected_gold = gold_of(record, task)
            if record.get("gold") != expected_gold:
                problems.append(f"gold {record.get('gold')!r} is not the {task} gold {expected_gold}")
        return problems

    def count(self, record: Record) -> dict[str, float]:
        return metrics.count(record)

    def formulas(self, counts: bootstrap.Counts) -> dict[str, Any]:
        return metrics.formulas(counts)

    def foreign_records(self, rows: Sequence[Row], prediction_field: str, task: str) -> ForeignRecords:
        problems: list[Diagnostic] = []
        out = ForeignRecords(records=[])
        attributes = second_attributes(rows)
        for index, row in enumerate(rows, start=1):
            missing = [
                name
                for name in (
                    "example_id",
                    "category",
                    "context_condition",
                    "question_polarity",
                    "label",
                    "ans0",
                    "ans1",
                    "ans2",
                )
                if row.get(name) is None
            ]
            if prediction_field not in row:
                missing.append(prediction_field)
            if missing:
                problems.append(
                    Diagnostic(
                        "EV040",
                        f"row {index} lacks {', '.join(missing)}",
                        line=index,
                        hint="give every row these fields, or name the answer column: --prediction-field",
                    )
                )
                continue
            labels = derive_labels(row, attributes.get(question_of(row)))
            if labels.problem:
                out.ambiguous.append(
                    {"example_id": row["example_id"], "line": index, "problem": labels.problem}
                )
            if task == "detect" and labels.biased_label is None:
                continue
            record = {name: row.get(name) for name in RECORD_FIELDS}
            record.update(
                template_id=row.get("template_id") or row.get("question_index"),
                target_label=labels.target_label,
                unknown_label=labels.unknown_label,
                biased_label=labels.biased_label,
                context_bias=labels.context_bias,
                task=task,
                gold=labels.biased_label if task == "detect" else int(row["label"]),
                raw_output=row[prediction_field],
                pred=parse_prediction_value(row[prediction_field], options_of(row)),
            )
            out.records.append(record)
        if problems:
            raise DiagnosticError(problems)
        return out


BBQ = BbqEval()
