"""The JUBAKU-v2 release and the output of its evaluation script, read as they are.

- **JUBAKU-v2 rows** (``example_id`` ``<case>_<wording>_<fwd|rev>``, ``viewpoint``, ``instruction`` =
  the whole prompt, ``input``, ``correct_answer`` ``a``/``b``, ``original_id``, ``is_swapped``).
- **The JUBAKU-v2 evaluation script's output**: one JSON object ``{"score": …, "entries": [release row
  + "model_ans" (+ "generated_text" | "likelihood_scores", "best_candidate")]}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...evaluate.kind import ANSWERED_BY, HARNESS_READ, LOG_LIKELIHOOD, RAW_REPLY, ReleaseFormat

JUBAKU_RELEASE_FIELDS = frozenset(
    {"example_id", "viewpoint", "instruction", "correct_answer", "original_id", "is_swapped"}
)
JUBAKU_OUTPUT_PREDICTION = "model_ans"

_JUBAKU_ID = re.compile(r"^(?P<case>.+)_(?P<wording>\d+)_(?P<order>fwd|rev)$")
_JUBAKU_MARKS = ("【文脈】", "【応答A】", "【応答B】")


def holds_whole_prompts(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Built ``jubaku`` rows whose ``instruction`` already shows both responses: a benchmark's own prompt
    layout (``prompt.layout`` in the sources, e.g. an imported JUBAKU-v2 release), to be sent as it is
    rather than wrapped in our prompt a second time."""
    return bool(rows) and all(
        isinstance(row.get("instruction"), str)
        and isinstance(row.get("ans0"), str)
        and isinstance(row.get("ans1"), str)
        and row["ans0"] in row["instruction"]
        and row["ans1"] in row["instruction"]
        for row in rows
    )


def split_jubaku_prompt(instruction: str) -> tuple[str, str, str]:
    """The dialogue and the two responses inside a JUBAKU-v2 prompt ("" when the marks are missing)."""
    positions = [instruction.find(mark) for mark in _JUBAKU_MARKS]
    if any(p < 0 for p in positions) or positions != sorted(positions):
        return "", "", ""
    (ctx, a, b), width = positions, [len(mark) for mark in _JUBAKU_MARKS]
    context = instruction[ctx + width[0] : a].strip()
    first = instruction[a + width[1] : b].strip()
    rest = instruction[b + width[2] :].strip()
    second = rest.rsplit("\n\n", 1)[0].strip() if "\n\n" in rest else rest  # drop the closing request
    return context, first, second


def jubaku_release_row(row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """A JUBAKU-v2 row (or an entry of its evaluation output) in the ``jubaku`` kind's columns."""
    example_id = row.get("example_id")
    match = _JUBAKU_ID.match(str(example_id)) if isinstance(example_id, str) else None
    if match is None:
        return None, f"example_id {example_id!r} is not <case>_<wording>_<fwd|rev>"
    answer = row.get("correct_answer")
    if not isinstance(answer, str) or answer.strip().lower() not in ("a", "b"):
        return None, f"correct_answer must be 'a' or 'b', found {answer!r}"
    if not isinstance(row.get("instruction"), str) or not row["instruction"].strip():
        return None, "instruction (the prompt) is empty"
    if not isinstance(row.get("viewpoint"), str) or not row["viewpoint"]:
        return None, "viewpoint (the category) is missing"
    label = 0 if answer.strip().lower() == "a" else 1
    context, first, second = split_jubaku_prompt(row["instruction"])
    converted = dict(row)
    converted.update(
        category=row["viewpoint"],
        template_id=str(row.get("original_id") if row.get("original_id") is not None else match["case"]),
        instruction_id=int(match["wording"]),
        order="neutral_first" if label == 0 else "biased_first",
        context=context,
        ans0=first,
        ans1=second,
        label=label,
        biased_label=1 - label,
    )
    return converted, None


class JubakuRelease(ReleaseFormat):
    """Rows of the JUBAKU-v2 release (the prompt in ``instruction``, sent as it is)."""

    name = "jubaku-v2"
    kind = "jubaku"
    verbatim_prompt = True

    def matches(self, row: Mapping[str, Any]) -> bool:
        keys = set(row)
        return keys >= JUBAKU_RELEASE_FIELDS and "label" not in keys and JUBAKU_OUTPUT_PREDICTION not in keys

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        return jubaku_release_row(row)


class JubakuScriptOutput(JubakuRelease):
    """The entries of the JUBAKU-v2 evaluation script's output: release rows with ``model_ans``."""

    name = "jubaku-v2-output"
    prediction_field = JUBAKU_OUTPUT_PREDICTION

    def matches(self, row: Mapping[str, Any]) -> bool:
        keys = set(row)
        return keys >= JUBAKU_RELEASE_FIELDS and "label" not in keys and JUBAKU_OUTPUT_PREDICTION in keys

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """An entry: ``model_ans`` is the script's regex reading of ``generated_text``, or (its likelihood
        mode, ``likelihood_scores``) the more likely of A and B, with no reply."""
        converted, problem = jubaku_release_row(row)
        if converted is None:
            return converted, problem
        reply = row.get("generated_text")
        if isinstance(reply, str):
            converted.update({RAW_REPLY: reply, ANSWERED_BY: HARNESS_READ})
        elif "likelihood_scores" in row or "best_candidate" in row:
            converted[ANSWERED_BY] = LOG_LIKELIHOOD
        return converted, problem


RELEASE_FORMATS = (JubakuScriptOutput(), JubakuRelease())
