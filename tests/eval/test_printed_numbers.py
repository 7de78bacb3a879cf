"""Numbers as every output prints them (issue 25 §1.5): one rounding rule, the paper's sign wherever a
signed figure is printed (a bias score in any table, a difference between runs, a change rate), never
-0.0 in a table or a JSON file, and the option shares always three values, at every level."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from jbcompile.designs.sobaco.summary import change_rate, summarize, summary_markdown
from jbcompile.evaluate.report import render_markdown
from jbcompile.evaluate.results import Metrics, Results
from jbcompile.evaluate.samples import over_runs
from jbcompile.evaluate.tables import fmt_number, fmt_p

from tests.designs.sobaco.test_sobaco_eval_metrics import _run

MINUS_ZERO = re.compile(r"-0\.0+(?![0-9])")


def test_option_share_keeps_its_three_values_over_samples() -> None:
    """--samples: each share's mean and sd (not one null for the list), three nulls where a run has
    none (every answer out of choice)."""
    runs = [
        Metrics(
            overall={"acc": 0.5, "option_share": [0.2, 0.3, 0.5]},
            by_category={"Age": {"option_share": [0.5, 0.5, 0.0]}},
        ),
        Metrics(
            overall={"acc": 0.6, "option_share": [0.4, 0.3, 0.3]},
            by_category={"Age": {"option_share": [None, None, None]}},
        ),
    ]
    mean, sd = over_runs(runs)
    assert mean["overall"]["option_share"] == pytest.approx([0.3, 0.3, 0.4])
    assert sd["overall"]["option_share"][1] == 0.0 and len(sd["overall"]["option_share"]) == 3
    assert mean["by_category"]["Age"]["option_share"] == [None, None, None]
    assert sd["by_category"]["Age"]["option_share"] == [None, None, None]
    assert Results.model_validate({"metrics": mean}).metrics.overall["option_share"] == pytest.approx(
        [0.3, 0.3, 0.4]
    )


def test_a_count_every_sample_shares_stays_a_count() -> None:
    """--samples: the rows every run scored (n) are that count, printed "20", not a mean "20.000"; a
    count that differs between runs (the valid answers) is their mean, like any figure."""
    from jbcompile.evaluate.report import headline_text

    runs = [
        Metrics(overall={"n": 20, "n_valid": 2, "acc_avg": 0.5}),
        Metrics(overall={"n": 20, "n_valid": 3, "acc_avg": 0.6}),
    ]
    mean, sd = over_runs(runs)
    assert mean["overall"]["n"] == 20 and isinstance(mean["overall"]["n"], int) and sd["overall"]["n"] == 0
    assert mean["overall"]["n_valid"] == 2.5 and sd["overall"]["n_valid"] == pytest.approx(0.7071, abs=1e-4)
    line = headline_text(Results.model_validate({"kind": "bbq", "task": "qa", "metrics": mean}))
    assert "n 20," in line and "20.0" not in line, line


def test_lists_and_signs_by_the_one_rule() -> None:
    assert fmt_number([0.12345, None, 0.5]) == "0.123 / — / 0.500"
    assert fmt_number(-0.0004, signed=True) == "+0.000" and fmt_number(0.0625, signed=True) == "+0.063"
    assert fmt_number(-0.0625, signed=True) == "-0.063" and fmt_number(-0.0004) == "0.000"
    assert fmt_number(3, signed=True) == "3" and fmt_number(True) == "True"
    assert fmt_p(0.02675) == "0.0268" and fmt_p(0.00001) == "1.0e-05"  # a p-value's tie: the same rule


def _bbq(**metrics: object) -> Results:
    return Results.model_validate(
        {
            "kind": "bbq",
            "task": "qa",
            "source": {"predictions": "p.jsonl", "format": "jbcompile"},
            "metrics": {"overall": dict(metrics), "by_category": {"Age": dict(metrics)}},
            "metrics_ci": {"overall": {"diff_bias_ambig": [-0.0004, 0.25]}, "by_category": {}},
        }
    )


def test_a_bias_score_carries_its_sign_in_every_table_of_the_report() -> None:
    """JBBQ prints its bias scores signed (+48.5, +0.0): so do the report's overall table, its interval,
    the per-category table and the note on both conventions; accuracies stay unsigned."""
    results = _bbq(acc_ambig=0.5, diff_bias_ambig=-0.0004, diff_bias_ambig_valid=0.125, s_dis=-0.25)
    report = render_markdown(results, ("acc_ambig", "diff_bias_ambig", "s_dis"), ())
    assert "| `diff_bias_ambig` | +0.000 | [+0.000, +0.250] |" in report
    assert "| `acc_ambig` | 0.500 |" in report and "| `s_dis` | -0.250 |" in report
    assert "| Age | 0.500 | +0.000 | -0.250 |" in report
    assert "`diff_bias_ambig` +0.000 vs `diff_bias_ambig_valid` +0.125" in report
    assert not MINUS_ZERO.search(report)


def test_the_terminal_line_signs_as_the_report(tmp_path: Path, build_dir: Path) -> None:
    from jbcompile.cli import app
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.dataset import load_rows
    from typer.testing import CliRunner

    rows = load_rows(str(build_dir), "lite").rows
    records = [dict(BBQ.base_record(row, "qa"), pred=row["label"], raw_output=None) for row in rows]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", str(path), "--out", str(tmp_path / "o"), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "diff_bias_ambig +0.000" in result.output and "acc_avg 1.000" in result.output


def test_a_change_rate_is_signed_and_never_minus_zero() -> None:
    """CR of a negative basic bias score that did not change is 0.0 (the division gives −0.0): in the
    JSON as in the table, where a change rate carries its sign (+0.0 none, +25.0 up, −50.0 down)."""
    assert math.copysign(1.0, change_rate(-0.2, -0.2)) == 1.0
    runs = [_run(f"basic-{w}", -0.2, 0.4) for w in (1, 2)] + [_run(f"debias-{w}", -0.2, 0.5) for w in (1, 2)]
    summary = summarize(runs)
    assert not MINUS_ZERO.search(json.dumps(summary))
    text = summary_markdown(summary)
    # two wordings of the three: each mean is marked ‡2
    assert "| debias | +0.0 ± 0.0 ‡2 | +25.0 ± 0.0 ‡2 |" in text and not MINUS_ZERO.search(text)


def test_summary_prints_a_p_value_as_every_table_does() -> None:
    """summary.md's correlation p: four decimals by the one rule, scientific below 0.0001 (as compare.md)."""
    runs = [_run(f"basic-{w}", 0.2, 0.4) for w in (1, 2)] + [_run(f"debias-{w}", 0.1, 0.3) for w in (1, 2)]
    summary = summarize(runs)
    for p_value, printed in ((0.02675, "0.0268"), (0.00001, "1.0e-05")):
        summary["correlation"]["overall"]["p_value"] = p_value
        assert f"| {printed} |" in summary_markdown(summary)


