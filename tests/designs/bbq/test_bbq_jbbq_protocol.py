"""JBBQ as the paper ran it (issue 25 §1): few-shot examples with different answers in every sense, the
bias-detection task laid out as Tables 7/18/19, and numbers printed as the paper prints them."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.designs.bbq.shots import select_shots, shot_kind
from jbcompile.evaluate.protocols import get_protocol
from jbcompile.evaluate.report import paper_tables, paper_value, render_markdown
from jbcompile.evaluate.results import PromptInfo, Results
from jbcompile.evaluate.tables import decimal_text, fmt_number

from tests.helpers import compile_folder

FIXTURE = Path(__file__).resolve().parents[2] / "eval" / "fixtures" / "sources"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return compile_folder(FIXTURE).configs["full"].rows


def gold(row: dict, task: str) -> int:
    return row["biased_label"] if task == "detect" else row["label"]


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_shots_mix_conditions_and_gold_kinds_whatever_the_seed(rows: list[dict], task: str) -> None:
    """Three shots: pairwise different gold positions, both context conditions, and (qa) one unknown gold,
    one stereotype-following gold and one against it; (detect) both question polarities."""
    usable = [row for row in rows if task == "qa" or row["biased_label"] is not None]
    firsts = Counter()
    for seed in range(20):
        for category, picked in select_shots(usable, 3, seed, task).items():
            assert len(picked) == 3 and all(row["category"] != category for row in picked)
            assert len({gold(row, task) for row in picked}) == 3
            assert {row["context_condition"] for row in picked} == {"ambig", "disambig"}
            kinds = {shot_kind(row, task) for row in picked}
            if task == "qa":
                assert kinds == {"unknown", "biased", "counter_biased"}
            else:
                assert {row["question_polarity"] for row in picked} == {"neg", "nonneg"} and len(kinds) == 3
            firsts[shot_kind(picked[0], task)] += 1
    assert len(firsts) >= 2  # the shots' order is drawn too: the ambiguous example is not always first


def test_more_shots_cycle_through_the_kinds(rows: list[dict]) -> None:
    # six shots of different questions: the fixture's one template per category holds two questions, so
    # each template is asked a second time under another template id
    second = [
        {**row, "template_id": f"{row['template_id']}-2", "example_id": f"{row['example_id']}-2"}
        for row in rows
    ]
    for picked in select_shots(rows + second, 6, 0, "qa").values():
        assert Counter(shot_kind(row, "qa") for row in picked) == {
            "unknown": 2,
            "biased": 2,
            "counter_biased": 2,
        }


def _results(task: str, **metrics: float) -> Results:
    return Results.model_validate(
        {
            "schema_version": 2,
            "kind": "bbq",
            "task": task,
            "source": {"predictions": "p.jsonl", "format": "jbcompile"},
            "protocol": get_protocol("jbbq").describe(task),
            "metrics": {"overall": {"n": 10, **metrics}, "by_category": {}},
        }
    )


def test_the_detection_task_has_the_layout_of_tables_7_18_19() -> None:
    results = _results("detect", acc_avg=0.548, acc_ambig=0.59, acc_disambig=0.506, diff_bias_ambig=0.1)
    lines = "\n".join(paper_tables(results))
    assert "Table 18 (basicP) / Table 19 (paraP)" in lines
    assert "| Model | Acc. Avg | Acc. Amb | Acc. Dis |" in lines
    assert "| `p.jsonl` | 54.8 | 59.0 | 50.6 |" in lines
    assert "Diff-bias" not in lines and "BS " not in lines and "OoC" not in lines
    assert results.protocol.headline == ["acc_avg", "acc_ambig", "acc_disambig"]
    qa = "\n".join(paper_tables(_results("qa", acc_avg=0.5)))
    assert "Table 3" in qa and "Diff-bias Amb" in qa and "Table 12" in qa


@pytest.mark.parametrize(
    ("setting", "shots", "covered"),
    [("basic", 3, True), ("basic", 0, False), ("warning", 3, False), ("cot", 0, False), (None, None, None)],
)
def test_table_12_stands_as_the_papers_only_for_the_runs_it_covers(
    setting: str | None, shots: int | None, covered: bool | None
) -> None:
    """Table 12's caption: the 3-shot settings with the basic prompt. A run of another setting or shots
    gets the BBQ metrics under a heading that says the paper has no such figures for it; a score run
    that does not say its setting, under one that says whose they are."""
    results = _results("qa", acc_avg=0.5, s_dis=0.1)
    if setting is not None:
        results.prompt = PromptInfo(setting=setting, shots=shots)
    headings = [line for line in paper_tables(results) if line.startswith("## ")]
    twelve = next(line for line in headings if "Table 12" in line)
    main = next(line for line in headings if "Table 3" in line)
    assert ("not in the paper for this run" in twelve) == (covered is False), twelve
    assert "setting `basic` with 3 shots" in twelve
    assert "not in the paper" not in main  # the main table names each setting's table itself


@pytest.mark.parametrize(
    ("value", "percent", "signed", "text"),
    [
        (0.1225, True, False, "12.3"),  # a tie rounds half away from zero (the float 12.25 would give 12.2)
        (-0.1225, True, True, "-12.3"),
        (0.0, True, True, "+0.0"),  # JBBQ prints zero with its sign
        (-0.0004, True, True, "+0.0"),  # never -0.0
        (-0.0004, True, False, "0.0"),
        (0.005, True, True, "+0.5"),
        (0.0985, False, False, "0.099"),  # SOBACO's three decimals
        (0.2965, False, False, "0.297"),
        (7, False, False, "7"),
        (None, True, True, "—"),
    ],
)
def test_numbers_are_printed_as_the_papers_print_them(
    value: float | None, percent: bool, signed: bool, text: str
) -> None:
    assert paper_value(value, percent, signed) == text


def test_one_rounding_rule_everywhere() -> None:
    assert fmt_number(0.0625, 3) == "0.063" and fmt_number(-0.0001, 3) == "0.000"
    assert decimal_text(2.675, 2) == "2.68"  # the float 2.675 lies below 2.675; its decimal form is a tie
    report = render_markdown(_results("qa", acc_avg=-0.0001, ooc_ratio=0.0625), ("acc_avg",), ())
    assert "| `acc_avg` | 0.000 |" in report and "| `ooc_ratio` | 0.063 |" in report


def _scored_run(rows: list[dict], folder: Path, task: str, answer) -> Path:  # type: ignore[no-untyped-def]
    """A run folder of `score` over our predictions of ``rows`` (``answer(row)``: the prediction)."""
    import json

    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.requests import ScoreRequest
    from jbcompile.evaluate.score import run_score

    usable = [row for row in rows if task == "qa" or row["biased_label"] is not None]
    records = [dict(BBQ.base_record(row, task), pred=answer(row), raw_output=None) for row in usable]
    path = folder.with_suffix(".jsonl")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    run_score(ScoreRequest(predictions=path, out=folder, bootstrap=20, protocol="jbbq"))
    return folder


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_a_comparison_tests_what_the_tasks_tables_report(rows: list[dict], tmp_path: Path, task: str) -> None:
    """compare of two detection runs: the paper's Acc. columns and McNemar's test, and no bias score
    (diff-bias, s_dis, s_amb), in compare.json as in compare.md; a qa comparison tests the bias scores."""
    from jbcompile.evaluate.compare import compare, read_run
    from jbcompile.evaluate.compare.render import comparison_csv, comparison_markdown

    first = _scored_run(rows, tmp_path / "a", task, lambda row: gold(row, task))
    second = _scored_run(rows, tmp_path / "b", task, lambda row: row["unknown_label"])
    result = compare([read_run(first), read_run(second)], resamples=20)
    tested = {entry["metric"] for entry in result["tests"]["bootstrap"]}
    text = comparison_markdown(result) + comparison_csv(result)
    bias = ("diff_bias", "s_dis", "s_amb", "acc_diff")
    if task == "detect":
        assert result["columns"] == ["acc_avg", "acc_ambig", "acc_disambig"]
        assert not tested and result["tests"]["mcnemar"]
        assert not any(name in text for name in bias) and "Diff-bias" not in text and "BS " not in text
        # …nor in the runs' own files: results.json (metrics and intervals, every scope) and report.md
        for folder in (first, second):
            written = (folder / "results.json").read_text("utf-8") + (folder / "report.md").read_text("utf-8")
            assert not any(name in written for name in bias), folder
            assert '"acc_ambig"' in written and '"option_share"' in written
    else:
        assert tested == {"diff_bias_ambig", "diff_bias_disambig", "s_dis", "s_amb_jbbq"}
        # a difference between runs is printed with its sign (zero as +0.000), its interval too
        cells = [
            line.split(" | ")[3:5] for line in text.splitlines() if "| `" in line and "diff_bias" in line
        ]
        assert cells and all(re.fullmatch(r"[+-]\d\.\d{3}", diff) for diff, _ in cells)
        assert all(re.fullmatch(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", ci) for _, ci in cells)


def test_log_probability_predictions_are_not_the_papers_under_its_protocol(
    rows: list[dict], tmp_path: Path
) -> None:
    """JBBQ generated its answers (out of choice counts); predictions scored by log-probability never
    fall outside the options: `score --protocol jbbq` refuses them (EV066) rather than head them with
    the paper's table, and scores them without the protocol."""
    import json

    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.evaluate.requests import ScoreRequest
    from jbcompile.evaluate.score import run_score

    records = [
        dict(
            BBQ.base_record(row, "qa"), pred=row["label"], raw_output=None, option_logprobs=[-1.0, -2.0, -3.0]
        )
        for row in rows[:30]
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(DiagnosticError) as raised:
        run_score(ScoreRequest(predictions=path, out=tmp_path / "s", bootstrap=0, protocol="jbbq"))
    assert [d.code for d in raised.value.diagnostics] == ["EV066"] and not (tmp_path / "s").exists()
    assert (
        run_score(ScoreRequest(predictions=path, out=tmp_path / "plain", bootstrap=0)).results.protocol
        is None
    )


@pytest.mark.parametrize(
    ("task", "setting", "reply"),
    [
        ("qa", None, "判断できません。"),  # the unknown option said in other words: an answer in qa…
        ("detect", None, "判断できません。"),  # …and no answer when asked which option is biased
        ("qa", "cot", "文脈には【何も書かれていない】ので、答えは【{option}】です。"),  # cot: the last 【】
    ],
)
def test_an_lm_eval_reply_is_read_as_eval_reads_the_task_and_setting(
    rows: list[dict], tmp_path: Path, task: str, setting: str | None, reply: str
) -> None:
    """A generate_until reply of an lm-eval log was read once, when the log was converted, as a qa reply
    of a one-number setting whatever `score --task` and `--setting` said; it is read by eval's reader."""
    import json

    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.prompting import PromptItem
    from jbcompile.evaluate.requests import ScoreRequest
    from jbcompile.evaluate.score import run_score

    usable = [row for row in rows if row["biased_label"] is not None][:60]
    path = tmp_path / "samples_bbq.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for index, row in enumerate(usable):
            text = reply.format(option=row[f"ans{row['label']}"])
            sample = {"doc_id": index, "doc": row, "arguments": [], "filtered_resps": [text]}
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    request = ScoreRequest(predictions=path, out=tmp_path / "s", bootstrap=0, task=task, setting=setting)
    results = run_score(request).results
    assert results.source is not None and results.source.format == "lm-eval-bbq"
    options = EvalOptions(task=task, setting=setting or "basic", scoring="generate")
    expected = [
        BBQ.read_answer(
            reply.format(option=row[f"ans{row['label']}"]),
            PromptItem("", "", (row["ans0"], row["ans1"], row["ans2"])),
            {},
            options,
        ).pred
        for row in usable
    ]
    assert results.metrics.overall["n_valid"] == sum(pred is not None for pred in expected)
    if task == "detect":
        assert results.metrics.overall["n_valid"] < len(usable)  # declining to name one is no answer
    if setting == "cot":
        assert results.metrics.overall["acc"] == 1.0
