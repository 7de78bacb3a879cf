"""Markdown tables and number formats shared by the reports (report.md, compare.md and a design's own
sections of a comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table's lines."""
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def fmt_number(value: Any, digits: int = 3) -> str:
    """A float with ``digits`` decimals, anything else as it is, None as —."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(value: Any) -> str:
    """A p-value: four decimals, or scientific notation below 0.0001; None as —."""
    return "—" if value is None else f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"
