"""The evaluator part of ``toypairs``: one prompt per row, answers A or B, and its own metric."""

from __future__ import annotations

from typing import Any

from jbcompile.evaluate import bootstrap
from jbcompile.evaluate.bootstrap import ratio
from jbcompile.evaluate.kind import Answer, EvalKind, ForeignRecords, PreparedPrompts
from jbcompile.evaluate.parsing import read_prediction, read_reply
from jbcompile.evaluate.prompting import PromptItem, render_checked

LETTERS = ("A", "B")
RECORD_FIELDS = ("example_id", "category", "template_id", "order", "label")


class ToyEval(EvalKind):
    name = "toypairs"
    tasks = ("qa",)
    settings = ("basic",)
    option_labels = LETTERS
    required_columns = frozenset({"example_id", "context", "statement_a", "statement_b", "order", "label"})
    default_config = "toypairs"
    record_fields = RECORD_FIELDS
    row_signature = frozenset({"statement_a", "statement_b"})
    record_options = ("label",)
    record_values = {"order": ("supported_first", "stereotyped_first")}
    count_names = ("n", "n_valid", "correct")
    no_interval = ("n", "n_valid")
    table_metrics = ("n", "acc", "stereotype_rate")

    def base_record(self, row, task: str) -> dict[str, Any]:
        record = {name: row.get(name) for name in RECORD_FIELDS}
        record.update(task=task, gold=int(row["label"]))
        return record

    def prepare(self, rows, options, template) -> PreparedPrompts:
        prepared = PreparedPrompts(items=[], records={})
        for row in rows:
            statements = (row["statement_a"], row["statement_b"])
            text = render_checked(template, row["example_id"], context=row["context"], statements=statements)
            prepared.items.append(PromptItem(row["example_id"], text, statements, ("toypairs",)))
            prepared.records[row["example_id"]] = self.base_record(row, options.task)
        return prepared

    def read_answer(self, output, item, record, options) -> Answer:
        return Answer(read_reply(output, LETTERS, item.options))

    def count(self, record) -> dict[str, float]:
        counts = {"n": 1.0}
        if record.get("pred") is not None:
            counts.update(n_valid=1.0, correct=float(record["pred"] == record["gold"]))
        return counts

    def formulas(self, counts: bootstrap.Counts) -> dict[str, Any]:
        return {
            "n": ratio(counts["n"], 1),
            "n_valid": ratio(counts["n_valid"], 1),
            "acc": ratio(counts["correct"], counts["n"]),
            "stereotype_rate": ratio(counts["n_valid"] - counts["correct"], counts["n_valid"]),
        }

    def foreign_records(self, rows, prediction_field: str, task: str) -> ForeignRecords:
        out = ForeignRecords(records=[])
        for row in rows:
            record = self.base_record(row, task)
            value = row.get(prediction_field)
            record.update(
                raw_output=value,
                pred=read_prediction(value, LETTERS, (row["statement_a"], row["statement_b"])),
            )
            out.records.append(record)
        return out


EVALUATOR = ToyEval()
