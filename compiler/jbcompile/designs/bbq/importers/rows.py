"""Released rows in BBQ's format (BBQ's data/<Category>.jsonl, JBBQ's): parsed, read, and compared
with the rows our compiler makes (:func:`compiled_signature`).

The bottom of the package: it imports no other module of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....diagnostics import Diagnostic, Severity
from ....importers.releases import RowCodes, read_release_rows
from ....importers.report import ImportReport

UNKNOWN_TAG = "unknown"
UNKNOWN = "\x00unknown"  # stands for any unknown-option wording when rows are compared


@dataclass
class SourceRow:
    """One input row, parsed, with the templates it ended up in."""

    path: str
    line: int
    category: str
    question_index: str
    version: str
    polarity: str
    condition: str
    context: str
    question: str
    options: tuple[str, str, str]
    tags: tuple[str, str, str]
    persons: tuple[str, str, str]  # answer_info texts
    label: int
    subcategory: str | None
    stereotyped: tuple[str, ...]
    source: str | None
    templates: tuple[str, ...] = ()  # the templates that should reproduce it (none: not recovered)

    @property
    def unknown_index(self) -> int:
        return next(i for i, tag in enumerate(self.tags) if tag.lower() == UNKNOWN_TAG)

    def signature(self) -> tuple:
        """What the round trip must reproduce: context, question, option set, gold text (unknown as one)."""
        unknown = self.unknown_index
        options = tuple(sorted(UNKNOWN if i == unknown else o for i, o in enumerate(self.options)))
        gold = UNKNOWN if self.label == unknown else self.options[self.label]
        return (self.context, self.question, options, gold)

    def diagnostic(
        self, code: str, message: str, severity: Severity = Severity.ERROR, hint: str | None = None
    ) -> Diagnostic:
        return Diagnostic(
            code=code, message=message, path=self.path, line=self.line, col=1, severity=severity, hint=hint
        )


def compiled_signature(row: dict[str, Any]) -> tuple:
    """The signature of a row our compiler produced (see :meth:`SourceRow.signature`)."""
    unknown = row["unknown_label"]
    options = [row["ans0"], row["ans1"], row["ans2"]]
    shown = tuple(sorted(UNKNOWN if i == unknown else o for i, o in enumerate(options)))
    gold = UNKNOWN if row["label"] == unknown else options[row["label"]]
    return (row["context"], row["question"], shown, gold)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else str(value)


_TEXT_FIELDS = (
    "question_polarity",
    "context_condition",
    "category",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
)


def _check_types(data: dict[str, Any]) -> None:
    """BBQ's fields as its release types them: a label 1.5, true or "1", or an option given as a list,
    is a row to report (``score`` refuses the same row), never one to convert quietly."""
    wrong = [key for key in _TEXT_FIELDS if not isinstance(data[key], str)]
    if type(data["question_index"]) not in (str, int):
        wrong.append("question_index")
    if wrong:
        raise ValueError(f"{', '.join(wrong)} must be text, found {', '.join(repr(data[k]) for k in wrong)}")
    if type(data["label"]) is not int:
        raise ValueError(f"label must be 0, 1 or 2, not {data['label']!r}")
    info = data["answer_info"]
    if isinstance(info, dict) and not all(
        isinstance(item, str) for key in ("ans0", "ans1", "ans2") for item in info.get(key) or []
    ):
        raise ValueError("answer_info must map ans0–ans2 to [text, tag], both text")


def parse_row(data: Any, path: str, line: int) -> SourceRow:
    """One JSON object as a SourceRow; ValueError says what is wrong with it."""
    if not isinstance(data, dict):
        raise ValueError("a row must be a JSON object")
    missing = [
        key
        for key in (
            "question_index",
            "question_polarity",
            "context_condition",
            "category",
            "answer_info",
            "context",
            "question",
            "ans0",
            "ans1",
            "ans2",
            "label",
        )
        if key not in data
    ]
    if missing:
        raise ValueError(f"missing fields: {', '.join(missing)}")
    _check_types(data)
    info = data["answer_info"]
    if not isinstance(info, dict) or any(
        not isinstance(info.get(f"ans{i}"), list) or len(info[f"ans{i}"]) < 2 for i in range(3)
    ):
        raise ValueError("answer_info must map ans0–ans2 to [text, tag]")
    tags = (_text(info["ans0"][1]), _text(info["ans1"][1]), _text(info["ans2"][1]))
    if sum(1 for t in tags if t.lower() == UNKNOWN_TAG) != 1:
        raise ValueError(f"exactly one option must be tagged 'unknown' in answer_info (tags: {list(tags)})")
    texts = {key: data[key] for key in ("category", "context", "question", "ans0", "ans1", "ans2")}
    empty = [key for key, value in texts.items() if not isinstance(value, str) or not value.strip()]
    if empty:  # an empty text would be imported as a template text of no words
        raise ValueError(f"empty, or not text: {', '.join(empty)}")
    polarity, condition = _text(data["question_polarity"]), _text(data["context_condition"])
    if polarity not in ("neg", "nonneg") or condition not in ("ambig", "disambig"):
        raise ValueError(f"unknown polarity/condition {polarity!r}/{condition!r}")
    try:
        label = int(data["label"])
    except (TypeError, ValueError):
        raise ValueError(f"label must be 0, 1 or 2, not {data['label']!r}") from None
    if label not in (0, 1, 2):
        raise ValueError(f"label must be 0, 1 or 2, not {label}")
    meta = data.get("additional_metadata") or {}
    groups = meta.get("stereotyped_groups") or []
    if isinstance(groups, str):
        groups = [groups]
    subcategory = meta.get("subcategory")
    subcategory = None if subcategory in (None, "", "None") else _text(subcategory)
    source = meta.get("source")
    return SourceRow(
        path=path,
        line=line,
        category=_text(data["category"]),
        question_index=_text(data["question_index"]),
        version=_text(meta.get("version") or "a") or "a",
        polarity=polarity,
        condition=condition,
        context=_text(data["context"]),
        question=_text(data["question"]),
        options=(_text(data["ans0"]), _text(data["ans1"]), _text(data["ans2"])),
        tags=tags,
        persons=(_text(info["ans0"][0]), _text(info["ans1"][0]), _text(info["ans2"][0])),
        label=label,
        subcategory=subcategory,
        stereotyped=tuple(_text(g) for g in groups),
        source=_text(source) if source not in (None, "", "None") else None,
    )


# A line that is not JSON is IM001, a row that does not fit BBQ's format IM002 (tests pin both).
def named_category(data: Any) -> str | None:
    """The category a row that does not fit still names (its rows are counted there), or None."""
    category = data.get("category") if isinstance(data, dict) else None
    return category.strip() or None if isinstance(category, str) else None


ROW_CODES = RowCodes(
    unreadable="IM001",
    unfit="IM002",
    hint="BBQ rows: example_id, question_index, question_polarity, context_condition, category, "
    "answer_info (ans0–ans2 → [text, tag], one tagged unknown), context, question, ans0–ans2, label",
    group=named_category,
    name_scope=("category",),  # BBQ numbers its rows per category file
    same_content=False,  # a pair BBQ drew twice repeats its ambiguous rows (under their own ids)
)


def read_rows(paths: Sequence[Path], report: ImportReport) -> list[SourceRow]:
    """Every row of the files; a line that cannot come in is reported and counted as not reproduced."""
    return read_release_rows(paths, parse_row, report, ROW_CODES)
