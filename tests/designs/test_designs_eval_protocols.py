"""`--protocol jubaku` and `--protocol sobaco` end to end on the tiny model (issue 14), and a protocol on
a dataset of another kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.protocols import resolve_options
from jbcompile.evaluate.requests import EvalRequest
from jbcompile.evaluate.run import run_eval

pytest.importorskip("transformers")


def _request(model: Path, build: Path, out: Path, config: str, protocol: str, **given) -> EvalRequest:
    return EvalRequest(
        model=str(model),
        dataset=str(build),
        config=config,
        out=out,
        options=resolve_options(protocol, **given),
        batch_size=8,
        bootstrap=20,
        max_new_tokens=3,
    )


def test_jubaku_protocol_report(kinds_model: Path, kinds_build: Path, tmp_path: Path) -> None:
    results = run_eval(
        _request(kinds_model, kinds_build, tmp_path / "j", "jubaku", "jubaku")
    ).results.to_json()
    assert results["protocol"]["name"] == "jubaku" and results["scoring"]["method"] == "generate"
    overall = results["metrics"]["overall"]
    assert {"fluctuation_rate", "fluctuation_rate_valid", "acc_all"} <= set(overall)
    report = (tmp_path / "j" / "report.md").read_text(encoding="utf-8")
    header = (
        "| Model | Accuracy (%) | Fluctuation Rate (%) | Fluctuation Rate, valid replies (%) "
        "| Non-A/B replies |"
    )
    assert report.index(header) < report.index("## Overall")
    if overall["fluctuation_rate"] != overall["fluctuation_rate_valid"]:
        assert "vs `fluctuation_rate_valid`" in report  # both variants reported when they differ


def test_sobaco_protocol_and_a_protocol_of_another_kind(
    kinds_model: Path, kinds_build: Path, tmp_path: Path
) -> None:
    results = run_eval(
        _request(kinds_model, kinds_build, tmp_path / "s", "sobaco", "sobaco", setting="debias-2")
    ).results.to_json()
    assert results["prompt"]["setting"] == "debias-2" and results["prompt"]["shots"] == 0
    report = (tmp_path / "s" / "report.md").read_text(encoding="utf-8")
    assert report.index("| Model | Bias | Culture | OoC |") < report.index("## Overall")
    with pytest.raises(DiagnosticError) as error:
        run_eval(_request(kinds_model, kinds_build, tmp_path / "x", "jubaku", "jbbq"))
    assert [d.code for d in error.value.diagnostics] == ["EV202"]
    assert not (tmp_path / "x").exists()
