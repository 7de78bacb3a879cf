"""The registry of benchmark kinds. Adding a kind = one module + one line here."""

from __future__ import annotations

from functools import cache

from .base import ConfigSpec, FilledText, Kind, Row, SlotSpan, TemplateRows


@cache
def _registry() -> dict[str, Kind]:
    from .bbq import BbqKind
    from .jubaku import JubakuKind
    from .sobaco import SobacoKind

    kinds: list[Kind] = [BbqKind(), SobacoKind(), JubakuKind()]
    return {kind.name: kind for kind in kinds}


def kind_names() -> list[str]:
    return list(_registry())


def get_kind(name: str) -> Kind:
    return _registry()[name]


def all_kinds() -> list[Kind]:
    return list(_registry().values())


__all__ = [
    "ConfigSpec",
    "FilledText",
    "Kind",
    "Row",
    "SlotSpan",
    "TemplateRows",
    "all_kinds",
    "get_kind",
    "kind_names",
]
