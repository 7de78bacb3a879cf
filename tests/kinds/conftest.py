"""Fixtures of the sobaco and jubaku compile tests: a writable copy of a tiny benchmark of both kinds (its
build and a tiny model for the evaluator tests are in tests/designs/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

KINDS_SOURCES = Path(__file__).parent / "fixtures" / "kinds_sources"


@pytest.fixture
def kinds_sources(tmp_path: Path) -> Path:
    """sobaco: a pair without an expression slot, one with 2 and one with 3 alternatives, one dummy;
    jubaku: two cases."""
    target = tmp_path / "sources"
    shutil.copytree(KINDS_SOURCES, target)
    return target
