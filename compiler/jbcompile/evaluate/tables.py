"""Markdown tables and number formats shared by the reports (report.md, compare.md and a design's own
sections of a comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..text import shown_name

MARKDOWN_MARKS = frozenset("\\`*_[]<>|#!")  # what can start a heading, link, tag, code span or cell


def md_text(text: str) -> str:
    """A text read back from a file (a warning's message) as a markdown line shows it: on one line (a
    line break written out, as :func:`..text.shown_name` writes it) and with each markdown mark escaped,
    so that it cannot open a heading, a table row, a tag or a link of its own."""
    escaped = "".join(f"\\{char}" if char in MARKDOWN_MARKS else char for char in text)
    return shown_name(escaped)  # <U+000A> is no tag: a tag's name has letters, digits and hyphens only


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table's lines; each cell on one line and its ``|`` escaped (a model or folder name in a
    run's label cannot end a cell or a row)."""
    return [
        "| " + " | ".join(md_cell(cell) for cell in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows),
    ]


def md_cell(text: str) -> str:
    """A table cell's text: a line break written out (as :func:`..text.shown_name` writes it), ``|``
    escaped."""
    return shown_name(text).replace("|", "\\|")


ROUNDING_NOTE = (
    "Numbers are rounded half away from zero (a tie such as 0.1225 prints 0.123, and as a percent 12.25 "
    "prints 12.3; the papers do not state their rounding, this is the usual rule of printed tables); a "
    "number that rounds to zero has no minus sign (a signed column prints it +0.0)."
)
SIGNIFICANT = 12  # digits of a float that are the number's; the float error of arithmetic lies beyond


def decimal_text(value: float, digits: int, *, scale: int = 1, signed: bool = False) -> str:
    """``value × scale`` with ``digits`` decimals, as the papers print numbers: a tie rounds half away
    from zero, on the number to 12 significant digits (0.1225 → 0.123, 12.25 → 12.3, −12.25 → −12.3; the
    binary float would round 0.1225 down; an average of two ratios that is a tie, 0.6075 computed as
    0.6074999…, rounds as the tie it is), a number that rounds to zero has no minus sign (0.0, not
    −0.0), and ``signed`` gives a positive number, zero included, its plus sign (+0.0, as papers print)."""
    exact = Decimal(f"{float(value):.{SIGNIFICANT}g}") * scale
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    if rounded.is_zero():
        rounded = abs(rounded)
    text = f"{rounded:f}"
    return f"+{text}" if signed and not text.startswith("-") else text


def fmt_number(value: Any, digits: int = 3, *, signed: bool = False) -> str:
    """A number as every table prints it: a float with ``digits`` decimals (:func:`decimal_text`; with its
    sign, zero as +0.000, when ``signed``), a list (the shares of the options) one value after another, a
    whole number or a flag as it is, None (undefined) as —."""
    if value is None:
        return "—"
    if isinstance(value, list | tuple):
        return " / ".join(fmt_number(part, digits, signed=signed) for part in value)
    if isinstance(value, float):
        return decimal_text(value, digits, signed=signed)
    return str(value)


def fmt_p(value: Any) -> str:
    """A p-value: four decimals by the tables' one rule (:func:`decimal_text`), or scientific notation
    below 0.0001; one too small for a float (0.0) as ``< 1e-300``, never as a p of zero; None as —."""
    if value is None:
        return "—"
    if value == 0:
        return "< 1e-300"
    return decimal_text(value, 4) if value >= 1e-4 else f"{value:.1e}"
