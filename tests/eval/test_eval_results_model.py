"""results.json's typed model: the published schema is the model's, real output validates against it and
reads back byte for byte, older and partial files still read, and the library calls return their result
without touching the request they were given."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate import predictions as files
from jbcompile.evaluate.compare import read_run
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.protocols import resolve_options
from jbcompile.evaluate.requests import EvalRequest, ScoreRequest
from jbcompile.evaluate.results import SCHEMA_VERSION, Results, read_results, schema, schema_text
from jbcompile.evaluate.run import RunResult, run_eval
from jbcompile.evaluate.score import run_score

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "docs" / "schemas" / "results.schema.json"

pytest.importorskip("transformers")


def test_the_published_schema_is_the_models() -> None:
    assert PUBLISHED.read_text(encoding="utf-8") == schema_text(), (
        "regenerate it: python -m jbcompile.evaluate.results > docs/schemas/results.schema.json"
    )


@pytest.fixture(scope="module")
def runs(tiny_model: Path, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An eval run of each scoring method and a score run, through the library calls."""
    folder = tmp_path_factory.mktemp("results-model")
    made = {}
    for scoring in ("logprob", "generate"):
        request = EvalRequest(
            model=str(tiny_model),
            dataset=str(build_dir),
            out=folder / scoring,
            options=EvalOptions(scoring=scoring, shots=0),
            bootstrap=20,
            limit=8,
            max_new_tokens=4,
        )
        made[scoring] = run_eval(request).out
    made["score"] = run_score(
        ScoreRequest(made["logprob"] / "predictions.jsonl", out=folder / "score", bootstrap=20)
    ).out
    return made


@pytest.mark.parametrize("name", ["logprob", "generate", "score"])
def test_real_output_validates_and_reads_back_byte_for_byte(runs: dict[str, Path], name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    path = runs[name] / "results.json"
    text = path.read_text(encoding="utf-8")
    jsonschema.validate(json.loads(text), json.loads(PUBLISHED.read_text(encoding="utf-8")))
    read = read_results(path)
    assert files.dump_json(read.to_json()) == text
    assert read.schema_version == SCHEMA_VERSION and read.metrics.overall["n"] == 8
    assert (read.model is None) == (name == "score") and (read.source is None) == (name != "score")


def test_the_schema_refuses_what_eval_never_writes(runs: dict[str, Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    written = json.loads((runs["logprob"] / "results.json").read_text(encoding="utf-8"))
    for broken in (
        {key: value for key, value in written.items() if key != "metrics"},
        {**written, "metrics": {"overall": {"acc": "high"}, "by_category": {}}},
        {**written, "bootstrap": {**written["bootstrap"], "resamples": "many"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema())


def test_a_first_schema_file_and_a_partial_one_still_read(tmp_path: Path) -> None:
    version_1 = {
        "schema_version": 1,
        "kind": "bbq",
        "task": "qa",
        "model": {"name": "m", "revision": None},
        "dataset": {"path": "build", "config": "lite", "manifest": {"sources_hash": "abc"}},
        "metrics": {"overall": {"n": 3, "acc": 0.5, "s_amb": 0.1}, "by_category": {}},
        "metrics_ci": {"overall": {"n": None, "acc": [0.4, 0.6], "s_amb": None}, "by_category": {}},
        "written_by": "an older jbcompile",  # an unknown field is kept, not dropped
    }
    read = Results.model_validate(version_1)
    assert read.to_json() == version_1 and read.protocol is None and read.headline is None
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(version_1), encoding="utf-8")
    assert read_run(folder).results.metrics.overall["s_amb"] == 0.1
    (folder / "results.json").write_text(json.dumps({"kind": "bbq", "metrics": [1, 2]}), encoding="utf-8")
    with pytest.raises(DiagnosticError) as error:
        read_run(folder)
    assert error.value.diagnostics[0].code == "EV210" and "metrics" in error.value.diagnostics[0].message


def test_eval_returns_its_result_and_leaves_the_request_as_it_was(
    tiny_model: Path, build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default folder is under runs/
    options = resolve_options(None, shots=0)  # as the CLI gives it: the setting is the kind's to choose
    request = EvalRequest(
        model=str(tiny_model), dataset=str(build_dir), options=options, bootstrap=10, limit=4
    )
    before = copy.deepcopy(request)
    result = run_eval(request)
    assert request == before and request.out is None and request.options.setting is None
    assert isinstance(result, RunResult)
    assert result.out == Path("runs") / f"{tiny_model.name}-lite-basic"
    assert result.written == ("results.json", "predictions.jsonl", "report.md", "charts/")
    assert all((result.out / name).exists() for name in result.written)
    assert result.results == read_results(result.out / "results.json")


def test_score_returns_its_result_and_leaves_the_request_as_it_was(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    request = ScoreRequest(runs["generate"] / "predictions.jsonl", bootstrap=10)
    before = copy.deepcopy(request)
    result = run_score(request)
    assert request == before and request.out is None
    assert result.out == Path("runs") / "score-predictions"
    assert all((result.out / name).exists() for name in result.written)
    assert result.results.source is not None and result.results.source.format == "jbcompile"
    assert result.results == read_results(result.out / "results.json")
