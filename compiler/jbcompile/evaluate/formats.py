"""Files other people released or produced, read as they are, into the rows the evaluator's kinds read.

``eval`` and ``score`` accept these without an import step (docs/eval.md, "score: formats read"). Each
design declares the release formats it reads (``EvalKind.release_formats``, each a
:class:`~.kind.ReleaseFormat`: e.g. a paper's released rows, or another harness's sample logs); the
first format whose ``matches`` accepts a file's first row reads every row of the file. Rows of no known
format pass through unchanged.

Release files number their rows per category file, so when example ids repeat across categories (a
concatenation, or a Hub config holding every category) they are qualified as ``<category>/<id>``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic
from ..jsonl import repeated
from .harness_logs import HARNESS_FORMATS
from .kind import ReleaseFormat
from .registered import all_eval_kinds


@dataclass
class Adapted:
    """Rows in the columns of the evaluator's kinds, with where each came from and what was unclear."""

    rows: list[dict[str, Any]]
    lines: list[int]
    format: str  # jbcompile | other | the name of a design's release format
    kind: str | None = None  # the kind the format belongs to, when the format says
    prediction_field: str | None = None  # where the format keeps its prediction
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    verbatim_prompt: bool = False  # ``instruction`` is the release's whole prompt: send it as it is


def format_name(adapted_format: str, kind: str) -> str:
    """A file's format as results.json names it (``dataset.format`` of eval, ``source.format`` of score):
    a release or harness format by its name, rows in a design's own columns by the design's name."""
    return kind if adapted_format == "other" else adapted_format


def release_formats() -> list[ReleaseFormat]:
    """Every registered design's release formats, in the registry's order, then the harness logs that
    hold any design's rows (inspect's)."""
    return [fmt for kind in all_eval_kinds() for fmt in kind.release_formats] + list(HARNESS_FORMATS)


def detect_format(row: Mapping[str, Any]) -> ReleaseFormat | None:
    return next((fmt for fmt in release_formats() if fmt.matches(row)), None)


def adapt(
    records: Sequence[tuple[int, Mapping[str, Any]]], path: str, prediction_field: str | None = None
) -> Adapted:
    """Rows of a release or harness format turned into our columns; other rows pass through unchanged.

    ``prediction_field`` is the column the user named (``score --prediction-field``), checked against
    formats that keep their prediction in one place of their own."""
    if not records:
        return Adapted([], [], "other")
    fmt = detect_format(records[0][1])
    lines = [line for line, _ in records]
    if fmt is None:
        other = Adapted([dict(row) for _, row in records], lines, "other")
        other.problems = _structured_predictions(records, path, prediction_field)
        return other
    adapted = Adapted([], [], fmt.name)
    adapted.problems = fmt.field_problems(prediction_field, path)
    if prediction_field != fmt.prediction_field:  # a format's own place (a harness log's) is read by it
        adapted.problems = adapted.problems or _structured_predictions(records, path, prediction_field)
    if adapted.problems:
        return adapted
    for line, row in records:
        converted, problem = fmt.convert(row)
        if problem is not None or converted is None:
            adapted.problems.append(
                Diagnostic(
                    "EV130",
                    f"{fmt.name} row: {problem}",
                    path=path,
                    line=line,
                    hint=f"give the rows as {fmt.name} writes them",
                )
            )
            continue
        adapted.rows.append(converted)
        adapted.lines.append(line)
    qualify_repeated_ids(adapted.rows)
    adapted.kind = fmt.kind
    adapted.ambiguous = fmt.finish(adapted.rows, adapted.lines)
    adapted.prediction_field = fmt.prediction_field
    adapted.verbatim_prompt = fmt.verbatim_prompt
    return adapted


def qualify_repeated_ids(rows: list[dict[str, Any]]) -> None:
    """Example ids as strings; ``<category>/<id>`` when an id recurs in another category (BBQ's files)."""
    categories: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        categories[str(row.get("example_id"))].add(str(row.get("category")))
    repeated = any(len(names) > 1 for names in categories.values())
    for row in rows:
        example_id = str(row.get("example_id"))
        row["example_id"] = f"{row.get('category')}/{example_id}" if repeated else example_id


def duplicate_ids(rows: Sequence[Mapping[str, Any]], lines: Sequence[int], path: str) -> list[Diagnostic]:
    """One diagnostic per example id that occurs on more than one line."""
    problems = []
    for key, positions in repeated(str(row.get("example_id")) for row in rows).items():
        found = [lines[position] for position in positions]
        problems.append(
            Diagnostic(
                "EV121",
                f"example_id {key!r} occurs on {len(found)} lines ({', '.join(map(str, found[:5]))}"
                + (", …" if len(found) > 5 else "")
                + "); which prediction counts is not clear",
                path=path,
                line=found[1],
                hint="keep one line per row",
            )
        )
    return problems


def release_path(path: Path) -> bool:
    """A single file in a release's own format, rather than a build folder or a Hub id."""
    return path.is_file() and path.suffix.lower() in (".jsonl", ".json", ".parquet")


def _structured_predictions(
    records: Sequence[tuple[int, Mapping[str, Any]]], path: str, prediction_field: str | None
) -> list[Diagnostic]:
    """A --prediction-field whose values are objects or lists holds no answer (an option index or text):
    read as text, every row would be out of choice, and the scores would be of nothing (EV041). A column
    of answers with a stray object in it is scored (that row out of choice), as any other bad answer is."""
    if prediction_field is None:
        return []
    given = [(line, row[prediction_field]) for line, row in records if row.get(prediction_field) is not None]
    structured = [(line, value) for line, value in given if isinstance(value, dict | list)]
    if not structured or len(structured) < len(given):
        return []
    line, value = structured[0]
    what = "an object" if isinstance(value, dict) else "a list"
    return [
        Diagnostic(
            "EV041",
            f"the prediction column {prediction_field!r} holds {what} in every row that has it "
            f"({len(structured)} of {len(records)} rows), not an answer",
            path=path,
            line=line,
            hint="name the column that holds the predicted option (its index or its text) with "
            "--prediction-field",
        )
    ]
