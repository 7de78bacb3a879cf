"""`compare` on runs of `score` beside runs of `eval`: a score run names its data by the path it was given
and the content it read, and knows no scoring or shots but what its protocol fixes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.evaluate.compare import protocol_identity, same_data
from jbcompile.evaluate.results import Results

from tests.eval.test_protocols_check import (  # noqa: F401 - fixtures
    cli,
    eval_fake,
    keys,
    kinds_build,
    scripted,
    sobaco_rows,
    write_jsonl,
)


def _score(predictions: Path, dataset: Path | str, config: str, out: Path, *extra: str) -> Path:
    code, output = cli(
        "score", predictions, "--prediction-field", "reply", "--dataset", dataset, "--config", config,
        "--out", out, "--bootstrap", "0", *extra,
    )  # fmt: skip
    assert code == 0, output
    return out


def test_score_runs_of_one_build_given_by_two_paths_are_the_same_data(
    build_dir: Path, lite_rows: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = write_jsonl(
        tmp_path / "p.jsonl", [{"example_id": r["example_id"], "reply": str(r["label"])} for r in lite_rows]
    )
    monkeypatch.chdir(build_dir.parent)
    first = _score(replies, build_dir, "lite", tmp_path / "a", "--protocol", "jbbq")
    second = _score(replies, Path(build_dir.name), "lite", tmp_path / "b", "--protocol", "jbbq")
    code, output = cli("compare", first, second, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    # named by the content read, the same on any machine: not by either path the runs were given
    content = json.loads((first / "results.json").read_text(encoding="utf-8"))["source"]["dataset_sha256"]
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert written["data"] == ["lite", content] and written["data_by"] == "sha256"
    data_line = _data_line(tmp_path / "cmp")
    assert data_line == f"- **Data:** config `lite`, content sha256 `{content}`"


def _data_line(comparison: Path) -> str:
    text = (comparison / "compare.md").read_text(encoding="utf-8")
    return next(line for line in text.splitlines() if line.startswith("- **Data:**"))


def _score_results(path: str, content: str) -> dict:
    source = {"dataset": path, "config": "lite", "dataset_sha256": content}
    protocol = {"name": "jbbq", "shots": [3, 0]}
    return {"kind": "bbq", "task": "qa", "source": source, "protocol": protocol, "metrics": {}}


def test_one_path_holding_two_builds_is_two_data() -> None:
    assert not same_data([_score_results("build", "a" * 64), _score_results("build", "b" * 64)])
    assert same_data([_score_results("build", "a" * 64), _score_results("./build", "a" * 64)])
    eval_run = {
        "kind": "bbq",
        "dataset": {"path": "/x/build", "config": "lite", "sha256": "a" * 64},
        "metrics": {},
    }
    eval_run["dataset"]["manifest"] = {"sources_hash": "c" * 64}
    assert same_data([eval_run, _score_results("build", "a" * 64)])
    assert not same_data([eval_run, _score_results("build", "b" * 64)])


def test_the_data_is_named_as_on_any_machine_never_by_a_path() -> None:
    """A Hub run by REPO@COMMIT, a release file by its content, a build by its sources hash; a path (the
    one run in a temporary folder, `build` as typed) is never the name."""
    from jbcompile.evaluate.compare.identity import data_name
    from jbcompile.evaluate.compare.render import data_text

    hub_eval = {
        "kind": "bbq",
        "dataset": {"path": "lab/ds", "config": "lite", "commit": "f" * 40},
        "metrics": {},
    }
    hub_score = {
        "kind": "bbq",
        "source": {"dataset": "lab/ds", "config": "lite", "commit": "f" * 40},
        "metrics": {},
    }
    release = {"kind": "bbq", "dataset": {"path": "/tmp/x/r.jsonl", "sha256": "a" * 64}, "metrics": {}}
    build = {
        "kind": "bbq",
        "dataset": {"path": "/tmp/x/build", "manifest": {"sources_hash": "c" * 64}},
        "metrics": {},
    }
    old = {"kind": "bbq", "dataset": {"path": "/tmp/x/build", "config": "lite"}, "metrics": {}}
    assert data_name([hub_eval]) == data_name([hub_score]) == ("commit", f"lab/ds@{'f' * 40}")
    assert data_name([release]) == ("sha256", "a" * 64)
    assert data_name([_score_results("build", "a" * 64), build]) == ("sources_hash", "c" * 64)
    assert data_name([old]) == (None, None)
    assert (
        data_text(["lite", f"lab/ds@{'f' * 40}"], "commit")
        == f"config `lite`, Hub commit `lab/ds@{'f' * 40}`"
    )
    assert (
        data_text(["lite", None], None) == "config `lite`, sources hash, Hub commit and content not recorded"
    )


def test_a_score_run_under_sobaco_has_the_protocols_shots_and_scoring(
    kinds_build: Path,  # noqa: F811
    sobaco_rows: list[dict],  # noqa: F811
    tmp_path: Path,
) -> None:
    """SOBACO fixes zero shots and generation: a score run under its protocol is like an eval run's."""
    replies = write_jsonl(
        tmp_path / "p.jsonl", [{"example_id": r["example_id"], "reply": str(r["label"])} for r in sobaco_rows]
    )
    scored = _score(replies, kinds_build, "sobaco", tmp_path / "score", "--protocol", "sobaco")
    results = Results.of(json.loads((scored / "results.json").read_text(encoding="utf-8")))
    expected = {"protocol": "sobaco", "scoring": "generate", "shots": 0, "task": "qa"}
    assert protocol_identity(results) == expected


