"""Where the bundled benchmark and card templates are, installed or in a source checkout."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent  # compiler/jbcompile -> repository root


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[-1]


def installed_bundle() -> Path | None:
    """The copy of the benchmark installed inside the package (a wheel install), if there is one."""
    bundle = _PACKAGE / "bundled"
    return bundle if bundle.exists() else None


def bundled_sources() -> Path:
    return _first_existing(_PACKAGE / "bundled" / "sources", _CHECKOUT / "sources")


def bundled_cards() -> Path:
    return _first_existing(_PACKAGE / "bundled" / "cards", _CHECKOUT / "cards")


def home_as_tilde(value: Any) -> Any:
    """``value`` (JSON data) with every path in the user's home folder written ``~/…``.

    Results are shared; the name of the home folder (often the user's own) is not part of them. Other
    paths stay as they were given.
    """
    if isinstance(value, dict):
        return {key: home_as_tilde(item) for key, item in value.items()}
    if isinstance(value, list):
        return [home_as_tilde(item) for item in value]
    if isinstance(value, str):
        home = os.path.expanduser("~").rstrip("/\\")
        if len(home) > 1 and (value == home or value.startswith((home + "/", home + os.sep))):
            return "~" + value[len(home) :]
    return value
