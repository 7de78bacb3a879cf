"""Every bundled kind through a remote backend: bbq, sobaco (two-turn settings too) and jubaku configs run
on the openai and anthropic backends, plain and chat, against the loopback fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.evaluate.backends import BackendOptions
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.requests import EvalRequest
from jbcompile.evaluate.run import run_eval

from tests.eval.fake_api import FakeAPI

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundled_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    out = tmp_path_factory.mktemp("bundled") / "build"
    write_build(compile_project(load_project(ROOT / "sources"), checks=False), out)
    return out


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("config", "setting", "requests_per_row"),
    [("lite", "basic", 1), ("sobaco", "basic-1", 1), ("sobaco", "cot-e-1", 2), ("jubaku", "basic", 1)],
)
def test_each_kind_runs_on_each_remote_backend(
    bundled_build: Path,
    tmp_path: Path,
    monkeypatch,
    backend: str,
    config: str,
    setting: str,
    requests_per_row: int,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "EMPTY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "EMPTY")
    with FakeAPI() as api:
        base = api.url + "/v1" if backend == "openai" else api.url
        for chat in (False, True):
            out = tmp_path / f"run-{chat}"
            request = EvalRequest(
                model="fake", dataset=str(bundled_build), config=config, out=out, bootstrap=5, limit=12,
                options=EvalOptions(setting=setting, scoring="generate", chat=chat), backend=backend,
                backend_options=BackendOptions(base_url=base, backoff_seconds=0.01),
            )  # fmt: skip
            results = run_eval(request).results.to_json()
            rows = [
                json.loads(line)
                for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
            ]
            assert len(rows) == results["dataset"]["evaluated"] == 12
            assert results["backend"]["usage"]["requests"] == requests_per_row * 12
            assert all(row["raw_output"] for row in rows)
            if config != "jubaku":  # the fake answers with a number; jubaku reads a letter
                assert any(row["pred"] is not None for row in rows)
