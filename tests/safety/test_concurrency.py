"""Two commands started at once into one output: they run one after the other, so the output is one
whole result, and the second decides on what the first left — never two exits 0 with one result silently
replaced by the other (docs/guarantees.md, "One writer per place").

The children really overlap: the first to hold the output keeps it until the other waits for it
(``children.start_rivals``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.importers.conftest import EN_SPECS, generate_rows, write_jsonl

from .children import finish, start_rivals
from .conftest import tree, write_predictions


def _one_won(results: list[tuple[int, str]], refusal: str) -> tuple[int, int]:
    """(winner, loser) indexes: one exit 0, the other refused with ``refusal`` after waiting."""
    codes = [code for code, _ in results]
    assert sorted(codes) == [0, 2], results
    winner, loser = codes.index(0), codes.index(2)
    assert "waiting:" in results[loser][1] and refusal in results[loser][1], results[loser][1]
    return winner, loser


def test_two_scores_of_different_files_into_one_folder(tmp_path: Path, lite_rows: list[dict]) -> None:
    files = [write_predictions(tmp_path / f"p{k}.jsonl", lite_rows, k) for k in (0, 1)]
    out = tmp_path / "out"
    commands = [
        ["score", str(f), "--out", str(out), "--prediction-field", "prediction", "--bootstrap", "20"]
        for f in files
    ]
    results = finish(start_rivals(commands, tmp_path / "marker"))
    winner, _ = _one_won(results, "EV007")
    source = json.loads((out / "results.json").read_text(encoding="utf-8"))["source"]
    assert source["predictions"] == str(files[winner])
    assert {"results.json", "report.md"} <= set(tree(out)) and any(p.startswith("charts/") for p in tree(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker", "out", "p0.jsonl", "p1.jsonl"]


def test_two_imports_into_one_folder(tmp_path: Path) -> None:
    data = [
        write_jsonl(tmp_path / f"r{k}.jsonl", generate_rows(EN_SPECS[: 2 + k], "en", seed=k)) for k in (0, 1)
    ]
    out = tmp_path / "sources"
    results = finish(
        start_rivals([["import", "bbq-jsonl", str(d), "--out", str(out)] for d in data], tmp_path / "marker")
    )
    winner, loser = _one_won(results, "IM020")
    assert f"wrote {out}" in results[winner][1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker", "r0.jsonl", "r1.jsonl", "sources"]


def test_two_builds_into_one_folder_run_one_after_the_other(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    command = ["build", "--sources", str(mini_sources), "--out", str(out)]
    results = finish(start_rivals([command, command], tmp_path / "marker"))
    # a build replaces an earlier build: the second one waits, then replaces the first one's whole
    assert [code for code, _ in results] == [0, 0], results
    assert sum("waiting:" in output for _, output in results) == 1
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert set(tree(out)) - {"manifest.json"} == set(manifest["files"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "marker", "sources"]


def test_two_evals_with_other_settings_into_one_folder(
    mini_sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.build import write_build

    from tests.eval.fake_api import FakeAPI
    from tests.helpers import compile_folder

    build = tmp_path / "build"
    write_build(compile_folder(mini_sources), build)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    out = tmp_path / "run"
    with FakeAPI() as api:
        base = ["eval", "--backend", "openai", "--base-url", api.url + "/v1", "--model", "fake-model"]
        commands = [
            [*base, "--dataset", str(build), "--out", str(out), "--scoring", "generate", "--limit", "6",
             "--bootstrap", "20", "--shots", str(shots), "--quiet"]
            for shots in (0, 1)
        ]  # fmt: skip
        results = finish(start_rivals(commands, tmp_path / "marker"))
    winner, loser = _one_won(results, "EV007")
    assert "options.shots" in results[loser][1]
    shots = json.loads((out / "results.json").read_text(encoding="utf-8"))["prompt"]["shots"]
    assert shots == winner  # the folder holds the run that finished, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "marker", "run", "sources"]
