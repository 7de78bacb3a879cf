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
from jbcompile.designs.bbq.harness import EXPORT as BBQ_EXPORT
from jbcompile.designs.jubaku.harness import EXPORT as JUBAKU_EXPORT
from typer.testing import CliRunner

KINDS_SOURCES = Path(__file__).parents[1] / "designs" / "fixtures" / "kinds_sources"  # sobaco and jubaku
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


@pytest.fixture(scope="module")
def kinds_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build of 16 jubaku rows (and sobaco configs, which no harness export covers)."""
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    out = tmp_path_factory.mktemp("kinds-build") / "build"
    write_build(compile_project(load_project(KINDS_SOURCES), checks=False), out)
    return out


def assert_same_numbers(
    harness: dict[str, float | None], ours: dict[str, Any], names: tuple[str, ...]
) -> None:
    assert set(names) <= set(harness), sorted(harness)
    differ = {
        name: (harness[name], ours.get(name)) for name in names if not same(harness[name], ours.get(name))
    }
    assert not differ, f"harness vs jbcompile score: {differ}"


def test_lm_eval_runs_the_exported_tasks_with_scores_equal_to_jbcompile(
    build_dir: Path, kinds_build: Path, tiny_model: Path, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks"  # lm-eval reads the folders under --include_path: one export per build
    for build, folder in ((build_dir, "bbq-build"), (kinds_build, "kinds-build")):
        code, output = run_cli("export", "lm-eval", str(build), "--out", str(tasks / folder), "--local")
        assert code == 0, output
    assert (tasks / "bbq-build" / "bbq" / "utils.py").is_file()
    assert (tasks / "bbq-build" / "_eval_fixture.yaml").is_file()
    expected = {  # task → (rows, the design's metrics)
        "eval_fixture_lite_basic": (36, BBQ_EXPORT.metrics),
        "eval_fixture_lite_basic_gen": (36, BBQ_EXPORT.metrics),
        "kinds_bench_jubaku_basic": (16, JUBAKU_EXPORT.metrics),
    }
    command = [
        *(sys.executable, "-m", "lm_eval", "--model", "hf", "--device", "cpu", "--batch_size", "8"),
        *("--model_args", f"pretrained={tiny_model},dtype=float32", "--include_path", str(tasks)),
        *("--tasks", ",".join(expected), "--gen_kwargs", "max_gen_toks=4"),
        *("--log_samples", "--output_path", str(tmp_path / "results")),
    ]
    # the _gen tasks read replies by jbcompile's reader: the jbcompile under test, where the harness runs
    import jbcompile

    env = os.environ | {"PYTHONPATH": str(Path(jbcompile.__file__).parents[1])} | OFFLINE
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (results_file,) = (tmp_path / "results").rglob("results_*.json")
    results = json.loads(results_file.read_text(encoding="utf-8"))["results"]
    for name, (rows, metrics) in expected.items():
        (samples,) = (tmp_path / "results").rglob(f"samples_{name}_2*.jsonl")
        harness_filter = "jbcompile" if name.endswith("_gen") else "none"
        harness = {metric: results[name][f"{metric},{harness_filter}"] for metric in metrics}
        ours = scored(samples, tmp_path / f"score-{name}")
        assert ours["n"] == rows
        assert_same_numbers(harness, ours, metrics)
        if harness_filter == "none":  # the log-likelihood answers vary, so the check can fail
            picked = [
                max(range(len(s["filtered_resps"])), key=lambda k: s["filtered_resps"][k][0])
                for s in _lines(samples)
            ]
            assert len(set(picked)) > 1, picked


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("which", "module", "task", "rows", "metrics"),
    [
        ("bbq", "eval_fixture_bbq.py", "eval_fixture_lite", 36, BBQ_EXPORT.metrics),
        ("kinds", "kinds_bench_jubaku.py", "kinds_bench_jubaku", 16, JUBAKU_EXPORT.metrics),
    ],
)
def test_inspect_runs_the_exported_task_with_scores_equal_to_jbcompile(
    which: str,
    module: str,
    task: str,
    rows: int,
    metrics: tuple[str, ...],
    build_dir: Path,
    kinds_build: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
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
    build = build_dir if which == "bbq" else kinds_build
    code, output = run_cli("export", "inspect", str(build), "--out", str(out), "--local")
    assert code == 0, output
    # answers that differ row to row, one of them no letter at all (an out-of-choice answer)
    letters = ["A", "B", "C", "A", "C", "none of them"] if which == "bbq" else ["A", "B", "B", "none"]
    replies = itertools.islice(itertools.cycle(letters), rows)
    outputs = [ModelOutput.from_content("mockllm/model", f"ANSWER: {reply}") for reply in replies]
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(
        f"{out / module}@{task}",
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
    assert ours["n"] == rows and 0 < ours["n_valid"] < rows
    assert_same_numbers(harness, ours, metrics)
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    assert_same_numbers(harness, scored(json_log, tmp_path / "score-json"), metrics)


@pytest.mark.parametrize("harness", ["lm-eval", "inspect"])
@pytest.mark.parametrize(
    "revision", ["v1\nfoo: bar", 'v1"""; import os #', "v1 x", "a..b", "refs/", "-v1", ""]
)
def test_a_revision_that_is_no_git_name_is_refused(
    build_dir: Path, tmp_path: Path, harness: str, revision: str
) -> None:
    """`--revision $'v1\nfoo: bar'` exited 0 with a line of its own in the export's README."""
    out = tmp_path / "a"
    args = ["export", harness, str(build_dir), "--out", str(out), "--repo", "my-lab/fixture"]
    code, output = run_cli(*args, "--revision", revision)
    assert code == 2 and "EX006" in output and not out.exists(), output


