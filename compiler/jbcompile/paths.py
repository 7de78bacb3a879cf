"""Where the bundled benchmark and card templates are, installed or in a source checkout."""

from __future__ import annotations

import os
import re
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


def docs_root() -> Path:
    """The folder holding README.md and docs/ (the repository, or their copy in an installed wheel)."""
    bundled = _PACKAGE / "bundled"
    return bundled if (bundled / "docs").is_dir() else _CHECKOUT


def shown_path(path: Path) -> str:
    """A path of the repository as written from its root (``compiler/jbcompile/…``); others as they are."""
    resolved = path.resolve()
    return resolved.relative_to(_CHECKOUT).as_posix() if resolved.is_relative_to(_CHECKOUT) else str(path)


def home_as_tilde(value: Any) -> Any:
    """``value`` (JSON data) with every path in the user's home folder written ``~/…``.

    Results are shared; the name of the home folder (often the user's own) is not part of them. Other
    paths stay as they were given. A path is found where it starts a string or follows a space or a
    bracket (``model [/home/me/runs/a]``), never inside another path.
    """
    home = os.path.expanduser("~").rstrip("/\\")
    if len(home) <= 1:  # no home folder, or the root
        return value
    pattern = re.compile(r"(?<![\w.~/\\-])" + re.escape(home) + r"(?![\w.-])")

    def scrub(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: scrub(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [scrub(inner) for inner in item]
        if isinstance(item, str):
            return pattern.sub("~", item)
        return item

    return scrub(value)
