"""Where the bundled benchmark and card templates are, installed or in a source checkout."""

from __future__ import annotations

from pathlib import Path

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