def test_a_revision_by_git_names_is_exported(build_dir: Path, tmp_path: Path) -> None:
    args = ["export", "lm-eval", str(build_dir), "--repo", "my-lab/fixture"]
    for n, revision in enumerate(["v1.0.0", "main", "refs/pr/1", "0123abcd" * 5, "release_2024-01"]):
        code, output = run_cli(*args, "--out", str(tmp_path / str(n)), "--revision", revision)
        assert code == 0 and revision in (tmp_path / str(n) / "README.md").read_text(encoding="utf-8"), output


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


def test_an_export_of_another_dataset_or_harness_is_replaced_only_when_asked(
    build_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tasks"
    for _ in range(2):  # the same dataset for the same harness: rewritten in place
        code, output = run_cli("export", "lm-eval", str(build_dir), "--out", str(out), "--local")
        assert code == 0, output
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local")
    said = " ".join(output.split())  # the console wraps long lines
    assert code == 2 and "EX005" in said and "holds an lm-eval export" in said, output
    assert "not an inspect export" in said, output
    marker = out / "jbcompile-export.json"
    earlier = json.loads(marker.read_text(encoding="utf-8"))
    marker.write_text(json.dumps({**earlier, "dataset": "another-bench"}), encoding="utf-8")
    code, output = run_cli("export", "lm-eval", str(build_dir), "--out", str(out), "--local")
    assert code == 2 and "EX005" in output and "another-bench" in output, output
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local", "--overwrite")
    assert code == 0, output
    assert json.loads(marker.read_text(encoding="utf-8"))["harness"] == "inspect"


@pytest.mark.parametrize("harness", ["lm-eval", "inspect"])
@pytest.mark.parametrize("form", [("--local",), ("--repo", "my-lab/fixture")])
def test_export_refuses_a_build_altered_after_it_was_written(
    build_dir: Path, tmp_path: Path, harness: str, form: tuple[str, ...]
) -> None:
    """Tasks over rows the manifest no longer vouches for would score another benchmark: refused as
    eval refuses it, nothing written."""
    import shutil

    import pyarrow.parquet as pq

    build = tmp_path / "build"
    shutil.copytree(build_dir, build)
    data = build / "data" / "lite" / "test-00000-of-00001.parquet"
    pq.write_table(pq.read_table(data).slice(1), data)
    out = tmp_path / "tasks"
    code, output = run_cli("export", harness, str(build), "--out", str(out), *form)
    assert code == 2, output
    assert "P005" in output and "data/lite/test-00000-of-00001.parquet" in output and "rebuild" in output
    assert not out.exists()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda m: m.update(dataset='x"""\nimport os; os.system("touch PWNED")\n"""'), "P003"),
        (lambda m: m.update(version="1.0.0\nimport os"), "P003"),
        (lambda m: m.update(dataset="eval\u202efixture"), "P003"),
        (lambda m: m.pop("dataset"), "P003"),
        (lambda m: m.update(configs=[1]), "P003"),
        (lambda m: m["configs"]["lite"].update(rows="many"), "P003"),
        (lambda m: m["configs"]["lite"].update(kind="nope"), "EX004"),
    ],
)
def test_export_refuses_a_manifest_it_cannot_write_tasks_from(
    build_dir: Path, tmp_path: Path, change, code: str
) -> None:
    """The manifest is not covered by its own digests: what export writes from it into task files and
    Python modules must be what a build could hold, or the export is refused (never a traceback)."""
    import shutil

    build = tmp_path / "build"
    shutil.copytree(build_dir, build)
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    change(manifest)
    (build / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for harness in ("lm-eval", "inspect"):
        out = tmp_path / harness
        result = CliRunner().invoke(app, ["export", harness, str(build), "--out", str(out), "--local"])
        assert result.exit_code == 2 and code in result.output, result.output
        assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
        assert not out.exists()


@pytest.mark.parametrize("which", ["bbq", "kinds"])
def test_the_exported_metric_code_is_jbcompiles_on_any_answers(
    which: str, build_dir: Path, kinds_build: Path, tmp_path: Path
) -> None:
    """The copied functions in utils.py give `jbcompile score`'s numbers on random answers, out-of-choice
    ones included (no harness needed: this is where a change that breaks the copy shows first)."""
    import importlib.util
    import random

    from jbcompile.evaluate.bootstrap import point_metrics
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.registered import get_eval_kind

    build, kind_name, config = (
        (build_dir, "bbq", "full") if which == "bbq" else (kinds_build, "jubaku", "jubaku")
    )
    code, output = run_cli("export", "lm-eval", str(build), "--out", str(tmp_path / "tasks"), "--local")
    assert code == 0, output
    spec = importlib.util.spec_from_file_location(
        "exported_utils", tmp_path / "tasks" / kind_name / "utils.py"
    )
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    kind = get_eval_kind(kind_name)
    rows = load_rows(str(build), config).rows
    generator = random.Random(7)
    n_options = len(kind.option_labels)
    for _ in range(5):
        answers = [generator.choice([*range(n_options), None]) for _ in rows]
        exported = [utils.record_of(row, pred) for row, pred in zip(rows, answers, strict=True)]
        ours = [kind.base_record(row, "qa") | {"pred": pred} for row, pred in zip(rows, answers, strict=True)]
        expected = point_metrics(kind.prepare_records(ours), kind.count, kind.count_names, kind.formulas)
        got = {name: utils.metric_value(exported, name) for name in utils.METRICS}
        assert_same_numbers(got, expected, utils.METRICS)


@pytest.mark.parametrize("which", ["bbq", "kinds"])
def test_the_exported_generation_decodes_as_jbcompile_eval_would(
    which: str, build_dir: Path, kinds_build: Path, tmp_path: Path
) -> None:
    """A `_gen` task stops where `jbcompile eval --scoring generate` of the same setting stops (its
    new-token limit and stop strings), not at a limit or a stop string (a blank line) of the export's own."""
    import yaml
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.registered import get_eval_kind

    build = build_dir if which == "bbq" else kinds_build
    code, output = run_cli("export", "lm-eval", str(build), "--out", str(tmp_path / "tasks"), "--local")
    assert code == 0, output
    documents = sorted((tmp_path / "tasks").glob("*/*_gen.yaml"))
    assert documents
    for path in documents:
        document = yaml.safe_load(path.read_text(encoding="utf-8").replace("!function", ""))
        kind = get_eval_kind(path.parent.name)
        options = EvalOptions(task="qa", setting=document["metadata"]["setting"], scoring="generate")
        decoding = document["generation_kwargs"]
        assert decoding["max_gen_toks"] == kind.max_new_tokens(options), path.name
        assert decoding["until"] == list(dict.fromkeys(kind.stop_strings(options))), (
            path.name
        )  # no blank line
        assert decoding["do_sample"] is False


def _with_hub_url(build_dir: Path, tmp_path: Path, repo: str) -> Path:
    """A copy of the build whose croissant.json names ``repo`` on the Hub, its manifest updated to match
    (as a build of a dataset.yaml with ``hub_repo`` writes it)."""
    import hashlib
    import shutil

    build = tmp_path / "build"
    shutil.copytree(build_dir, build)
    croissant = build / "croissant.json"
    document = json.loads(croissant.read_text(encoding="utf-8"))
    document["url"] = f"https://huggingface.co/datasets/{repo}"
    croissant.write_text(json.dumps(document), encoding="utf-8")
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["croissant.json"] = hashlib.sha256(croissant.read_bytes()).hexdigest()
    (build / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return build


@pytest.mark.parametrize("harness", ["lm-eval", "inspect"])
def test_export_takes_the_repo_only_from_a_croissant_its_manifest_vouches_for(
    build_dir: Path, tmp_path: Path, harness: str
) -> None:
    """The Hub repository of the tasks comes from croissant.json, which is verified against the manifest
    as publish verifies it: one edited after the build (another repository) is refused (P005)."""
    build = _with_hub_url(build_dir, tmp_path, "lab/pub-bench")
    code, output = run_cli("export", harness, str(build), "--out", str(tmp_path / "ok"))
    assert code == 0, output
    marker = json.loads((tmp_path / "ok" / "jbcompile-export.json").read_text(encoding="utf-8"))
    assert marker["repo"] == "lab/pub-bench"
    croissant = build / "croissant.json"
    croissant.write_text(
        croissant.read_text(encoding="utf-8").replace("lab/pub-bench", "evil/other"), "utf-8"
    )
    out = tmp_path / "tasks"
    code, output = run_cli("export", harness, str(build), "--out", str(out))
    assert code == 2 and "P005" in output and "croissant.json" in output and "evil/other" not in output, (
        output
    )
    assert not out.exists()
    croissant.unlink()  # listed but gone: no repository to take
    code, output = run_cli("export", harness, str(build), "--out", str(out))
    assert code == 2 and "P005" in output and "missing" in output, output
    code, output = run_cli("export", harness, str(build), "--out", str(out), "--repo", "lab/pub-bench")
    assert code == 0, output  # a repository given needs no croissant.json


@pytest.mark.parametrize("harness", ["lm-eval", "inspect"])
def test_a_new_export_never_deletes_files_of_the_users_in_an_earlier_one(
    build_dir: Path, tmp_path: Path, harness: str
) -> None:
    """A re-export replaces the folder of an earlier export whole: files no export wrote (notes, a task of
    the user's) are refused (EX003) and left as they were; the bytecode caches the harness wrote are not."""
    out = tmp_path / "tasks"
    code, output = run_cli("export", harness, str(build_dir), "--out", str(out), "--local")
    assert code == 0, output
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "utils.cpython-311.pyc").write_bytes(b"\0")
    code, output = run_cli("export", harness, str(build_dir), "--out", str(out), "--local")
    assert code == 0, output  # the export's own files, and caches: replaced
    (out / "notes.txt").write_text("n", encoding="utf-8")
    (out / "mine").mkdir()
    (out / "mine" / "custom.yaml").write_text("x", encoding="utf-8")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    for extra in ((), ("--overwrite",)):
        code, output = run_cli("export", harness, str(build_dir), "--out", str(out), "--local", *extra)
        said = " ".join(output.split())
        assert code == 2 and "EX003" in said and "mine/custom.yaml, notes.txt" in said, output
        assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert (out / "notes.txt").read_text(encoding="utf-8") == "n"


def test_inspect_under_epochs_reports_every_epoch(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`inspect eval --epochs 2`: each metric is the mean of each epoch's metric, not the first epoch's
    (inspect's reducers keep one epoch's metadata, which the metrics read)."""
    import numpy as np
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from jbcompile.evaluate.bootstrap import point_metrics
    from jbcompile.evaluate.registered import get_eval_kind

    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "inspect"
    code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local")
    assert code == 0, output
    outputs = []
    for letter in itertools.islice(itertools.cycle("ABCBA"), 72):  # 36 rows × 2 epochs, epochs differ
        reply = ModelOutput.from_content("mockllm/model", f"ANSWER: {letter}")
        reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outputs.append(reply)
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(
        f"{out / 'eval_fixture_bbq.py'}@eval_fixture_lite",
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        epochs=2,
        max_connections=1,
    )
    assert log.status == "success", log.error
    assert log.results is not None and log.samples
    harness = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    kind = get_eval_kind("bbq")
    per_epoch = []
    for epoch in (1, 2):
        records = [s.scores["bias_choice"].metadata["record"] for s in log.samples if s.epoch == epoch]
        assert len(records) == 36
        per_epoch.append(point_metrics(records, kind.count, kind.count_names, kind.formulas))
    assert per_epoch[0]["acc"] != per_epoch[1]["acc"]  # the epochs answered otherwise
    for name in ("acc", "acc_ambig", "acc_disambig", "ooc_ratio"):
        expected = float(np.mean([float(m[name]) for m in per_epoch]))
        assert math.isclose(harness[name], expected, rel_tol=1e-9), (name, harness[name], per_epoch)
    # score reads every epoch: each a run of its own (epoch-k/), results.json the mean and sd over them,
    # as `eval --samples K` writes; the mean is what the task printed, of the .eval log and of its JSON
    (eval_log,) = (tmp_path / "logs").glob("*.eval")
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    for given in (eval_log, json_log):
        out = tmp_path / f"scored-{given.suffix[1:]}"
        code, output = run_cli("score", str(given), "--out", str(out), "--bootstrap", "0")
        assert code == 0, output
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        samples = results["samples"]
        assert samples["count"] == 2 and samples["runs"] == ["epoch-1", "epoch-2"], samples
        assert results["metrics"] == samples["metrics_mean"]
        assert_same_numbers(harness, samples["metrics_mean"]["overall"], BBQ_EXPORT.metrics)
        for epoch, expected_metrics in zip((1, 2), per_epoch, strict=True):
            ours = json.loads((out / f"epoch-{epoch}" / "results.json").read_text(encoding="utf-8"))
            assert ours["metrics"]["overall"]["n"] == 36
            assert math.isclose(ours["metrics"]["overall"]["acc"], expected_metrics["acc"], rel_tol=1e-9)
            assert (out / f"epoch-{epoch}" / "predictions.jsonl").is_file()
        accs = [float(m["acc"]) for m in per_epoch]
        assert math.isclose(
            samples["metrics_sd"]["overall"]["acc"], float(np.std(accs, ddof=1)), rel_tol=1e-9
        )
        assert not (out / "predictions.jsonl").exists()


def test_score_refuses_an_inspect_log_whose_epochs_hold_other_samples(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EV144 stays for epochs that are not runs over the same rows (an edited log): each epoch's metrics
    would be of other rows. A log of one epoch and a log of two whole epochs are scored."""
    samples = []
    for epoch in (1, 2):
        for sample_id in ("1", "2"):
            samples.append(
                {
                    "id": sample_id,
                    "epoch": epoch,
                    "input": "q",
                    "metadata": {"example_id": sample_id},
                    "scores": {"bias_choice": {"value": "C", "answer": "A"}},
                }
            )
    log = {"status": "success", "samples": samples}
    path = tmp_path / "log.json"
    log["samples"] = samples[:3]  # epoch 2 lacks sample 2
    path.write_text(json.dumps(log), encoding="utf-8")
    code, output = run_cli("score", str(path), "--out", str(tmp_path / "out"))
    assert code == 2 and output.count("EV144") == 1 and "hold different samples" in output, output


def test_inspect_setting_task_reads_replies_as_jbcompile_eval(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setting task (`<config>_<setting>`) sends jbcompile's prompt and reads each reply with jbcompile's
    reader: the task, `jbcompile score` of its log and eval's reading agree, on replies that inspect's
    `ANSWER: X` reading takes otherwise (`答えは0ではなく2です。`: 2; `ANSWER: B`: no option)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from jbcompile.export.reader import read_as_eval

    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "inspect"
    code, output = run_cli("export", "inspect", str(build_dir), "--out", str(out), "--local")
    assert code == 0, output
    assert "eval_fixture_lite_basic" in (out / "README.md").read_text(encoding="utf-8")
    replies = ["答えは0ではなく2です。", "ANSWER: B", "1", "0", "2", "わかりません"]
    outputs = []
    for reply in itertools.islice(itertools.cycle(replies), 36):
        output_ = ModelOutput.from_content("mockllm/model", reply)
        output_.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        outputs.append(output_)
    (log,) = inspect_eval(
        f"{out / 'eval_fixture_bbq.py'}@eval_fixture_lite_basic",
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_connections=1,
    )
    assert log.status == "success", log.error
    assert log.results is not None and log.samples
    harness = {name: m.value for score in log.results.scores for name, m in score.metrics.items()}
    read = {}
    for sample in log.samples:
        reply = sample.output.completion
        options = [sample.metadata[f"ans{k}"] for k in range(3)]
        pred = read_as_eval("bbq", reply, options, task="qa", setting="basic")
        assert sample.scores is not None
        assert sample.scores["jbcompile_reader"].metadata["record"]["pred"] == pred
        read[reply] = pred
    assert read["答えは0ではなく2です。"] == 2 and read["ANSWER: B"] is None
    ours = scored(next((tmp_path / "logs").glob("*.eval")), tmp_path / "score-eval")
    assert ours["n"] == 36
    assert_same_numbers(harness, ours, BBQ_EXPORT.metrics)
    # score reads the reply itself, as eval reads it, not the letter the log records beside it
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    document = json.loads(json_log.read_text(encoding="utf-8"))
    for sample in document["samples"]:
        sample["scores"]["jbcompile_reader"]["answer"] = "A"
    json_log.write_text(json.dumps(document), encoding="utf-8")
    assert_same_numbers(harness, scored(json_log, tmp_path / "score-json"), BBQ_EXPORT.metrics)
