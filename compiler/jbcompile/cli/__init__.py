"""Command-line interface: a thin layer over the library. Every module here registers its commands."""

from __future__ import annotations

import importlib
import pkgutil

from .app import app

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "app" and not _module.startswith("_"):
        importlib.import_module(f"{__name__}.{_module}")


def main() -> None:
    app()
