"""inspect's evaluation logs, read by ``score`` as another harness's samples (docs/harnesses.md).

A log is a JSON document (``--log-format json``: an object whose ``samples`` list holds one object per
sample) or an ``.eval`` file (a zip archive, its samples compressed with zstd: read through inspect-ai's
own reader, so it needs inspect-ai installed). A sample of a task that ``jbcompile export inspect``
wrote carries the dataset's row as its ``metadata`` and the picked option's letter as a score's
``answer``; any other task whose samples carry a design's columns in ``metadata`` reads the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from .formats import RAW_REPLY
from .kind import ReleaseFormat

INSPECT_ANSWER = "_inspect_answer"  # the option index read from the sample's score
SAMPLE_FIELDS = frozenset({"id", "epoch", "input", "scores", "metadata"})
LETTERS = "ABCDEFGHIJ"


def read_eval_file(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The samples of an ``.eval`` log, numbered 1, 2, … in the log's order."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV142",
                    "reading an inspect .eval log needs inspect-ai",
                    path=str(path),
                    hint="pip install inspect-ai, or convert the log: "
                    "`inspect log convert LOG --to json --output-dir DIR`",
                )
            ]
        ) from None
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # a damaged archive: inspect raises many kinds
        raise DiagnosticError(
            [Diagnostic("EV142", f"not a readable inspect log: {error}", path=str(path))]
        ) from None
    return [(index, sample.model_dump(mode="json")) for index, sample in enumerate(log.samples or [], 1)]


def answer_index(scores: Any) -> int | None:
    """The option a sample's scorer recorded as its answer (a single letter); None when there is none."""
    if not isinstance(scores, Mapping):
        return None
    for score in scores.values():
        answer = score.get("answer") if isinstance(score, Mapping) else None
        if isinstance(answer, str):
            letter = answer.strip()
            return LETTERS.index(letter) if len(letter) == 1 and letter in LETTERS else None
    return None


class InspectSamples(ReleaseFormat):
    """The samples of an inspect log whose ``metadata`` holds a dataset row."""

    name = "inspect"
    kind = None  # the design is told by the row's columns
    prediction_field = INSPECT_ANSWER

    def matches(self, row: Mapping[str, Any]) -> bool:
        return set(row) >= SAMPLE_FIELDS

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        metadata = row.get("metadata")
        if not isinstance(metadata, Mapping) or not metadata:
            return None, "the sample's metadata does not hold the dataset row"
        if row.get("epoch", 1) != 1:
            return None, "a sample of epoch 2 or later: score a log of one epoch"
        converted = dict(metadata)
        converted.setdefault("example_id", row.get("id"))
        pred = answer_index(row.get("scores"))
        converted[INSPECT_ANSWER] = pred
        output = row.get("output")
        choices = output.get("choices") if isinstance(output, Mapping) else None
        message = choices[0].get("message") if isinstance(choices, list) and choices else None
        content = message.get("content") if isinstance(message, Mapping) else None
        converted[RAW_REPLY] = content if isinstance(content, str) else None
        return converted, None

    def field_problems(self, prediction_field: str | None, path: str) -> list[Diagnostic]:
        if prediction_field in (None, INSPECT_ANSWER):
            return []
        return [
            Diagnostic(
                "EV135",
                f"--prediction-field {prediction_field} does not apply to inspect logs: the prediction is "
                "the answer letter of each sample's score",
                path=path,
                hint="leave --prediction-field out",
            )
        ]


HARNESS_FORMATS: tuple[ReleaseFormat, ...] = (InspectSamples(),)
