"""benchmarks/gpu_check.py's CPU path (issue 25 §4): on a machine without a GPU it says so and runs the
same checks on the tiny model — speed at each batch size, the out-of-memory halving (simulated), bf16
against fp32 — importing nothing that benchmarks/gpu_wheels.py would not carry to a GPU machine that has
only torch, transformers and accelerate."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Runs the script as `python benchmarks/gpu_check.py ...` does on a GPU machine that has only torch,
# transformers and accelerate (with what their installs require) and the wheels gpu_wheels.py carries:
# every other installed distribution is hidden from the import system first (libraries that only probe
# for an optional one, as transformers does, then find it missing).
AS_ON_A_BARE_GPU_MACHINE = """
import importlib.metadata, runpy, sys
from importlib.machinery import PathFinder
sys.path.insert(0, sys.argv[1])
import gpu_wheels as wheels
own = wheels.requirements("jbcompile") - wheels.provided()
present = wheels.closure(wheels.BASE, stop=own) | wheels.closure(wheels.CARRIED, stop=wheels.provided())
present.add("jbcompile")
owners = {}
for name, distributions in importlib.metadata.packages_distributions().items():
    owners.setdefault(name, set()).update(wheels.canonicalize_name(d) for d in distributions)
hidden = {name for name, distributions in owners.items() if not distributions & present}
hidden -= set(sys.modules)
class Hiding(PathFinder):
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        return None if fullname.partition(".")[0] in hidden else super().find_spec(fullname, path, target)
sys.meta_path[sys.meta_path.index(PathFinder)] = Hiding
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gpu_check_runs_its_cpu_path(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the script's CPU path is not the one it runs")
    out = tmp_path / "gpu_check.json"
    # it builds the bundled sources and the tiny model itself, as it does there
    argv = ["--rows", "40", "--batch-sizes", "4,8", "--generate-rows", "8"]
    done = subprocess.run(
        [sys.executable, "-c", AS_ON_A_BARE_GPU_MACHINE, str(BENCHMARKS), str(BENCHMARKS / "gpu_check.py")]
        + [*argv, "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no GPU found" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
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


def test_the_wheels_carried_are_what_the_three_may_lack() -> None:
    wheels = _script("gpu_wheels")
    carried = wheels.wheels_to_carry()
    # pydantic comes with what it needs that torch, transformers and accelerate do not require directly
    assert {"pyarrow", "pydantic", "pydantic-core", "annotated-types"} <= set(carried)
    assert not set(carried) & wheels.provided()
    assert {"torch", "transformers", "accelerate", "numpy", "typing-extensions"} <= wheels.provided()
    assert all(version for version in carried.values())


def test_the_wheels_go_only_into_a_new_or_empty_folder(tmp_path: Path, capsys) -> None:
    kept = tmp_path / "wheels" / "mine.txt"
    kept.parent.mkdir()
    kept.write_text("mine", encoding="utf-8")
    assert _script("gpu_wheels").main(["--dest", str(kept.parent)]) == 2
    assert "not a new or empty folder" in capsys.readouterr().err
    assert [p.name for p in kept.parent.iterdir()] == ["mine.txt"] and kept.read_text(
        encoding="utf-8"
    ) == "mine"