def test_every_table_file_says_how_it_rounds(tmp_path: Path, build_dir: Path) -> None:
    """The papers state no rounding: report.md and compare.md say the rule they print by, and the
    example the note gives is what the one rule prints."""
    from jbcompile.cli import app
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.tables import ROUNDING_NOTE
    from typer.testing import CliRunner

    assert "0.1225 prints 0.123" in ROUNDING_NOTE and fmt_number(0.1225) == "0.123"
    rows = load_rows(str(build_dir), "lite").rows
    records = [dict(BBQ.base_record(row, "qa"), pred=row["label"], raw_output=None) for row in rows]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    for name in ("a", "b"):  # two models' answers (one file scored twice as one's is one run: EV215)
        out = tmp_path / name
        result = CliRunner().invoke(
            app, ["score", str(path), "--out", str(out), "--bootstrap", "0", "--model", f"model-{name}"]
        )
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        app,
        [
            "compare",
            str(tmp_path / "a"),
            str(tmp_path / "b"),
            "--out",
            str(tmp_path / "c"),
            "--bootstrap",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    for written in (tmp_path / "a" / "report.md", tmp_path / "c" / "compare.md"):
        assert ROUNDING_NOTE in written.read_text(encoding="utf-8"), written


def test_a_p_value_is_never_printed_as_zero_nor_made_up() -> None:
    """McNemar's exact p under a float's range is 0.0: printed as a bound, not as a p of zero; two runs
    that share no row have no p at all (not p = 1)."""
    from jbcompile.evaluate.compare import mcnemar

    tiny = mcnemar([True] * 1500, [False] * 1500)
    assert tiny["p_value"] == 0.0 and fmt_p(tiny["p_value"]) == "< 1e-300"
    assert fmt_p(1e-5) == "1.0e-05" and fmt_p(0.5) == "0.5000"
    none = mcnemar([], [])
    assert none["p_value"] is None and fmt_p(none["p_value"]) == "—"
    assert mcnemar([True, False], [True, False])["p_value"] == 1.0  # shared rows, no discordant one


def test_the_rounding_note_covers_percents_and_signed_zeros() -> None:
    """The note under every table gives the rule for the paper's percents and signed columns too, and
    what it says is what they print."""
    from jbcompile.evaluate.report import paper_value
    from jbcompile.evaluate.tables import ROUNDING_NOTE

    assert "12.25 prints 12.3" in ROUNDING_NOTE and paper_value(0.1225, True, False) == "12.3"
    assert "+0.0" in ROUNDING_NOTE and paper_value(-0.0001, True, True) == "+0.0"


def test_a_summary_without_change_rates_leaves_no_empty_cell() -> None:
    """Only basic runs: no method has a change rate, and the correlation table says so with —."""
    summary = summarize([_run(f"basic-{w}", 0.2, 0.4) for w in (1, 2)])
    rows = [line for line in summary_markdown(summary).splitlines() if line.startswith("| overall |")]
    assert rows and all("|  |" not in row for row in rows) and "| overall | — | — | — |" in rows


def test_the_intervals_line_names_the_unit_and_no_intervals() -> None:
    """report.md's Intervals line: what the kind's bootstrap resamples (jubaku's cases, the others'
    templates), and "none" under --bootstrap 0 rather than a bootstrap of 0 resamples."""
    from jbcompile.evaluate.registered import get_eval_kind
    from jbcompile.evaluate.results import metrics_block

    def intervals(kind: str, resamples: int) -> str:
        block = metrics_block(get_eval_kind(kind), [], resamples, 0)
        results = Results.model_validate({"kind": kind, "task": "qa", **block})
        report = render_markdown(results, (), ())
        return next(line for line in report.splitlines() if line.startswith("- **Intervals:**"))

    assert "bootstrap over cases, 200 resamples" in intervals("jubaku", 200)
    assert "a scope of one case has none (—" in intervals("jubaku", 200)  # why a scope shows no interval
    assert "bootstrap over templates, 200 resamples" in intervals("bbq", 200)
    assert intervals("bbq", 0) == "- **Intervals:** none (`--bootstrap 0`)"
