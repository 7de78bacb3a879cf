"""benchmarks/gpu_check.py's CPU path (issue 25 §4): on a machine without a GPU it says so and runs the
same checks on the tiny model — speed at each batch size, the out-of-memory halving (simulated), bf16
against fp32."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"


def test_the_gpu_check_runs_its_cpu_path(tiny_model: Path, build_dir: Path, tmp_path: Path, capsys) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the script's CPU path is not the one it runs")
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "gpu_check.json"
    argv = ["--dataset", str(build_dir), "--model", str(tiny_model), "--rows", "40", "--batch-sizes", "4,8"]
    report = script.main([*argv, "--generate-rows", "8", "--out", str(out)])
    assert "no GPU found" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8")) == report
    assert report["gpu"] is None and report["size"] == "tiny"
    assert 20 <= report["prompts"] <= 40  # the shots' rows are not evaluated
    assert [entry["batch_size"] for entry in report["speed"]] == [4, 8]
    assert all(
        entry["logprob_rows_per_s"] > 0 and entry["generate_rows_per_s"] > 0 for entry in report["speed"]
    )
    assert all(entry["same_answers_as_first_batch_size"] for entry in report["speed"])
    # the simulated out-of-memory error halved the batch down to what fits, and nothing changed
    assert report["oom"] == {
        "simulated": True,
        "asked_batch_size": report["prompts"],
        "batch_size_after": report["oom"]["batch_size_after"],
        "halved": True,
        "same_answers": True,
    }
    assert 1 <= report["oom"]["batch_size_after"] <= 4
    assert report["dtype_agreement"]["dtypes"] == ["float32", "bfloat16"]
    assert 0.5 <= report["dtype_agreement"]["same_argmax_share"] <= 1
