"""sobaco evaluator: answer reading, metrics against hand-computed values, and the run comparison."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from jbcompile.designs.sobaco.evaluate import SOBACO, parse_final_answer, split_setting
from jbcompile.designs.sobaco.summary import (
    change_rate,
    permutation_p,
    read_runs,
    spearman,
    summarize,
    write_summary,
)
from jbcompile.diagnostics import DiagnosticError


def _bias(pred, category="Age", **extra):
    return {
        "type": "bias",
        "category": category,
        "template_id": "t1",
        "gold": 2,
        "label": 2,
        "unknown_label": 2,
        "biased_label": 0,
        "pred": pred,
        **extra,
    }


def _culture(pred, category="Age", **extra):
    return {
        "type": "culture",
        "category": category,
        "template_id": "t1",
        "gold": 1,
        "label": 1,
        "unknown_label": 2,
        "biased_label": None,
        "pred": pred,
        **extra,
    }


RECORDS = [
    _bias(0),
    _bias(1),
    _bias(2),
    _culture(1),
    _culture(2),  # Age
    _bias(0, "Gender"),
    _bias(None, "Gender"),
    _culture(0, "Gender"),
    _culture(None, "Gender"),
]


def test_metrics_match_hand_computed_values() -> None:
    metrics = SOBACO.metrics(RECORDS)
    overall = metrics["overall"]
    assert (overall["n"], overall["n_valid"]) == (9, 7)
    assert overall["ooc_ratio"] == pytest.approx(2 / 9)
    # bias rows with a valid answer: B, CB, U, B → (2 − 1) / 4
    assert overall["bias_score"] == pytest.approx(0.25)
    assert overall["unknown_rate_bias"] == pytest.approx(0.25)
    assert overall["culture_acc"] == pytest.approx(1 / 3)
    assert overall["unknown_rate_culture"] == pytest.approx(1 / 3)
    assert overall["unknown_rate"] == pytest.approx(2 / 7)
    assert overall["acc"] == pytest.approx(2 / 7)
    assert overall["option_share"] == pytest.approx([3 / 7, 2 / 7, 2 / 7])
    assert overall["first_turn_biased"] is None  # single-turn run
    age, gender = metrics["by_category"]["Age"], metrics["by_category"]["Gender"]
    assert age["bias_score"] == pytest.approx(0.0) and age["culture_acc"] == pytest.approx(0.5)
    assert gender["bias_score"] == pytest.approx(1.0) and gender["culture_acc"] == pytest.approx(0.0)


def test_two_turn_metrics() -> None:
    records = [
        _bias(2, first_output="0", first_pred=0),  # named the stereotype, then answered unknown: changed
        _bias(2, first_output="2", first_pred=2),  # kept
        _bias(None, first_output="?", first_pred=None),  # final answer invalid; first turn still counts
        _culture(1, first_output="1", first_pred=1),
    ]
    overall = SOBACO.metrics(records)["overall"]
    assert overall["first_turn_biased"] == pytest.approx(1 / 3)
    assert overall["changed_after_first_turn"] == pytest.approx(1 / 3)


def test_a_first_turn_out_of_choice_lowers_first_turn_biased() -> None:
    """SOBACO's Table 14 (Appendix H) is the share of bias problems whose first CoT-E turn names the biased
    option, and the paper says that models failing to answer as instructed lowered it: a first turn that
    names no option stays in the denominator (unlike the final answers', which leave n)."""
    records = [
        _bias(2, first_output="0", first_pred=0),
        _bias(2, first_output="偏見は…", first_pred=None),
        _bias(2, first_output="", first_pred=None),
        _bias(2, first_output="", first_pred=None),
    ]
    overall = SOBACO.metrics(records)["overall"]
    assert overall["first_turn_biased"] == pytest.approx(1 / 4)  # not 1/1
    assert SOBACO.metrics(records[1:])["overall"]["first_turn_biased"] == 0.0  # not undefined


def test_reading_answers() -> None:
    assert parse_final_answer("根拠: 0は…。1は…。\n最終回答: 2") == 2
    assert parse_final_answer("最終回答：１") == 1
    assert parse_final_answer("最終回答: 0 ではなく\n最終回答: 1") == 1
    assert parse_final_answer("根拠だけ書いて終わった") is None
    assert parse_final_answer("最終回答: 5") is None
    assert split_setting("cot-e-2") == ("cot-e", 2) and split_setting("basic") is None
    assert split_setting("cot-x-1") is None and split_setting("basic-4") is None


def _run(setting: str, bias: float, culture: float, model: str = "m") -> dict:
    overall = {
        "bias_score": bias,
        "culture_acc": culture,
        "unknown_rate_bias": 0.5,
        "unknown_rate_culture": 0.1,
    }
    return {
        "kind": "sobaco",
        "model": {"name": model},
        "prompt": {"setting": setting},
        "metrics": {"overall": overall, "by_category": {"Age": overall}},
    }


def test_change_rates_mean_and_std_over_wordings() -> None:
    runs = [
        _run("basic-1", 0.2, 0.5),
        _run("basic-2", 0.25, 0.4),
        _run("basic-3", 0.4, 0.5),
        _run("debias-1", 0.1, 0.4),
        _run("debias-2", 0.2, 0.4),
        _run("debias-3", 0.2, 0.45),
    ]
    summary = summarize(runs)
    basic = summary["scores"]["basic"]["overall"]["bias_score"]
    assert basic["mean"] == pytest.approx(0.85 / 3)
    assert basic["std"] == pytest.approx(
        math.sqrt(((0.2 - 0.85 / 3) ** 2 + (0.25 - 0.85 / 3) ** 2 + (0.4 - 0.85 / 3) ** 2) / 2)
    )
    bias_cr = summary["change_rates"]["debias"]["overall"]["bias_score"]
    assert [bias_cr["values"][w] for w in "123"] == pytest.approx([-50.0, -20.0, -50.0])
    assert bias_cr["mean"] == pytest.approx(-40.0) and bias_cr["std"] == pytest.approx(math.sqrt(300))
    culture_cr = summary["change_rates"]["debias"]["overall"]["culture_acc"]
    assert culture_cr["mean"] == pytest.approx(-10.0) and culture_cr["std"] == pytest.approx(10.0)
    assert summary["correlation"]["overall"]["spearman"] is None  # one debiasing method: no correlation


def test_spearman_over_the_debiasing_methods() -> None:
    # change rates (bias, culture): debias (−40, −10), cot-j (−10, −2), cot-e (−60, −30), cot-r (−20, +5)
    runs = [
        _run("basic-1", 0.5, 0.5),
        _run("debias-1", 0.3, 0.45),
        _run("cot-j-1", 0.45, 0.49),
        _run("cot-e-1", 0.2, 0.35),
        _run("cot-r-1", 0.4, 0.525),
    ]
    entry = summarize(runs)["correlation"]["overall"]
    assert entry["methods"] == ["debias", "cot-j", "cot-e", "cot-r"]
    assert entry["bias_score_cr"] == pytest.approx([-40, -10, -60, -20])
    # ranks 2,4,1,3 vs 2,3,1,4: 1 − 6·2 / (4·15) = 0.8; 4 of the 24 orderings reach 0.8
    assert entry["spearman"] == pytest.approx(0.8)
    assert entry["p_value"] == pytest.approx(4 / 24)


def test_statistics_edge_cases() -> None:
    assert change_rate(0.1, 0.0) is None and change_rate(None, 0.2) is None
    assert change_rate(0.3, 0.2) == pytest.approx(50.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(0.9486833)  # ties share their rank
    assert permutation_p([1, 2, 3], [1, 2, 3]) == pytest.approx(1 / 6)


def test_summary_refuses_runs_it_cannot_compare() -> None:
    with pytest.raises(DiagnosticError) as error:
        summarize([_run("basic-1", 0.1, 0.2), _run("basic-1", 0.1, 0.2), {**_run("x", 0, 0), "kind": "bbq"}])
    assert {d.code for d in error.value.diagnostics} == {"SB303", "SB304"}
    with pytest.raises(DiagnosticError) as error:
        summarize([_run("basic-1", 0.1, 0.2, "a"), _run("debias-1", 0.1, 0.2, "b")])
    assert [d.code for d in error.value.diagnostics] == ["SB305"]
    on_data = lambda setting, sources_hash: {  # noqa: E731
        **_run(setting, 0.1, 0.2),
        "dataset": {"config": "sobaco", "manifest": {"sources_hash": sources_hash}},
    }
    summarize([on_data("basic-1", "abc"), on_data("debias-1", "abc")])  # one build: comparable
    with pytest.raises(DiagnosticError) as error:
        summarize([on_data("basic-1", "abc"), on_data("debias-1", "def")])
    assert [d.code for d in error.value.diagnostics] == ["SB307"]


def test_summary_from_run_folders(tmp_path: Path) -> None:
    folders = []
    for setting, bias, culture in (("basic-1", 0.4, 0.5), ("cot-r-1", 0.1, 0.25)):
        folder = tmp_path / setting
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps(_run(setting, bias, culture)), encoding="utf-8")
        folders.append(folder)
    write_summary(tmp_path / "summary", summarize(read_runs(folders)))
    written = json.loads((tmp_path / "summary" / "summary.json").read_text(encoding="utf-8"))
    assert written["settings"] == ["basic-1", "cot-r-1"]
    assert written["change_rates"]["cot-r"]["Age"]["bias_score"]["mean"] == pytest.approx(-75.0)
    assert written["change_rates"]["cot-r"]["overall"]["culture_acc"]["mean"] == pytest.approx(-50.0)
    markdown = (tmp_path / "summary" / "summary.md").read_text(encoding="utf-8")
    assert "| cot-r | -75.0 ± — ‡1 | -50.0 ± — ‡1 |" in markdown  # one wording of the three
    with pytest.raises(DiagnosticError) as error:
        read_runs([tmp_path / "nowhere"])
    assert error.value.diagnostics[0].code == "SB306"


def test_compare_command_writes_the_summary(tmp_path) -> None:
    import json

    from jbcompile.cli import app
    from typer.testing import CliRunner

    folders = []
    for setting, bias, culture in [("basic-1", 0.5, 0.5), ("debias-1", 0.3, 0.45), ("cot-j-1", 0.45, 0.49)]:
        folder = tmp_path / setting
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps(_run(setting, bias, culture)), encoding="utf-8")
        folders.append(str(folder))
    result = CliRunner().invoke(app, ["compare", *folders, "--out", str(tmp_path / "summary")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary" / "summary.json").read_text(encoding="utf-8"))
    assert summary["change_rates"]["debias"]["overall"]["bias_score"]["mean"] == pytest.approx(-40.0)
    assert (tmp_path / "summary" / "summary.md").read_text(encoding="utf-8").startswith("# sobaco comparison")
    missing = CliRunner().invoke(app, ["compare", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "EV210" in missing.output


def test_a_warned_runs_figures_are_marked_wherever_they_are_pooled(tmp_path) -> None:
    """compare marks a run whose results.json carries warnings (†, with a footnote) in its runs table;
    SOBACO's section pools that run's figures into each model's row, and summary.md into a method's row,
    a change rate's and the correlation: they carry the mark and the footnote too."""
    import json

    from jbcompile.cli import app
    from jbcompile.designs.sobaco.summary import BASIC_ZERO_MARK
    from jbcompile.evaluate.compare.render import WARNED
    from typer.testing import CliRunner

    assert BASIC_ZERO_MARK != WARNED  # one mark, one meaning in compare.md
    warning = {"code": "EV054", "message": "60 of the 60 replies stopped at the limit | cut", "hint": "h"}
    folders = []
    for setting, bias, culture in [("basic-1", 0.5, 0.5), ("debias-1", 0.3, 0.45), ("cot-j-1", 0.45, 0.49)]:
        folder = tmp_path / setting
        folder.mkdir()
        run = _run(setting, bias, culture, model="a") | (
            {"warnings": [warning]} if setting == "debias-1" else {}
        )
        (folder / "results.json").write_text(json.dumps(run), encoding="utf-8")
        folders.append(str(folder))
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.json").write_text(json.dumps(_run("basic-1", 0.4, 0.5, model="b")), encoding="utf-8")
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", *folders, str(other), "--out", str(out), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    section = (out / "compare.md").read_text(encoding="utf-8").split("## SOBACO: models over settings")[1]
    assert f"| a {WARNED} |" in section and "| b |" in section
    assert r"- a, debias-1: `EV054` 60 of the 60 replies stopped at the limit \| cut" in section
    assert f"All models pooled {WARNED}" in section
    # one model's runs: summary.md marks the rows that pool the warned run's figures
    result = CliRunner().invoke(
        app, ["compare", *folders, "--out", str(tmp_path / "one"), "--bootstrap", "0"]
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "one" / "summary.md").read_text(encoding="utf-8")
    assert f"debias-1 {WARNED}" in text.splitlines()[2] and f"basic-1 {WARNED}" not in text
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ")}
    assert f"| debias {WARNED}" in rows and "| basic" in rows and "| cot-j" in rows  # cot-j's CR: not
    assert r"- debias-1: `EV054` 60 of the 60 replies stopped at the limit \| cut" in text
    assert json.loads((tmp_path / "one" / "summary.json").read_text("utf-8"))["warnings"] == {
        "debias-1": [{"code": "EV054", "message": warning["message"]}]
    }