def test_an_eval_run_and_a_score_run_under_jubaku_compare(
    scripted,  # noqa: F811
    kinds_build: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    scripted.script[0] = "A"
    code, output = cli(
        "eval", "-m", "fake-model", "-d", kinds_build, "--config", "jubaku", "--out", tmp_path / "eval",
        "--backend", "openai", "--base-url", scripted.url + "/v1", "--bootstrap", "0", "--quiet",
        "--limit", "4", "--protocol", "jubaku",
    )  # fmt: skip
    assert code == 0, output
    from jbcompile.evaluate.dataset import load_rows

    rows = load_rows(str(kinds_build), "jubaku").rows
    replies = write_jsonl(tmp_path / "p.jsonl", [{"example_id": r["example_id"], "reply": "B"} for r in rows])
    scored = _score(replies, kinds_build, "jubaku", tmp_path / "score", "--protocol", "jubaku")
    code, output = cli("compare", tmp_path / "eval", scored, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    written = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "- **Protocol:** `jubaku` (scoring generate, 0 shots, task qa)" in written
    # a score run records no sources hash: the eval run's names the build for both, in either order
    sources = json.loads((kinds_build / "manifest.json").read_text(encoding="utf-8"))["sources_hash"]
    assert _data_line(tmp_path / "cmp") == f"- **Data:** config `jubaku`, sources hash `{sources}`"
    code, output = cli("compare", scored, tmp_path / "eval", "--out", tmp_path / "cmp2", "--bootstrap", "0")
    assert code == 0, output
    assert _data_line(tmp_path / "cmp2") == f"- **Data:** config `jubaku`, sources hash `{sources}`"


def test_a_jbbq_score_run_does_not_know_its_shots(
    scripted,  # noqa: F811
    build_dir: Path,
    lite_rows: list[dict],
    tmp_path: Path,
) -> None:
    """JBBQ ran 3 shots and 0: a score run cannot say which, and is not set beside an eval run of one."""
    code, output = cli(
        "eval", "-m", "fake-model", "-d", build_dir, "--out", tmp_path / "eval", "--backend", "openai",
        "--base-url", scripted.url + "/v1", "--bootstrap", "0", "--quiet", "--limit", "6",
        "--protocol", "jbbq",
    )  # fmt: skip
    assert code == 0, output
    replies = write_jsonl(
        tmp_path / "p.jsonl", [{"example_id": r["example_id"], "reply": str(r["label"])} for r in lite_rows]
    )
    scored = _score(replies, build_dir, "lite", tmp_path / "score", "--protocol", "jbbq")
    code, output = cli("compare", tmp_path / "eval", scored, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 2 and "EV213" in output and "EV212" not in output, output
    assert "does not know the shots" in " ".join(output.split())


def test_compare_says_the_protocol_in_words() -> None:
    from jbcompile.evaluate.compare.render import protocol_text

    said = protocol_text({"protocol": "jbbq", "scoring": "generate", "shots": None, "task": "detect"})
    assert said == "`jbbq` (scoring generate, shots not recorded, task detect)"
    said = protocol_text({"protocol": None, "scoring": "logprob", "shots": 1, "task": "qa"})
    assert said == "none (jbcompile's defaults) (scoring logprob, 1 shot, task qa)"


def test_compare_md_says_which_data_a_score_run_did_not_record(tmp_path: Path, build_dir: Path) -> None:
    """Two score runs of a predictions file that carries its labels (no --dataset) record no config and no
    commit: compare.md says so in words, not as `None`."""
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.dataset import load_rows

    rows = load_rows(str(build_dir), "lite").rows
    records = [dict(BBQ.base_record(row, "qa"), pred=row["label"], raw_output=None) for row in rows]
    predictions = write_jsonl(tmp_path / "p.jsonl", records)
    runs = []
    for name in ("a", "b"):  # two models' runs (one file scored twice as one model's is one run: EV215)
        code, output = cli(
            "score", predictions, "--out", tmp_path / name, "--bootstrap", "0", "--model", f"model-{name}"
        )
        assert code == 0, output
        runs.append(tmp_path / name)
    code, output = cli("compare", *runs, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    text = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "- **Data:** config not recorded, sources hash, Hub commit and content not recorded" in text
    assert "`None`" not in text


def test_score_runs_of_a_harness_file_get_the_paired_tests(
    build_dir: Path, lite_rows: list[dict], tmp_path: Path
) -> None:
    """`score` keeps the rows it scored (predictions.jsonl, eval's format), so `compare` of two score runs
    of another harness's replies runs McNemar and the paired bootstrap, as for two eval runs."""
    runs = []
    for shift in (0, 1):  # the second file answers every row one option over: wrong everywhere
        replies = [{"example_id": r["example_id"], "reply": str((r["label"] + shift) % 3)} for r in lite_rows]
        runs.append(
            _score(
                write_jsonl(tmp_path / f"p{shift}.jsonl", replies), build_dir, "lite", tmp_path / f"s{shift}"
            )
        )
    kept = [
        json.loads(line) for line in (runs[0] / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(kept) == len(lite_rows) and all(r["pred"] == r["gold"] for r in kept)
    code, output = cli("compare", *runs, "--out", tmp_path / "cmp", "--bootstrap", "50")
    assert code == 0, output
    tests = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))["tests"]
    assert not tests["skipped"] and tests["bootstrap"]
    (mcnemar,) = tests["mcnemar"]
    assert (mcnemar["first_acc"], mcnemar["second_acc"], mcnemar["rows"]) == (1.0, 0.0, len(lite_rows))


def test_a_score_of_a_runs_own_predictions_is_the_run_given_twice(
    build_dir: Path, lite_rows: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`score` of a run's predictions.jsonl (from another folder, by a relative path) writes the same
    answers under another results.json: compared with that run, it is the run given twice (EV215), not a
    p = 1 that would read as a finding. Read otherwise (other answers), or named as another model's
    answers (--model), it is compared."""
    replies = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"example_id": r["example_id"], "reply": f"答えは{(r['label'] + i) % 3}です"}
            for i, r in enumerate(lite_rows)
        ],
    )
    first = _score(replies, build_dir, "lite", tmp_path / "first")
    monkeypatch.chdir(tmp_path)
    code, output = cli("score", "first/predictions.jsonl", "--out", "again", "--bootstrap", "0")
    assert code == 0, output
    code, output = cli("compare", first, tmp_path / "again", "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 2 and "EV215" in output and f"a score of the predictions of {first}" in output, output
    assert not (tmp_path / "cmp").exists()
    # named another model's answers: the user's word, compared
    code, output = cli(
        "score", "first/predictions.jsonl", "--out", "named", "--bootstrap", "0", "--model", "other-model",
        "--dataset", build_dir, "--config", "lite",
    )  # fmt: skip
    assert code == 0, output
    code, output = cli("compare", first, tmp_path / "named", "--out", tmp_path / "cmp2", "--bootstrap", "0")
    assert code == 0, output
