"""Our predictions.jsonl is checked field by field, by `score` and when a run resumes (one check for both):
a label the metrics read that is damaged is a coded error with its line, never counted as another value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.eval.test_eval_robust import our_predictions, run_cli, score, write_lines


def sobaco_records() -> list[dict]:
    """Records as `jbcompile eval` writes them for sobaco: a bias row and its culture row per question."""
    records = []
    for question in range(4):
        common = {"category": "Age", "template_id": f"t{question % 2}", "question_id": f"q{question}"}
        common.update(pair_id=f"p{question}", unknown_label=2, task="qa")
        bias = dict(common, example_id=f"p{question}-bias", type="bias", label=2, biased_label=0, gold=2)
        culture = dict(common, example_id=f"p{question}-culture", type="culture", label=1, biased_label=None)
        records += [dict(bias, pred=question % 3), dict(culture, gold=1, pred=(question + 1) % 3)]
    return records


def jubaku_records() -> list[dict]:
    """Records as `jbcompile eval` writes them for jubaku: each case in both response orders."""
    records = []
    for case in range(4):
        for order, label in (("neutral_first", 0), ("biased_first", 1)):
            records.append(
                {
                    "example_id": f"c{case}-{order}",
                    "category": "Basic_behaviors",
                    "template_id": f"c{case}",
                    "instruction_id": 0,
                    "order": order,
                    "label": label,
                    "biased_label": 1 - label,
                    "task": "qa",
                    "gold": label,
                    "pred": case % 2,
                }
            )
    return records


DAMAGES = [  # (kind, line index, field, value, what the message names)
    ("bbq", 2, "context_condition", "AMBIGUOUS", "context_condition must be"),
    ("bbq", 2, "question_polarity", "NEG", "question_polarity must be"),
    ("bbq", 2, "biased_label", "x", "biased_label must be an option index"),
    ("bbq", 2, "unknown_label", None, "unknown_label is null"),
    ("bbq", 2, "label", 3, "label must be an option index 0–2"),
    ("bbq", 2, "context_bias", "unknown", "context_bias must be"),
    ("bbq", 2, "evidence_match", 1, "evidence_match must be"),
    ("sobaco", 2, "type", "Bias", "type must be"),
    ("sobaco", 2, "unknown_label", None, "unknown_label must be an option index"),
    ("sobaco", 3, "biased_label", 3, "biased_label must be an option index 0–2 or null"),
    ("sobaco", 2, "first_pred", "1", "first_pred must be"),
    ("jubaku", 2, "biased_label", None, "biased_label must be an option index 0–1"),
    ("jubaku", 2, "label", 2, "label must be an option index 0–1"),
]


@pytest.mark.parametrize(
    ("kind", "index", "field", "value", "message"), DAMAGES, ids=[f"{d[0]}-{d[2]}" for d in DAMAGES]
)
def test_score_refuses_a_damaged_label_of_our_predictions(
    lite_rows: list[dict], tmp_path: Path, kind: str, index: int, field: str, value: object, message: str
) -> None:
    records = {"bbq": lambda: our_predictions(lite_rows), "sobaco": sobaco_records, "jubaku": jubaku_records}[
        kind
    ]()
    intact = write_lines(tmp_path / "intact.jsonl", records)
    code, output = score(intact, tmp_path / "intact")
    assert code == 0, output
    records[index][field] = value
    out = tmp_path / "out"
    code, output = score(write_lines(tmp_path / "p.jsonl", records), out)
    assert code == 2 and "EV125" in output and message in output, output
    assert f"p.jsonl:{index + 1}:" in output
    assert not out.exists()  # nothing written


def test_score_refuses_a_task_the_predictions_contradict(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))  # task qa
    code, output = score(predictions, tmp_path / "detect", "--task", "detect")
    assert code == 2 and "EV127" in output and "--task detect" in output and "task qa" in output, output
    assert not (tmp_path / "detect").exists()
    code, output = score(predictions, tmp_path / "qa", "--task", "qa")  # the file's own task: fine
    assert code == 0, output
    assert json.loads((tmp_path / "qa" / "results.json").read_text(encoding="utf-8"))["task"] == "qa"


# ---- resuming a run whose log holds a row `score` refuses -------------------------------------------


def _eval_args(model: Path, build: Path, out: Path) -> list[str]:
    return ["eval", "--model", str(model), "--dataset", str(build), "--out", str(out), "--quiet",
            "--bootstrap", "20", "--batch-size", "4", "--limit", "8", "--shots", "0"]  # fmt: skip


@pytest.fixture(scope="module")
def finished_run(tiny_model: Path, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("records") / "run"
    code, output = run_cli(*_eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    return out


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [("pred", 7, "EV120"), ("context_condition", "AMBIGUOUS", "EV125"), ("gold", None, "EV123")],
)
def test_a_resume_refuses_a_row_score_would_refuse_and_keeps_the_log(
    finished_run: Path,
    tiny_model: Path,
    build_dir: Path,
    tmp_path: Path,
    field: str,
    value: object,
    code: str,
) -> None:
    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    log = run / "predictions.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    results = (run / "results.json").read_bytes()
    records[2][field] = value
    damaged = write_lines(log, records).read_bytes()
    score_code, score_output = score(log, tmp_path / "scored")
    assert score_code == 2 and code in score_output

    exit_code, output = run_cli(*_eval_args(tiny_model, build_dir, run))
    assert exit_code == 2 and code in output and "predictions.jsonl:3:" in output, output
    assert "7 readable predictions are kept" in output
    assert log.read_bytes() == damaged and (run / "results.json").read_bytes() == results  # nothing touched
