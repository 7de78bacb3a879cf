"""The registered designs' evaluator parts: by name, all of them, or the one a dataset's columns match.

Above :mod:`.kind` (whose :class:`~.kind.EvalKind` a design's spec names) and below everything that asks
which design evaluates a dataset, so that the interface never imports the registry.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..designs import all_designs, design_names, get_design
from ..diagnostics import Diagnostic, DiagnosticError
from .kind import EvalKind


def all_eval_kinds() -> list[EvalKind]:
    """The evaluator part of every registered design, in the registry's order."""
    return [design.evaluator() for design in all_designs()]


def get_eval_kind(name: str) -> EvalKind:
    if name not in design_names():
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV001",
                    f"the evaluator does not know the kind {name!r}",
                    hint=f"use {', '.join(sorted(design_names()))}, or install the package of that design",
                )
            ]
        )
    return get_design(name).evaluator()


def detect_kind(columns: Sequence[str], where: str) -> EvalKind:
    """The kind whose row schema the dataset's columns match."""
    kinds = all_eval_kinds()
    for kind in kinds:
        if kind.matches(columns):
            return kind
    raise DiagnosticError(
        [
            Diagnostic(
                "EV002",
                "the dataset's columns match no kind the evaluator knows "
                f"({', '.join(sorted(k.name for k in kinds))})",
                path=where,
                hint="evaluate a folder written by `jbcompile build`, or its Hub id",
            )
        ]
    )
