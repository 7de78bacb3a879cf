"""`jbcompile export`: the real lm-evaluation-harness and inspect run the exported tasks offline, and their
numbers equal `jbcompile score` on the answers read back from each harness's own sample logs."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jbcompile.cli import app
from jbcompile.designs.bbq.harness import EXPORT
from typer.testing import CliRunner

BBQ_METRICS = EXPORT.metrics
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def scored(path: Path, out: Path) -> dict[str, Any]:
    code, output = run_cli("score", str(path), "--out", str(out), "--bootstrap", "0")
    assert code == 0, output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]


def same(harness: float | None, ours: float | None) -> bool:
    """Equal to the last digits; an undefined metric is NaN in a harness and null in results.json."""
    if harness is None or (isinstance(harness, float) and math.isnan(harness)):
        return ours is None
    return ours is not None and math.isclose(harness, ours, rel_tol=1e-9, abs_tol=1e-12)


def assert_same_numbers(harness: dict[str, float | None], ours: dict[str, Any]) -> None:
    differ = {
        name: (harness[name], ours.get(name))
        for name in BBQ_METRICS
        if not same(harness[name], ours.get(name))
    }
    assert not differ, f"harness vs jbcompile score: {differ}"


def test_lm_eval_runs_the_exported_tasks_with_scores_equal_to_jbcompile(
    build_dir: Path, tiny_model: Path, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks"
    code, output = run_cli("export", "lm-eval", str(build_dir), "--out", str(tasks), "--local")
    assert code == 0, output
    assert (tasks / "bbq" / "utils.py").is_file() and (tasks / "_eval_fixture.yaml").is_file()
    names = ["eval_fixture_lite_basic", "eval_fixture_lite_basic_gen"]
    command = [
        sys.executable,
        "-m",
        "lm_eval",
        "--model",
        "hf",
        "--model_args",
        f"pretrained={tiny_model},dtype=float32",
        "--device",
        "cpu",
        "--batch_size",
        "8",
        "--include_path",
        str(tasks),
        "--tasks",
        ",".join(names),
        "--gen_kwargs",
        "max_gen_toks=4",
        "--log_samples",
        "--output_path",
        str(tmp_path / "results"),
    ]
    # the exported folder runs without jbcompile: nothing of it is importable in the harness's process
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | OFFLINE
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = (tmp_path / "results").rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    for name in names:
        (samples,) = (tmp_path / "results").rglob(f"samples_{name}_2*.jsonl")
        harness_filter = "option" if name.endswith("_gen") else "none"
        harness = {metric: results[name][f"{metric},{harness_filter}"] for metric in BBQ_METRICS}
        ours = scored(samples, tmp_path / f"score-{name}")
        assert ours["n"] == 36
        assert_same_numbers(harness, ours)
        if name == "eval_fixture_lite_basic":  # the log-likelihood answers vary, so the check can fail
            picked = [max(range(3), key=lambda k: float(s["filtered_resps"][k][0])) for s in _lines(samples)]
            assert len(set(picked)) > 1, picked


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_inspect_runs_the_exported_task_with_scores_equal_to_jbcompile(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.model._providers.mockllm import MockLLM

    async def rough_token_count(self: Any, text: str) -> int:
        return max(1, len(text) // 4)

    # mockllm counts tokens with tiktoken, whose encoding is downloaded: count offline instead
    monkeypatch.setattr(MockLLM, "count_text_tokens", rough_token_count)
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "inspect"
    code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local")
    assert code == 0, output
    # answers that differ row to row, one of them no letter at all (an out-of-choice answer)
    replies = itertools.islice(itertools.cycle(["A", "B", "C", "A", "C", "none of them"]), 36)
    outputs = [ModelOutput.from_content("mockllm/model", f"ANSWER: {reply}") for reply in replies]
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(
        f"{out / 'eval_fixture_bbq.py'}@eval_fixture_lite",
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        log_format="eval",
    )
    assert log.status == "success", log.error
    assert log.results is not None
    harness = {name: metric.value for score in log.results.scores for name, metric in score.metrics.items()}
    (eval_log,) = (tmp_path / "logs").glob("*.eval")
    ours = scored(eval_log, tmp_path / "score-eval")
    assert ours["n"] == 36 and 0 < ours["ooc_ratio"] < 1
    assert_same_numbers(harness, ours)
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    assert_same_numbers(harness, scored(json_log, tmp_path / "score-json"))


def test_export_needs_a_hub_repository_or_local_and_keeps_other_folders(
    build_dir: Path, tmp_path: Path
) -> None:
    code, output = run_cli("export", "lm-eval", str(build_dir), "--out", str(tmp_path / "a"))
    assert code == 2 and "EX001" in output and not (tmp_path / "a").exists()
    code, output = run_cli(
        "export", "lm-eval", str(build_dir), "--out", str(tmp_path / "a"), "--repo", "my-lab/fixture"
    )
    assert code == 0, output
    task = (tmp_path / "a" / "bbq" / "eval_fixture_lite_basic.yaml").read_text(encoding="utf-8")
    assert "dataset_path: my-lab/fixture" in task and "revision: v0.0.1" in task
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine", encoding="utf-8")
    for out in (kept, build_dir / "tasks"):
        code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local")
        assert code == 2 and "EX003" in output, output
    assert (kept / "notes.txt").read_text(encoding="utf-8") == "mine" and not (build_dir / "tasks").exists()
