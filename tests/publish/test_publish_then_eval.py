"""The researcher's path: a release on the (fake) Hub, evaluated by its tag with `jbcompile eval`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakehub import FakeHub
from publish_helpers import REPO, build_folder, bump_version, hub_process_env, publish

from tests.eval.tiny_models import corpus, make_tiny_model


def lite_rows(build: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(next((build / "data" / "lite").glob("*.parquet"))).to_pylist()


def test_eval_of_a_tagged_release_records_the_commit_and_manifest(
    hub_env: FakeHub, release, tmp_path: Path
) -> None:
    from huggingface_hub import HfApi

    sources, build = release
    assert publish(sources, build).exit_code == 0
    bump_version(sources, "0.2.0")
    (sources / "templates" / "Age" / "age-train.yaml").unlink()
    assert publish(sources, build_folder(sources, tmp_path / "build2")).exit_code == 0  # main moves on
    api = HfApi(endpoint=hub_env.endpoint, token=hub_env.token)
    tagged = api.dataset_info(REPO, revision="v0.1.0").sha
    assert tagged != api.dataset_info(REPO).sha

    rows = lite_rows(build)
    model = make_tiny_model(tmp_path / "model", corpus(rows), seed=0)
    out = tmp_path / "run"
    env = hub_process_env(hub_env, tmp_path / "hf-home")
    command = [
        sys.executable, "-m", "jbcompile", "eval", "--model", str(model), "--dataset", REPO,
        "--config", "lite", "--revision", "v0.1.0", "--shots", "0", "--limit", "12", "--bootstrap", "50",
        "--quiet", "--out", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert hub_env.token not in done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    dataset = results["dataset"]
    assert (dataset["path"], dataset["revision"], dataset["commit"]) == (REPO, "v0.1.0", tagged)
    assert dataset["manifest"]["version"] == "0.1.0"
    assert dataset["rows"] == len(rows)  # the tagged rows, not main's
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 12
    assert {p["example_id"] for p in predictions} <= {r["example_id"] for r in rows}
