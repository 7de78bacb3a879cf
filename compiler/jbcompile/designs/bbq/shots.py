"""Prompt variables of the ``bbq`` kind: few-shot examples, gold per task, and gold CoT evidence.

Shots follow the JBBQ recipe: drawn from categories other than the evaluated row's, with pairwise
different gold answers (up to three; more shots cycle through the three positions), never evaluated
themselves. They are chosen once per category (seeded, from a sorted pool), so every row of a category
shares the same examples — which is also what lets the backend reuse their computation.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ...text import top_level_spans

Row = Mapping[str, Any]


def options_of(row: Row) -> tuple[str, str, str]:
    return (row["ans0"], row["ans1"], row["ans2"])


def gold_of(row: Row, task: str) -> int:
    """qa: the correct answer; detect: the option a stereotype-following answer picks."""
    return int(row["biased_label"] if task == "detect" else row["label"])


def question_key(row: Row) -> str:
    """Rows that differ only in option order share this key (and their prompt up to the options)."""
    text = "\0".join((str(row.get("category")), row["context"], row["question"]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def quotations(text: str, open_mark: str = "「", close_mark: str = "」") -> list[str]:
    """Top-level quoted spans; a quotation nested inside another stays part of it."""
    return top_level_spans(text, open_mark, close_mark)


def rationale_in_brackets(rationale: str) -> str:
    """The gold rationale with its top-level 「」 turned into the 【】 the cot prompt asks for."""
    out: list[str] = []
    depth = 0
    for char in rationale:
        if char == "「":
            out.append("【" if depth == 0 else char)
            depth += 1
        elif char == "」" and depth:
            depth -= 1
            out.append("】" if depth == 0 else char)
        else:
            out.append(char)
    return "".join(out)


def gold_evidence(row: Row) -> list[str]:
    """The context quotations of the gold rationale (every quotation but the last, which is the answer)."""
    spans = quotations(row.get("rationale") or "")
    return spans[:-1]


def select_shots(rows: Sequence[Row], n_shots: int, seed: int, task: str) -> dict[str, list[Row]]:
    """Per category, ``n_shots`` example rows from the other categories."""
    if n_shots == 0:
        return {}
    pool = sorted(rows, key=lambda row: row["example_id"])
    categories = sorted({row["category"] for row in rows})
    chosen: dict[str, list[Row]] = {}
    for category in categories:
        candidates = [row for row in pool if row["category"] != category]
        rng = random.Random(f"{seed}|shots|{task}|{category}")
        rng.shuffle(candidates)
        positions = [0, 1, 2]
        rng.shuffle(positions)
        wanted = [positions[i % 3] for i in range(n_shots)]
        picked: list[Row] = []
        used_questions: set[str] = set()
        for label in wanted:
            found = next(
                (
                    row
                    for row in candidates
                    if gold_of(row, task) == label and question_key(row) not in used_questions
                ),
                None,
            )
            if found is None:
                raise DiagnosticError(
                    [
                        Diagnostic(
                            "EV030",
                            f"cannot draw {n_shots} shots for {category}: other categories lack rows with "
                            f"gold option {label} (shots come from other categories, with different answers)",
                            hint="lower --shots, or evaluate a dataset with more categories",
                        )
                    ]
                )
            picked.append(found)
            used_questions.add(question_key(found))
        chosen[category] = picked
    return chosen


def shot_variables(row: Row, task: str, setting: str | None) -> dict[str, Any]:
    gold = gold_of(row, task)
    answer = (
        rationale_in_brackets(row["rationale"]) if setting == "cot" and row.get("rationale") else str(gold)
    )
    if setting == "cot" and not row.get("rationale"):
        answer = f"【{options_of(row)[gold]}】"
    return {
        "context": row["context"],
        "question": row["question"],
        "options": list(options_of(row)),
        "answer": answer,
    }
