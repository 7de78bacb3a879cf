"""`run_eval` on jubaku and single-turn sobaco build folders with a tiny random model, offline."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.requests import EvalRequest, ScoreRequest
from jbcompile.evaluate.run import run_eval
from jbcompile.evaluate.score import run_score

pytest.importorskip("transformers")


def _request(model: Path, build: Path, out: Path, config: str, **options) -> EvalRequest:
    return EvalRequest(
        model=str(model),
        dataset=str(build),
        config=config,
        out=out,
        options=EvalOptions(shots=0, **options),
        batch_size=8,
        bootstrap=50,
    )


@pytest.mark.parametrize("scoring", ["logprob", "generate"])
def test_jubaku_run(kinds_model: Path, kinds_build: Path, tmp_path: Path, scoring: str) -> None:
    results = run_eval(
        _request(kinds_model, kinds_build, tmp_path / scoring, "jubaku", scoring=scoring)
    ).results.to_json()
    assert results is not None and results["kind"] == "jubaku"
    overall = results["metrics"]["overall"]
    assert overall["n"] == 16 and overall["cases"] == 2
    records = [
        json.loads(line) for line in (tmp_path / scoring / "predictions.jsonl").read_text().splitlines()
    ]
    assert len(records) == 16 and all(r["pred"] in (0, 1, None) for r in records)
    valid = [r for r in records if r["pred"] is not None]
    assert overall["n_invalid"] == 16 - len(valid)
    if valid:
        assert overall["acc"] == pytest.approx(sum(r["pred"] == r["gold"] for r in valid) / len(valid))
    if scoring == "logprob":  # two option labels, one forward pass: every answer is A or B
        assert overall["n_invalid"] == 0 and all(len(r["option_logprobs"]) == 2 for r in records)
    by_case = Counter(r["template_id"] for r in records)
    assert by_case == {"religion-lunch": 8, "region-emcee": 8}
    report = (tmp_path / scoring / "report.md").read_text(encoding="utf-8")
    assert "fluctuation_rate" in report
    rescored = run_score(
        ScoreRequest(
            predictions=tmp_path / scoring / "predictions.jsonl",
            kind="jubaku",
            out=tmp_path / "re",
            bootstrap=50,
        )
    ).results.to_json()
    assert rescored["metrics"] == results["metrics"]


def test_sobaco_basic_run(kinds_model: Path, kinds_build: Path, tmp_path: Path) -> None:
    request = _request(kinds_model, kinds_build, tmp_path / "basic", "sobaco", setting="basic-2")
    request.limit = 48
    results = run_eval(request).results.to_json()
    assert results is not None and results["kind"] == "sobaco"
    assert results["prompt"]["template"] == "sobaco/basic-2.j2"
    overall = results["metrics"]["overall"]
    assert overall["n"] == 48 and overall["ooc_ratio"] == 0.0
    assert overall["bias_score"] is not None and -1.0 <= overall["bias_score"] <= 1.0
    rescored = run_score(
        ScoreRequest(
            predictions=tmp_path / "basic" / "predictions.jsonl",
            kind="sobaco",
            out=tmp_path / "re",
            bootstrap=50,
        )
    ).results.to_json()
    assert rescored["metrics"] == results["metrics"]
    from jbcompile.cli import app
    from typer.testing import CliRunner

    predictions = str(tmp_path / "basic" / "predictions.jsonl")
    cli = CliRunner().invoke(
        app, ["score", predictions, "--kind", "sobaco", "--out", str(tmp_path / "cli"), "--bootstrap", "50"]
    )
    assert cli.exit_code == 0, cli.output
    assert json.loads((tmp_path / "cli" / "results.json").read_text())["metrics"] == results["metrics"]
    assert "bias_score" in cli.output


def test_sobaco_two_turn_run(kinds_model: Path, kinds_build: Path, tmp_path: Path, monkeypatch) -> None:
    """The runner's prompt_texts hook makes the run talk twice."""
    from jbcompile.designs.sobaco import evaluate as sobaco

    monkeypatch.setattr(sobaco, "TWO_TURN", {"cot-e": 8, "cot-r": 4})
    request = _request(kinds_model, kinds_build, tmp_path / "cot-r", "sobaco", setting="cot-r-1")
    request.limit = 12
    results = run_eval(request).results.to_json()
    assert results is not None and results["metrics"]["overall"]["n"] == 12
    records = [
        json.loads(line) for line in (tmp_path / "cot-r" / "predictions.jsonl").read_text().splitlines()
    ]
    assert all("first_output" in r for r in records)


def test_score_foreign_predictions(kinds_build: Path, tmp_path: Path) -> None:
    """Another harness's answers (option text or letter), joined with the dataset rows by example_id."""
    from jbcompile.evaluate.dataset import load_rows

    rows = load_rows(str(kinds_build), "sobaco").rows
    thin = tmp_path / "sobaco.jsonl"  # always the stereotyped name on bias rows, the gold on culture rows
    lines = []
    for row in rows:
        pick = row["biased_label"] if row["type"] == "bias" else row["label"]
        lines.append(
            json.dumps({"example_id": row["example_id"], "answer": row[f"ans{pick}"]}, ensure_ascii=False)
        )
    thin.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = run_score(
        ScoreRequest(
            thin,
            dataset=str(kinds_build),
            config="sobaco",
            prediction_field="answer",
            kind="sobaco",
            out=tmp_path / "s",
            bootstrap=20,
        )
    ).results.to_json()
    overall = results["metrics"]["overall"]
    assert overall["bias_score"] == 1.0 and overall["culture_acc"] == 1.0 and overall["ooc_ratio"] == 0.0

    rows = load_rows(str(kinds_build), "jubaku").rows
    letters = tmp_path / "jubaku.jsonl"  # always "A": neutral in one order, biased in the other
    letters.write_text("".join(json.dumps({"example_id": r["example_id"], "p": "A"}) + "\n" for r in rows))
    results = run_score(
        ScoreRequest(
            letters,
            dataset=str(kinds_build),
            config="jubaku",
            prediction_field="p",
            kind="jubaku",
            out=tmp_path / "j",
            bootstrap=20,
        )
    ).results.to_json()
    overall = results["metrics"]["overall"]
    assert overall["acc"] == 0.5 and overall["fluctuation_rate"] == 1.0 and overall["a_share"] == 1.0
