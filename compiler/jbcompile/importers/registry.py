"""Every registered design's importers, by name: what ``jbcompile import <name>`` is built from."""

from __future__ import annotations

from .. import designs
from ..diagnostics import Diagnostic, DiagnosticError
from .interface import Importer


def all_importers() -> list[Importer]:
    """Every registered design's importers, in the designs' order. A design whose ``importers()`` gives
    something else than an Importer, or a name another importer has, stops with DS004."""
    found: dict[str, Importer] = {}
    problems: list[Diagnostic] = []
    for design in designs.all_designs():
        for importer in design.importers():
            if not isinstance(importer, Importer):
                problem = f"gives a {type(importer).__name__}, not a jbcompile Importer"
            elif importer.name in found:
                problem = f"names an importer {importer.name!r}, as another design does"
            else:
                found[importer.name] = importer
                continue
            problems.append(
                Diagnostic(
                    "DS004",
                    f"the design {design.name!r} {problem}",
                    hint="a design's importers() returns jbcompile.importers.Importer instances, each with "
                    "a name of its own",
                )
            )
    if problems:
        raise DiagnosticError(problems)
    return list(found.values())
