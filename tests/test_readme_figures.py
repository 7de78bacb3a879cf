"""README.md's figures of the test suite stay true: the count it states is the suite's, within a tenth."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
STATED = re.compile(r"`python -m pytest`: ([\d,]+) tests")


def test_the_readme_states_the_number_of_tests(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    every_file = {path.resolve() for path in (REPO / "tests").rglob("test_*.py")}
    whole = {Path(item.path).resolve() for item in items} >= every_file
    options = request.config.option
    if not whole or getattr(options, "keyword", "") or getattr(options, "markexpr", "") or options.deselect:
        pytest.skip("the README counts the whole suite: run it whole (python -m pytest) to check")
    match = STATED.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert match, "README.md should say how many tests `python -m pytest` runs"
    stated = int(match.group(1).replace(",", ""))
    assert abs(stated - len(items)) <= len(items) / 10, (
        f"README.md says {stated} tests; the suite has {len(items)}: update the figure (and the time)"
    )
