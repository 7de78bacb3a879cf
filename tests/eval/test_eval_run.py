"""`jbcompile eval` end to end on the tiny model: outputs and their contract, resume, data parallel."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from tests.eval.contract import CONTRACT


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def eval_args(model: Path, build: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "--model", str(model), "--dataset", str(build), "--out", str(out), "--quiet",
            "--bootstrap", "200", "--batch-size", "4", *extra]  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def logprob_run(tiny_model: Path, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "logprob"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    return out


def test_results_follow_the_contract(logprob_run: Path, lite_rows: list[dict]) -> None:
    results = json.loads((logprob_run / "results.json").read_text(encoding="utf-8"))
    categories = sorted({row["category"] for row in lite_rows})
    assert sorted(results["metrics"]["by_category"]) == categories
    for scope in [results["metrics"]["overall"], *results["metrics"]["by_category"].values()]:
        for name in CONTRACT:
            assert name in scope
        for name in ("acc", "acc_ambig", "acc_disambig", "ooc_ratio"):
            assert scope[name] is None or 0.0 <= scope[name] <= 1.0
        assert len(scope["option_share"]) == 3
        assert sum(scope["option_share"]) == pytest.approx(1.0)
    for scope in [results["metrics_ci"]["overall"], *results["metrics_ci"]["by_category"].values()]:
        for name in CONTRACT:
            assert name in scope
        assert len(scope["option_share"]) == 3
    low, high = results["metrics_ci"]["overall"]["acc"]  # three templates: an interval
    assert low <= high
    # each fixture category has one template: the bootstrap cannot resample it, so no interval
    assert all(scope["acc"] is None for scope in results["metrics_ci"]["by_category"].values())
    overall = results["metrics"]["overall"]
    assert overall["n"] == len(lite_rows) - len(results["prompt"]["shot_ids"])
    assert overall["ooc_ratio"] == 0.0  # log-prob scoring always picks an option
    assert results["model"]["dtype"] == "float32"
    assert results["prompt"]["shots"] == 3 and results["scoring"]["method"] == "logprob"
    assert results["versions"]["transformers"]
    assert results["dataset"]["manifest"]["dataset"] == "eval-fixture"


def test_predictions_hold_what_the_issue_lists(logprob_run: Path) -> None:
    records = lines(logprob_run / "predictions.jsonl")
    results = json.loads((logprob_run / "results.json").read_text(encoding="utf-8"))
    assert len(records) == results["metrics"]["overall"]["n"]
    for record in records:
        assert record["prompt_hash"] and len(record["option_logprobs"]) == 3
        assert record["pred"] == max(range(3), key=record["option_logprobs"].__getitem__)
    acc = sum(r["pred"] == r["gold"] for r in records) / len(records)
    assert results["metrics"]["overall"]["acc"] == pytest.approx(acc)


def test_report_and_charts(logprob_run: Path) -> None:
    report = (logprob_run / "report.md").read_text(encoding="utf-8")
    assert "## By category" in report and "Gender_identity" in report
    assert "**Protocol:** none" in report  # a default run says it is not a paper's protocol
    for chart in ("accuracy.png", "diff_bias.png", "option_share.png"):
        data = (logprob_run / "charts" / chart).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 2000
        assert f"charts/{chart}" in report


def test_score_of_our_predictions_reproduces_the_metrics(logprob_run: Path, tmp_path: Path) -> None:
    code, output = run_cli(
        "score", str(logprob_run / "predictions.jsonl"), "--out", str(tmp_path), "--bootstrap", "200"
    )
    assert code == 0, output
    scored = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    original = json.loads((logprob_run / "results.json").read_text(encoding="utf-8"))
    assert scored["metrics"] == original["metrics"]
    assert scored["metrics_ci"] == original["metrics_ci"]


def test_resume_skips_finished_rows(
    tiny_model: Path, build_dir: Path, logprob_run: Path, tmp_path: Path, monkeypatch
) -> None:
    from jbcompile.evaluate import backends
    from jbcompile.evaluate import predictions as files

    out = tmp_path / "resumed"
    real_append = files.append_records
    calls = {"append": 0, "rows": 0}

    def crash_after_two(path, records):
        calls["append"] += 1
        if calls["append"] > 2:
            raise KeyboardInterrupt  # the user pressed Ctrl-C during the third batch
        real_append(path, records)

    monkeypatch.setattr(files, "append_records", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        from jbcompile.evaluate.requests import EvalRequest
        from jbcompile.evaluate.run import run_eval

        request = EvalRequest(
            model=str(tiny_model), dataset=str(build_dir), out=out, batch_size=4, bootstrap=200
        )
        run_eval(request)
    assert not (out / "results.json").exists()
    partial = lines(out / "predictions.jsonl")
    assert 0 < len(partial) <= 8
    with (out / "predictions.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"example_id": "cut-off-by-the-cra')  # a line the interruption cut short
    monkeypatch.setattr(files, "append_records", real_append)
    real_score = backends.TransformersBackend.score

    def counting(self, sequences, keys, label_ids):
        calls["rows"] += len(sequences)
        return real_score(self, sequences, keys, label_ids)

    monkeypatch.setattr(backends.TransformersBackend, "score", counting)
    code, output = run_cli(*eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    total = json.loads((logprob_run / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]["n"]
    assert calls["rows"] == total - len(partial)  # finished rows were not redone
    assert (out / "predictions.jsonl").read_text() == (logprob_run / "predictions.jsonl").read_text()
    resumed = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert resumed["metrics"] == json.loads((logprob_run / "results.json").read_text())["metrics"]


def test_a_folder_with_other_settings_is_not_resumed(
    tiny_model: Path, build_dir: Path, logprob_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy"
    shutil.copytree(logprob_run, out)
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--setting", "warning"))
    assert code == 2
    assert "EV007" in output
    code, output = run_cli(
        *eval_args(tiny_model, build_dir, out, "--setting", "warning", "--overwrite", "--limit", "4")
    )
    assert code == 0, output
    assert len(lines(out / "predictions.jsonl")) == 4


def test_generate_cot_with_chat(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "cot"
    code, output = run_cli(*eval_args(tiny_model, build_dir, out, "--setting", "cot", "--scoring", "generate",
                                      "--chat", "--limit", "6", "--max-new-tokens", "5"))  # fmt: skip
    assert code == 0, output
    records = lines(out / "predictions.jsonl")
    assert len(records) == 6
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # a random model never writes its answer in 【】: every row is out-of-choice, and the metrics say so
    assert all(r["pred"] is None and isinstance(r["raw_output"], str) for r in records)
    assert results["metrics"]["overall"]["ooc_ratio"] == 1.0
    # JBBQ's convention counts every OoC answer wrong; KoBBQ's has no valid answer to divide by
    assert results["metrics"]["overall"]["acc"] == 0.0
    assert results["metrics"]["overall"]["acc_valid"] is None
    assert all("evidence" in r for r in records)
    assert results["prompt"]["chat"] is True and results["scoring"]["max_new_tokens"] == 5
    assert results["scoring"]["stop_at_answer_line"] is False  # cot answers come at the end


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--setting", "cot"], "EV022"),
        (["--config", "nope"], "EV004"),
    ],
)
def test_input_errors_exit_2_without_output(
    tiny_model: Path, build_dir: Path, tmp_path: Path, args, code
) -> None:
    out = tmp_path / "never"
    exit_code, output = run_cli(*eval_args(tiny_model, build_dir, out, *args))
    assert exit_code == 2
    assert code in output
    assert "Traceback" not in output
    assert not out.exists()


def test_two_processes_write_what_one_process_writes(
    tiny_model: Path, build_dir: Path, logprob_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "two"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        "-m", "jbcompile", *eval_args(tiny_model, build_dir, out),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    shares = [int(n) for n in re.findall(r"process \d/2 evaluated (\d+) rows", done.stderr)]
    total = len(lines(logprob_run / "predictions.jsonl"))
    assert len(shares) == 2 and sum(shares) == total and min(shares) > 0  # the rows were split, not repeated
    two, one = lines(out / "predictions.jsonl"), lines(logprob_run / "predictions.jsonl")
    # same rows in the same order with the same answers; log-probs agree to float precision (processes
    # run with other thread counts, which may change the last digit of a sum)
    assert [(r["example_id"], r["pred"], r["prompt_hash"]) for r in two] == [
        (r["example_id"], r["pred"], r["prompt_hash"]) for r in one
    ]
    for a, b in zip(two, one, strict=True):
        assert a["option_logprobs"] == pytest.approx(b["option_logprobs"], abs=1e-4)
    assert (out / "results.json").read_text() == (logprob_run / "results.json").read_text()


@pytest.mark.parametrize("scoring", ["logprob", "generate"])
def test_bfloat16_weights_run_on_the_cpu_too(tiny_model: Path, build_dir: Path, tmp_path: Path, scoring: str):
    """The GPU default dtype, exercised where there is no GPU: bf16 logits are scored in float32."""
    out = tmp_path / scoring
    code, output = run_cli(
        *eval_args(tiny_model, build_dir, out, "--dtype", "bfloat16", "--scoring", scoring, "--limit", "24")
    )
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["model"]["dtype"] == "bfloat16"
    records = lines(out / "predictions.jsonl")
    assert len(records) == 24
    if scoring == "logprob":
        assert all(len(r["option_logprobs"]) == 3 and r["pred"] in (0, 1, 2) for r in records)
    else:
        assert all(isinstance(r["raw_output"], str) for r in records)
        assert results["scoring"]["stop_at_answer_line"] is True  # basic: the answer is the first line


@pytest.mark.parametrize(
    ("opening", "thinks"),
    [("<think>\n", True), ("<think>\n\n</think>\n\n", False), ("", False)],
    ids=["template-opens-thinking", "template-closes-it-again", "no-think-block"],
)
def test_a_chat_template_that_opens_a_think_block_makes_the_run_a_reasoning_models(
    tiny_model: Path, build_dir: Path, tmp_path: Path, opening: str, thinks: bool
) -> None:
    """A template that ends its generation prompt inside <think> (as DeepSeek-R1's does) makes every
    reply begin as thinking, with or without --thinking: no early stop on a line of its thinking, no
    stop string, and a reply cut off before </think> has no answer."""
    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    config_path = model / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    template = config.get("chat_template") or (model / "chat_template.jinja").read_text(encoding="utf-8")
    assert "<|assistant|>\n{% endif %}" in template
    template = template.replace("<|assistant|>\n{% endif %}", "<|assistant|>\n" + opening + "{% endif %}")
    if "chat_template" in config:
        config["chat_template"] = template
        config_path.write_text(json.dumps(config), encoding="utf-8")
    else:
        (model / "chat_template.jinja").write_text(template, encoding="utf-8")
    out = tmp_path / "run"
    code, output = run_cli(*eval_args(model, build_dir, out, "--scoring", "generate", "--chat",
                                      "--limit", "4", "--max-new-tokens", "6"))  # fmt: skip
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["thinking"] is thinks
    assert results["scoring"]["stop_strings"] == ([] if thinks else results["scoring"]["stop_strings"])
    if thinks:  # six tokens of a random model never close the block: cut off while thinking
        assert all(r["pred"] is None for r in lines(out / "predictions.jsonl"))
    else:
        assert results["scoring"]["stop_strings"]
