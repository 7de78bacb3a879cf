"""The registry of benchmark designs: every design, built-in or third-party, registers once through the
``jbcompile.designs`` entry-point group (``name = "package.module:DESIGN"``), and the pipeline asks the
registry. Nothing outside a design's own package names a design.

Designs are listed (and a dataset that mixes them orders its configs) by their ``position``, then name.
A plug-in that cannot be loaded, or that is not what it claims, stops every command with a coded
diagnostic naming it (DS001–DS003), never a traceback and never a silently missing design.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from ..diagnostics import Diagnostic, DiagnosticError
from .base import ConfigSpec, Kind, Row, TemplateRows, VocabPersons
from .spec import Design, unloadable

ENTRY_POINT_GROUP = "jbcompile.designs"
DEFAULT_DESIGN = "bbq"  # what a template without ``kind:`` is


@cache
def _registry() -> dict[str, Design]:
    found: dict[str, Design] = {}
    problems: list[Diagnostic] = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: (p.name, p.value)):
        where = f"{point.name} = {point.value!r}"
        try:
            design = point.load()
        except Exception as error:  # a broken plug-in must say which one, not end in a traceback
            problems.append(unloadable(f"the design plug-in {where} cannot be loaded", error))
            continue
        if not isinstance(design, Design):
            problems.append(
                Diagnostic(
                    "DS002",
                    f"the design plug-in {where} is a {type(design).__name__}, not a jbcompile Design",
                    hint="point the entry point at an instance of jbcompile.designs.spec.Design",
                )
            )
            continue
        if design.name != point.name or design.name in found:
            problems.append(
                Diagnostic(
                    "DS003",
                    f"the design plug-in {where} is named {design.name!r}"
                    + (" like another design" if design.name in found else ""),
                    hint="a design registers once, under its own name",
                )
            )
            continue
        found[design.name] = design
    if DEFAULT_DESIGN not in found and not problems:
        problems.append(
            Diagnostic(
                "DS001",
                f"no {DEFAULT_DESIGN!r} design is registered: the installed jbcompile metadata is stale",
                hint='reinstall the package (pip install -e . or pip install ".[...]")',
            )
        )
    if problems:
        raise DiagnosticError(problems)
    return dict(sorted(found.items(), key=lambda item: (item[1].position, item[0])))


def reset_registry() -> None:
    """Forget the designs read so far (after a distribution was installed into the running process)."""
    _registry.cache_clear()


def all_designs() -> list[Design]:
    return list(_registry().values())


def design_names() -> list[str]:
    return list(_registry())


def get_design(name: str) -> Design:
    """The design called ``name`` (a KeyError for an unknown name: callers say what to do)."""
    return _registry()[name]


def get_kind(name: str) -> Kind:
    """The compile part of the design ``name``."""
    return get_design(name).compiler()


def kind_names() -> list[str]:
    return design_names()


def all_kinds() -> list[Kind]:
    return [design.compiler() for design in all_designs()]


__all__ = [
    "DEFAULT_DESIGN",
    "ENTRY_POINT_GROUP",
    "ConfigSpec",
    "Design",
    "Kind",
    "Row",
    "TemplateRows",
    "VocabPersons",
    "all_designs",
    "all_kinds",
    "design_names",
    "get_design",
    "get_kind",
    "kind_names",
    "reset_registry",
]
