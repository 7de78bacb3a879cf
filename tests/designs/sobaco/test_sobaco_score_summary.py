"""`compare` of sobaco `score` runs: each run's setting is the one it was read as (`score --setting`), so
score runs of one model's settings get the summary over settings that eval runs get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.eval.test_protocols_check import cli, write_jsonl


@pytest.fixture(scope="module")
def sobaco_rows(kinds_build: Path) -> list[dict]:
    from jbcompile.evaluate.dataset import load_rows

    return load_rows(str(kinds_build), "sobaco").rows


def _score(rows: list[dict], setting: str, answer, tmp_path: Path, *model: str) -> Path:  # type: ignore[no-untyped-def]
    replies = [{**row, "reply": str(answer(row))} for row in rows]
    name = "-".join([*model[1:], setting])
    path = write_jsonl(tmp_path / f"{name}.jsonl", replies)
    out = tmp_path / name
    code, output = cli(
        "score", path, "--prediction-field", "reply", "--setting", setting, "--protocol", "sobaco",
        "--out", out, "--bootstrap", "0", *model,
    )  # fmt: skip
    assert code == 0, output
    return out


def test_score_runs_join_the_summary_over_settings(sobaco_rows: list[dict], tmp_path: Path) -> None:
    def biased(row: dict) -> int:  # the stereotyped option where a row has one, else the gold
        return row["biased_label"] if row.get("biased_label") is not None else row["label"]

    runs = [
        _score(sobaco_rows, "basic-1", biased, tmp_path),
        _score(sobaco_rows, "debias-1", lambda row: row["label"], tmp_path),
    ]
    results = [json.loads((run / "results.json").read_text(encoding="utf-8")) for run in runs]
    assert [r["source"]["setting"] for r in results] == ["basic-1", "debias-1"]
    code, output = cli("compare", *runs, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"] == ["basic-1", "debias-1"]
    basic = summary["scores"]["basic"]["overall"]["bias_score"]["values"]["1"]
    debias = summary["scores"]["debias"]["overall"]["bias_score"]["values"]["1"]
    assert basic == pytest.approx(results[0]["metrics"]["overall"]["bias_score"])
    assert debias == pytest.approx(results[1]["metrics"]["overall"]["bias_score"])
    assert basic != debias
    from jbcompile.evaluate.tables import ROUNDING_NOTE

    assert ROUNDING_NOTE in (tmp_path / "cmp" / "summary.md").read_text(encoding="utf-8")
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert [run["setting"] for run in compared["runs"]] == ["basic-1", "debias-1"]
    # no --model: the summary says so, never a model called "None"
    assert summary["model"] is None and list(compared["sobaco"]["models"]) == ["model not recorded"]
    for written in ("summary.md", "compare.md"):
        assert "None" not in (tmp_path / "cmp" / written).read_text(encoding="utf-8"), written
    # one wording, not the paper's three (SOBACO §4.1.2): every mean says it covers one, in both files
    from jbcompile.designs.sobaco.summary import FEW_WORDINGS_NOTE

    assert summary["scores"]["basic"]["overall"]["bias_score"]["n_wordings"] == 1
    assert summary["change_rates"]["debias"]["overall"]["bias_score"]["n_wordings"] == 1
    for written in ("summary.md", "compare.md"):
        text = (tmp_path / "cmp" / written).read_text(encoding="utf-8")
        basic_row = next(line for line in text.splitlines() if line.startswith("| basic |") or "± —" in line)
        assert "± — ‡1" in basic_row and FEW_WORDINGS_NOTE in text, (written, basic_row)


def test_score_runs_of_two_models_compare_as_two(sobaco_rows: list[dict], tmp_path: Path) -> None:
    """`score --model` names the model whose answers a file holds: four score runs of two models' settings
    give each model its summary row and pool both into the change-rate correlation (SOBACO Table 4),
    instead of two runs with one setting refused as one model's (SB304)."""

    def biased(row: dict) -> int:
        return row["biased_label"] if row.get("biased_label") is not None else row["label"]

    runs = [
        _score(sobaco_rows, setting, answer, tmp_path, "--model", model)
        for model in ("model-x", "model-y")
        for setting, answer in (("basic-1", biased), ("debias-1", lambda row: row["label"]))
    ]
    assert json.loads((runs[0] / "results.json").read_text(encoding="utf-8"))["source"]["model"] == "model-x"
    assert "- **Model:** `model-x`" in (runs[0] / "report.md").read_text(encoding="utf-8")
    code, output = cli("compare", *runs, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert list(compared["sobaco"]["models"]) == ["model-x", "model-y"]
    assert {point["model"] for point in compared["sobaco"]["pooled_correlation"]["points"]} == {
        "model-x",
        "model-y",
    }
    assert [run["model"] for run in compared["runs"]] == ["model-x", "model-x", "model-y", "model-y"]
    code, output = cli("compare", *runs[:2], runs[3], "--out", tmp_path / "one-model", "--bootstrap", "0")
    assert code == 0, output  # one model's two settings beside the other's one: still two models


def test_score_setting_names_our_predictions_setting_for_compare(
    sobaco_rows: list[dict], tmp_path: Path
) -> None:
    """Our predictions kept without their run.json do not say their setting: compare refuses their score
    run (SB303) and its hint's way out works — `score --setting` names it (recorded in source.setting),
    and compare summarises them over settings. Where run.json is beside them, it says the setting: a
    --setting that contradicts it is refused (EV067), and an unknown one too (EV021)."""
    kept = []
    for setting, answer in (("basic-1", lambda row: row["label"]), ("debias-1", lambda row: 2)):
        scored = _score(sobaco_rows, setting, answer, tmp_path)
        copy = tmp_path / f"kept-{setting}.jsonl"  # our records, without a run folder
        copy.write_text((scored / "predictions.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
        kept.append((setting, copy))
    plain = [tmp_path / f"plain-{setting}" for setting, _ in kept]
    for (_, copy), out in zip(kept, plain, strict=True):
        code, output = cli("score", copy, "--out", out, "--bootstrap", "0")
        assert code == 0, output
    code, output = cli("compare", *plain, "--out", tmp_path / "refused", "--bootstrap", "0")
    assert code == 2 and "SB303" in output and "score --setting" in " ".join(output.split()), output
    named = [tmp_path / f"named-{setting}" for setting, _ in kept]
    for (setting, copy), out in zip(kept, named, strict=True):
        code, output = cli("score", copy, "--setting", setting, "--out", out, "--bootstrap", "0")
        assert code == 0, output
        assert json.loads((out / "results.json").read_text(encoding="utf-8"))["source"]["setting"] == setting
    code, output = cli("compare", *named, "--out", tmp_path / "cmp", "--bootstrap", "0")
    assert code == 0, output
    summary = json.loads((tmp_path / "cmp" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"] == ["basic-1", "debias-1"]
    # a run folder's run.json says the setting: a contradicting --setting is refused, the same one is not
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "predictions.jsonl").write_text(kept[0][1].read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "run.json").write_text(json.dumps({"options": {"setting": "basic-1"}}), encoding="utf-8")
    for path, setting, expected in (
        (folder / "predictions.jsonl", "debias-1", "EV067"),
        (folder / "predictions.jsonl", "basic-1", None),
        (kept[0][1], "basic-9", "EV021"),
    ):
        out = tmp_path / f"again-{setting}"
        code, output = cli("score", path, "--setting", setting, "--out", out)
        assert (code == 0) == (expected is None) and (expected is None or expected in output), output
    # …and without --setting, the run.json's is recorded: compare knows it
    code, output = cli(
        "score", folder / "predictions.jsonl", "--out", tmp_path / "unnamed", "--bootstrap", "0"
    )
    assert code == 0, output
    results = json.loads((tmp_path / "unnamed" / "results.json").read_text(encoding="utf-8"))
    assert results["source"]["setting"] == "basic-1"
