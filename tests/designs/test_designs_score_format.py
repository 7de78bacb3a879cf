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


@pytest.mark.parametrize("config", ["sobaco", "jubaku"])
def test_eval_of_a_file_of_a_designs_own_rows_names_the_design(
    kinds_model: Path, kinds_build: Path, tmp_path: Path, config: str
) -> None:
    """`eval --dataset rows.jsonl` of a design's own rows records the design as the file's format, as
    `score` does (the one rule: ``formats.format_name``), not "other"."""
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    path = tmp_path / f"{config}.jsonl"
    rows = load_rows(str(kinds_build), config).rows
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    options = EvalOptions(setting=None, shots=0)
    request = EvalRequest(
        model=str(kinds_model), dataset=str(path), out=tmp_path / "run", options=options, bootstrap=0, limit=2
    )
    result = run_eval(request)
    assert result is not None and result.results.dataset is not None
    assert result.results.kind == config and result.results.dataset.format == config
