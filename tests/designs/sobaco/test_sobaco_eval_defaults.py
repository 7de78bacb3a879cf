"""`eval` without --setting or --out on a sobaco build: the kind's own default setting, and a default
run folder that tells a --chat run from a plain one (issue: `eval --config sobaco` failed on `basic`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

pytest.importorskip("transformers")


def test_sobaco_runs_with_its_default_setting_and_a_chat_rerun_gets_its_own_folder(
    kinds_model: Path, kinds_build: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["eval", "--model", str(kinds_model), "--dataset", str(kinds_build), "--config", "sobaco",
            "--quiet", "--bootstrap", "20", "--limit", "4"]  # fmt: skip
    result = CliRunner().invoke(app, base)
    assert result.exit_code == 0, result.output
    plain = tmp_path / "runs" / f"{kinds_model.name}-sobaco-basic-1"
    results = json.loads((plain / "results.json").read_text(encoding="utf-8"))
    assert results["prompt"]["setting"] == "basic-1" and results["kind"] == "sobaco"
    result = CliRunner().invoke(app, [*base, "--chat"])
    assert result.exit_code == 0, result.output  # not refused as "a run with other settings"
    chat = tmp_path / "runs" / f"{kinds_model.name}-sobaco-basic-1-chat"
    assert json.loads((chat / "results.json").read_text(encoding="utf-8"))["prompt"]["chat"] is True
    assert json.loads((plain / "results.json").read_text(encoding="utf-8")) == results
