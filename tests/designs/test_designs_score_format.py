"""`score` of a design's own rows with a prediction column names the design as the file's format (issue
25 §1.5: not "bbq" for SOBACO and JUBAKU-v2 rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.evaluate.dataset import load_rows
from jbcompile.evaluate.requests import ScoreRequest
from jbcompile.evaluate.score import run_score


@pytest.mark.parametrize("config", ["sobaco", "jubaku"])
def test_a_designs_own_rows_are_recorded_in_its_name(kinds_build: Path, tmp_path: Path, config: str) -> None:
    rows = load_rows(str(kinds_build), config).rows[:24]
    path = tmp_path / f"{config}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({**row, "prediction": 0}, ensure_ascii=False) + "\n")
    result = run_score(
        ScoreRequest(predictions=path, prediction_field="prediction", out=tmp_path / "s", bootstrap=0)
    )
    assert result.results.kind == config
    assert result.results.source is not None and result.results.source.format == config
    assert f"({config} format)" in (tmp_path / "s" / "report.md").read_text(encoding="utf-8")
