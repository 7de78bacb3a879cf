"""`--protocol` and `jbcompile compare` (issue 14): options against a protocol, the paper-layout report,
the table of runs, paired tests and the refusals."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.bootstrap import cluster_bootstrap, paired_cluster_bootstrap
from jbcompile.evaluate.compare import compare, read_run, write_comparison
from jbcompile.evaluate.protocols import resolve_options
from jbcompile.evaluate.results import SCHEMA_VERSION
from jbcompile.evaluate.results import metrics_block as _metrics_block
from typer.testing import CliRunner

from tests.eval.contract import SCHEMA_VERSION as CONTRACT_SCHEMA
from tests.eval.test_eval_metrics import answer, balanced_rows


def test_schema_version_is_the_documented_one() -> None:
    assert SCHEMA_VERSION == CONTRACT_SCHEMA == 2


# ---- protocols -----------------------------------------------------------------------------------


def test_a_protocol_sets_the_papers_options() -> None:
    options = resolve_options("jbbq")
    assert (options.scoring, options.shots, options.setting, options.protocol) == (
        "generate",
        3,
        "basic",
        "jbbq",
    )
    assert resolve_options("jubaku").shots == 0 and resolve_options("sobaco").setting == "basic-1"
    plain = resolve_options(None)  # the setting is the kind's first, chosen once the dataset is known
    assert (plain.scoring, plain.shots, plain.setting, plain.protocol) == ("logprob", 3, None, None)


def test_explicit_options_the_paper_used_win() -> None:
    assert resolve_options("jbbq", shots=0).shots == 0  # JBBQ's zero-shot Table 13
    assert resolve_options("jbbq", setting="warning").setting == "warning"  # paraP
    assert resolve_options("jbbq", scoring="generate").scoring == "generate"


def test_explicit_options_against_the_protocol_are_refused() -> None:
    with pytest.raises(DiagnosticError) as error:
        resolve_options("jbbq", scoring="logprob", shots=5)
    codes = [d.code for d in error.value.diagnostics]
    assert codes == ["EV201", "EV201"]
    assert "--scoring logprob" in error.value.diagnostics[0].message
    with pytest.raises(DiagnosticError) as error:
        resolve_options("bbbq")
    assert error.value.diagnostics[0].code == "EV200"


def test_cli_refuses_a_contradicted_protocol_without_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "-m",
            "nowhere",
            "-d",
            "nowhere",
            "--protocol",
            "jubaku",
            "--scoring",
            "logprob",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 2 and "EV201" in result.output
    assert not out.exists()


def test_report_opens_with_the_papers_table(tmp_path: Path) -> None:
    from jbcompile.evaluate.report import render_markdown

    records = answer(balanced_rows(), lambda i: "biased" if i % 4 else "ooc")
    results = {"kind": "bbq", "task": "qa", "source": {"predictions": "p.jsonl", "format": "jbcompile"}}
    results.update(_metrics_block(BBQ, records, 0, 0, "jbbq"))
    text = render_markdown(results, BBQ.table_metrics, ())
    first_table = text.index("| Model | OoC | Acc. Avg | Acc. Amb | Acc. Dis | Diff-bias Avg |")
    assert first_table < text.index("## Overall")
    assert "| Model | BS Avg | BS Amb | BS Dis | Acc. Diff. |" in text
    assert "prompt wording is jbcompile's own" in text and "--prompt-file" in text
    overall = results["metrics"]["overall"]
    assert f"| {overall['ooc_ratio'] * 100:.1f} |" in text  # per cent, one decimal, as the paper prints
    assert "`acc` " in text and "vs `acc_valid`" in text  # OoC changes the accuracy: both are shown


# ---- paired bootstrap ----------------------------------------------------------------------------


def _records(choose, templates: str = "abcdef") -> list[dict]:
    out = []
    for t in templates:
        for r in answer(balanced_rows("Age", t), choose):
            out.append(dict(r, example_id=f"{t}-{len(out)}"))
    return out


def test_paired_bootstrap_of_identical_and_of_opposite_runs() -> None:
    gold, biased = _records(lambda i: "gold"), _records(lambda i: "biased")
    args = dict(cluster=BBQ.cluster, count=BBQ.count, names=BBQ.count_names, formulas=BBQ.formulas)
    same = paired_cluster_bootstrap(
        gold, gold, metrics=("acc", "s_dis"), resamples=200, seed=0, scope="x", **args
    )
    assert same["acc"] == {"diff": 0.0, "ci": [0.0, 0.0], "p_value": 1.0}
    apart = paired_cluster_bootstrap(
        gold, biased, metrics=("diff_bias_ambig", "acc_ambig"), resamples=200, seed=0, scope="x", **args
    )
    assert apart["diff_bias_ambig"] == {"diff": 1.0, "ci": [1.0, 1.0], "p_value": pytest.approx(2 / 201)}
    assert apart["acc_ambig"]["diff"] == -1.0


def test_one_template_gives_no_interval_and_no_p_value() -> None:
    """One cluster: every replicate repeats it, so [x, x] and p = 2 / (R + 1) would be made up."""
    gold, biased = _records(lambda i: "gold", "a"), _records(lambda i: "biased", "a")
    args = dict(cluster=BBQ.cluster, count=BBQ.count, names=BBQ.count_names, formulas=BBQ.formulas)
    apart = paired_cluster_bootstrap(
        gold, biased, metrics=("diff_bias_ambig",), resamples=200, seed=0, scope="x", **args
    )
    assert apart["diff_bias_ambig"] == {"diff": 1.0, "ci": None, "p_value": None}
    intervals = cluster_bootstrap(gold, resamples=200, seed=0, scope="x", **args)
    assert intervals["acc"] is None and intervals["option_share"] == [None, None, None]
    two = cluster_bootstrap(_records(lambda i: "gold", "ab"), resamples=200, seed=0, scope="x", **args)
    assert two["acc"] == [1.0, 1.0]  # two templates, both all right: a real (if narrow) interval


# ---- compare -------------------------------------------------------------------------------------


def _write_run(folder: Path, model: str, records: list[dict], **overrides) -> Path:
    folder.mkdir(parents=True)
    results = {
        "schema_version": 2,
        "kind": "bbq",
        "task": "qa",
        "model": {"name": model},
        "dataset": {"path": "build", "config": "lite", "manifest": {"sources_hash": "abc"}},
        "prompt": {"setting": "basic", "shots": 3},
        "scoring": {"method": "generate"},
    }
    results.update(_metrics_block(BBQ, records, 50, 0, "jbbq"))
    for key, value in overrides.items():
        results[key] = value
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (folder / "predictions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
    )
    return folder


def test_compare_writes_one_table_and_the_paired_tests(tmp_path: Path) -> None:
    good = _write_run(tmp_path / "good", "model-a", _records(lambda i: "gold"))
    bad = _write_run(tmp_path / "bad", "model-b", _records(lambda i: "biased" if i % 3 else "ooc"))
    result = CliRunner().invoke(
        app, ["compare", str(good), str(bad), "-o", str(tmp_path / "cmp"), "--bootstrap", "100"]
    )
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert [run["label"] for run in written["runs"]] == ["model-a", "model-b"]
    assert written["columns"][:3] == ["ooc_ratio", "acc_avg", "acc_ambig"]  # JBBQ Table 3 order
    (mc,) = written["tests"]["mcnemar"]
    assert mc["rows"] == 72 and mc["first_acc"] == 1.0
    assert mc["only_first_right"] == 72 - round(mc["second_acc"] * 72) and mc["only_second_right"] == 0
    assert mc["p_value"] < 1e-6
    boot = {t["metric"]: t for t in written["tests"]["bootstrap"]}
    assert boot["diff_bias_ambig"]["diff"] > 0 and boot["diff_bias_ambig"]["p_value"] == pytest.approx(
        2 / 101
    )
    rows = list(csv.reader(io.StringIO((tmp_path / "cmp" / "compare.csv").read_text(encoding="utf-8"))))
    assert rows[0][:5] == ["label", "model", "setting", "folder", "ooc_ratio"] and len(rows) == 3
    assert float(rows[1][rows[0].index("acc_avg")]) == 1.0
    markdown = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "| Model | OoC | Acc. Avg |" in markdown and "McNemar" in markdown
    assert (tmp_path / "cmp" / "charts" / "compare.png").read_bytes().startswith(b"\x89PNG")


def test_runs_on_different_rows_are_said_to_be(tmp_path: Path) -> None:
    whole = _write_run(tmp_path / "whole", "model-a", _records(lambda i: "gold"))
    part = _write_run(tmp_path / "part", "model-a", _records(lambda i: "gold", templates="abc"))
    result = CliRunner().invoke(app, ["compare", str(whole), str(part), "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    note = next(line for line in markdown.splitlines() if "The runs cover different rows" in line)
    assert "] 72, " in note and "] 36)" in note  # each run by its label, with its rows
    other = _write_run(tmp_path / "other", "model-b", _records(lambda i: "gold"))  # the same rows
    same = CliRunner().invoke(app, ["compare", str(whole), str(other), "-o", str(tmp_path / "same")])
    assert same.exit_code == 0, same.output
    assert "different rows" not in (tmp_path / "same" / "compare.md").read_text(encoding="utf-8")


def test_compare_writes_only_into_a_new_folder_or_an_earlier_comparison(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"))
    b = _write_run(tmp_path / "b", "m2", _records(lambda i: "biased"))

    def run(out: Path) -> tuple[int, str]:
        result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out), "--bootstrap", "20"])
        assert "Traceback" not in result.output
        return result.exit_code, result.output

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "compare.md").write_text("my notes\n", encoding="utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.json").write_text('{"mine": true}\n', encoding="utf-8")
    for folder, code_expected in ((notes, "EV101"), (mine, "EV101"), (b, "CL010")):
        # a user's files, and a compared run: none is a comparison (and an output is never an input)
        before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        code, output = run(folder)
        assert code == 2 and code_expected in output, output
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before
    afile = tmp_path / "afile"
    afile.write_text("keep\n", encoding="utf-8")
    code, output = run(afile)
    assert code == 2 and "EV100" in output and afile.read_text(encoding="utf-8") == "keep\n"
    out = tmp_path / "cmp"
    assert run(out)[0] == 0
    (out / "summary.json").write_text("{}", encoding="utf-8")  # as a sobaco comparison leaves
    code, output = run(out)
    assert code == 0, output
    assert sorted(p.name for p in out.iterdir()) == ["charts", "compare.csv", "compare.json", "compare.md"]
    assert not list(tmp_path.glob(".cmp.*"))
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (out / "compare.md").read_text(encoding="utf-8"))
    assert linked == ["charts/compare.png"] and (out / linked[0]).is_file()  # the chart, linked


def test_compare_refuses_other_data_and_other_protocols(tmp_path: Path) -> None:
    records = _records(lambda i: "gold")
    base = _write_run(tmp_path / "a", "m1", records)
    other_data = _write_run(
        tmp_path / "b",
        "m2",
        records,
        dataset={"path": "build", "config": "lite", "manifest": {"sources_hash": "zzz"}},
    )
    other_scoring = _write_run(tmp_path / "c", "m3", records, scoring={"method": "logprob"})
    no_protocol = _write_run(tmp_path / "d", "m4", records, protocol=None)
    for other, code in ((other_data, "EV212"), (other_scoring, "EV213"), (no_protocol, "EV213")):
        with pytest.raises(DiagnosticError) as error:
            compare([read_run(base), read_run(other)])
        assert [d.code for d in error.value.diagnostics] == [code]
        message = error.value.diagnostics[0].message  # each run named, in the order given
        assert message.index(str(base)) < message.index(str(other))
    result = CliRunner().invoke(app, ["compare", str(base), str(other_data), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "EV212" in result.output and not (tmp_path / "out").exists()


def test_runs_without_predictions_are_tabled_not_tested(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"))
    b = _write_run(tmp_path / "b", "m1", _records(lambda i: "unknown"))
    (b / "predictions.jsonl").unlink()
    result = compare([read_run(a), read_run(b)], resamples=50)
    assert result["tests"]["skipped"] == ["m1 (basic) [" + str(b) + "]"]
    assert result["tests"]["mcnemar"] == []


def test_jubaku_compare_runs_the_chi_square_over_all_runs(tmp_path: Path) -> None:
    from jbcompile.designs.jubaku.evaluate import JUBAKU

    from tests.eval.test_eval_metrics_papers import _cases

    runs = []
    for name, right in (("gpt-4o", 177), ("claude", 214), ("gpt-5.2", 212)):
        records = _cases(0)
        for record in records[right:]:
            record["pred"] = 1 - record["label"]
        folder = tmp_path / name
        folder.mkdir()
        results = {"kind": "jubaku", "task": "qa", "model": {"name": name}, "dataset": {"config": "jubaku"}}
        results.update(_metrics_block(JUBAKU, records, 50, 0, "jubaku"))
        (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
        (folder / "predictions.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8"
        )
        runs.append(read_run(folder))
    result = compare(runs, resamples=50)
    pairs = {(t["first"], t["second"]): t for t in result["tests"]["chi_square"]}
    assert pairs[("gpt-4o", "claude")]["p_value"] < 0.01 and pairs[("gpt-4o", "gpt-5.2")]["p_value"] < 0.01
    assert pairs[("claude", "gpt-5.2")]["p_value"] > 0.05
    assert result["tests"]["chi_square_all"]["dof"] == 2
    assert result["columns"] == ["acc", "fluctuation_rate", "fluctuation_rate_valid", "n_invalid"]
    write_comparison(tmp_path / "out", result)
    assert "Chi-square" in (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")


def test_sobaco_compare_pools_the_correlation_over_models(tmp_path: Path) -> None:
    from tests.designs.sobaco.test_sobaco_eval_metrics import _run

    # two models × basic + four debiasing methods; change rates rise together in both
    runs = []
    for model, shift in (("m1", 0.0), ("m2", 0.01)):
        for setting, bias, culture in (
            ("basic-1", 0.5, 0.5),
            ("debias-1", 0.3 + shift, 0.45),
            ("cot-j-1", 0.45, 0.49 - shift),
            ("cot-e-1", 0.2, 0.35),
            ("cot-r-1", 0.4, 0.47),
        ):
            folder = tmp_path / model / setting
            folder.mkdir(parents=True)
            (folder / "results.json").write_text(
                json.dumps(_run(setting, bias, culture, model)), encoding="utf-8"
            )
            runs.append(read_run(folder))
    result = compare(runs, resamples=20)
    section = result["sobaco"]
    assert set(section["models"]) == {"m1", "m2"}
    pooled = section["pooled_correlation"]
    assert len(pooled["points"]) == 8 and pooled["spearman"] > 0.9
    assert pooled["p_value"] is not None and pooled["p_value"] < 0.01
    write_comparison(tmp_path / "out", result)
    markdown = (tmp_path / "out" / "compare.md").read_text("utf-8")
    assert "All models pooled (8 model × method points)" in markdown
    # m1: basic 0.5 / 0.5, debias 0.3 / 0.45: change rates −40 % and −10 %
    assert "| CR debias (bias / culture, %) |" in markdown and "| -40.0 ‡1 / -10.0 ‡1 |" in markdown
    # the basic scores print as a model's summary.md prints them: mean ± std over wordings
    from jbcompile.designs.sobaco.summary import summary_markdown

    m1_row = next(line for line in markdown.splitlines() if line.startswith("| m1 |"))
    # (one wording each, not the paper's three: marked ‡1, with the note)
    assert m1_row.split(" | ")[1:3] == ["0.500 ± — ‡1", "0.500 ± — ‡1"]
    assert "| basic | 0.500 ± — ‡1 | 0.500 ± — ‡1 |" in summary_markdown(section["models"]["m1"])
    assert "‡n the mean (and std) is over n wordings" in markdown
    assert not (tmp_path / "out" / "summary.json").exists()  # per-model summaries are in compare.json


# ---- end to end on the tiny model ----------------------------------------------------------------


def test_eval_with_a_protocol_then_compare(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    common = ["--model", str(tiny_model), "--dataset", str(build_dir), "--quiet", "--bootstrap", "50",
              "--batch-size", "8", "--limit", "30", "--max-new-tokens", "4"]  # fmt: skip
    first = tmp_path / "jbbq"
    result = CliRunner().invoke(app, ["eval", *common, "--protocol", "jbbq", "--out", str(first)])
    assert result.exit_code == 0, result.output
    results = json.loads((first / "results.json").read_text(encoding="utf-8"))
    assert results["schema_version"] == 2
    assert results["protocol"]["name"] == "jbbq" and results["protocol"]["headline"][0] == "ooc_ratio"
    assert results["scoring"]["method"] == "generate" and results["prompt"]["shots"] == 3
    assert results["scoring"]["max_new_tokens"] == 4  # an option the paper does not fix stays the user's
    report = (first / "report.md").read_text(encoding="utf-8")
    assert report.index("| Model | OoC | Acc. Avg |") < report.index("## Overall")
    # the summary printed on the terminal leads with the paper's columns, under their headings
    assert result.output.index("OoC ") < result.output.index("Acc. Avg ")
    # a copy of the run folder is the same run: given twice (EV215), whatever its path
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    compared = CliRunner().invoke(app, ["compare", str(first), str(copy), "-o", str(tmp_path / "twice")])
    assert compared.exit_code == 2 and "EV215" in compared.output and "a copy of" in compared.output
    assert not (tmp_path / "twice").exists()
    warning = tmp_path / "warning"  # the same model under the paper's other prompt
    result = CliRunner().invoke(
        app, ["eval", *common, "--protocol", "jbbq", "--setting", "warning", "--out", str(warning)]
    )
    assert result.exit_code == 0, result.output
    compared = CliRunner().invoke(app, ["compare", str(first), str(warning), "-o", str(tmp_path / "cmp")])
    assert compared.exit_code == 0, compared.output
    markdown = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "Columns: OoC = `ooc_ratio`, Acc. Avg = `acc_avg`" in markdown  # the paper's headings, keyed
    assert "Differences are fractions, as in `results.json`" in markdown  # the tables print percents
    # Table 12 is the paper's for the basic 3-shot run only: the report's rule, for the runs compared
    twelve = next(line for line in markdown.splitlines() if "Table 12" in line)
    assert "not in the paper for 1 of these 2 runs" in twelve, twelve
    written = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    (mc,) = written["tests"]["mcnemar"]
    assert mc["rows"] == results["metrics"]["overall"]["n"], (
        mc,
        results["dataset"],
        results["metrics"]["overall"]["n"],
    )
    plain = tmp_path / "plain"
    result = CliRunner().invoke(app, ["eval", *common, "--out", str(plain)])
    assert result.exit_code == 0, result.output
    refused = CliRunner().invoke(app, ["compare", str(first), str(plain), "-o", str(tmp_path / "no")])
    assert refused.exit_code == 2 and "EV213" in refused.output


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--seed", "-1", "--seed must be 0 or more"),
        ("--bootstrap", "-1", "--bootstrap must be 0 or more"),
        ("--bootstrap", "100001", "--bootstrap must be at most 100,000"),  # score's and eval's cap
    ],
)
def test_compare_refuses_the_seeds_and_resamples_score_refuses(
    tmp_path: Path, option: str, value: str, says: str
) -> None:
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"))
    b = _write_run(tmp_path / "b", "m2", _records(lambda i: "biased"))
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out), option, value])
    assert result.exit_code == 2 and "EV103" in result.output and says in result.output
    assert "Traceback" not in result.output and not out.exists()
    with pytest.raises(DiagnosticError) as error:  # the library refuses them too, by the same rule
        compare([read_run(a), read_run(b)], *((-1, 0) if option == "--bootstrap" else (10, -1)))
    assert [d.code for d in error.value.diagnostics] == ["EV103"]


def test_compare_refuses_a_run_given_twice(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"))
    (tmp_path / "link").symlink_to(a)
    for again in (a, tmp_path / "link", tmp_path / "." / "a"):
        out = tmp_path / "cmp"
        result = CliRunner().invoke(app, ["compare", str(a), str(again), "-o", str(out)])
        assert result.exit_code == 2 and "EV215" in result.output and "given twice" in result.output
        assert not out.exists()


def test_compare_refuses_a_run_whose_predictions_are_not_its_results(tmp_path: Path) -> None:
    records = _records(lambda i: "biased" if i % 3 else "gold")
    a = _write_run(tmp_path / "a", "m1", records)
    b = _write_run(tmp_path / "b", "m2", _records(lambda i: "biased"))
    edited = [dict(r, pred=r["gold"]) for r in records]  # predictions.jsonl rewritten: every answer right
    (a / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in edited), encoding="utf-8")
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out)])
    assert result.exit_code == 2 and "EV216" in result.output and str(a) in result.output
    assert "acc" in result.output and "1.0000" in result.output and not out.exists()
    (a / "predictions.jsonl").write_text(  # a row short: the counts disagree
        "".join(json.dumps(r) + "\n" for r in records[:-1]), encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out)])
    assert result.exit_code == 2 and "EV216" in result.output and "counts 72 rows" in result.output


def test_a_copy_of_a_run_is_the_run_given_twice(tmp_path: Path) -> None:
    """Runs carry no name of their own: a copy of a run folder elsewhere is known by its content (its
    results.json and predictions), so it is the same run given twice (EV215), not a second run whose
    p = 1 would read as a finding. Two runs with the same settings and other predictions are two."""
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"))
    copy = shutil.copytree(a, tmp_path / "elsewhere" / "a-copy")
    with pytest.raises(DiagnosticError) as error:
        compare([read_run(a), read_run(copy)])
    (problem,) = error.value.diagnostics
    assert problem.code == "EV215" and f"a copy of {a}" in problem.message
    # same settings, other predictions: compared
    other = _write_run(tmp_path / "b", "m1", _records(lambda i: "biased" if i % 2 else "gold"))
    result = compare([read_run(a), read_run(other)], resamples=20)
    first, second = result["runs"]
    assert first["identity"] != second["identity"] and len(first["identity"]) == 64
    # the identity is the content's: the same for the copy, and the same on every reading
    assert (
        compare([read_run(copy), read_run(other)], resamples=20)["runs"][0]["identity"] == first["identity"]
    )


def test_compare_heads_table_12_by_the_reports_rule(tmp_path: Path) -> None:
    """JBBQ's Table 12 is the paper's for the basic 3-shot runs only: compare heads it by the same rule as
    a run's report (``Table.heading_for_runs``), for the runs it sets side by side."""
    from jbcompile.evaluate.compare.render import comparison_markdown

    def twelve(*settings: str) -> str:
        runs = [
            _write_run(
                tmp_path / f"{len(list(tmp_path.iterdir()))}",
                f"m{k}",
                _records(lambda i: "gold"),
                prompt={"setting": setting, "shots": 3},
            )  # fmt: skip
            for k, setting in enumerate(settings)
        ]
        markdown = comparison_markdown(compare([read_run(run) for run in runs], resamples=0))
        return next(line for line in markdown.splitlines() if "Table 12" in line)

    assert twelve("basic", "basic") == (
        "### JBBQ Table 12 layout (BBQ metrics, Appendix C), the paper's for setting `basic` with 3 shots"
    )
    assert "not in the paper for 1 of these 2 runs" in twelve("basic", "warning")
    assert "not in the paper for these runs" in twelve("warning", "cot")


def test_compare_marks_a_run_whose_figures_carry_a_warning(tmp_path: Path) -> None:
    """A run's results.json keeps the warnings said on the terminal (EV054 …); compare.md marks the run
    in its table and says them in a footnote, compare.json holds them."""
    warned = {"code": "EV054", "message": "72 of the 72 replies stopped at the limit", "hint": "raise it"}
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"), warnings=[warned])
    b = _write_run(tmp_path / "b", "m2", _records(lambda i: "biased"))
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    markdown = (out / "compare.md").read_text(encoding="utf-8")
    assert "| m1 † |" in markdown and "| m2 |" in markdown
    assert "- m1: `EV054` 72 of the 72 replies stopped at the limit" in markdown
    runs = json.loads((out / "compare.json").read_text(encoding="utf-8"))["runs"]
    assert runs[0]["warnings"] == [{"code": "EV054", "message": warned["message"]}]
    assert runs[1]["warnings"] == []


def test_a_warning_read_back_cannot_forge_lines(tmp_path: Path) -> None:
    """A results.json's warning is text from a file: its line breaks and markdown are written out where
    it is shown — the terminal (`score` carries it), report.md's Warnings section and compare.md's
    footnote —, and its code must be a code."""
    from jbcompile.diagnostics import render_text
    from jbcompile.evaluate.report import warning_lines
    from jbcompile.evaluate.results import Results, RunWarning
    from pydantic import ValidationError

    forged = "cut\n## Injected heading\n| a | b |"
    warned = {"code": "EV054", "message": forged, "hint": "raise it\n# also"}
    a = _write_run(tmp_path / "a", "m1", _records(lambda i: "gold"), warnings=[warned])
    b = _write_run(tmp_path / "b", "m2", _records(lambda i: "biased"))

    def forges(text: str) -> bool:
        return any(
            line.startswith(("#", "|")) and "Injected" in line or line == "| a | b |"
            for line in text.splitlines()
        ) or any(line.lstrip().startswith("# also") for line in text.splitlines())

    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(out), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    markdown = (out / "compare.md").read_text(encoding="utf-8")
    assert not forges(markdown) and r"cut<U+000A>\#\# Injected heading<U+000A>\| a \| b \|" in markdown
    report = "\n".join(warning_lines(Results.model_validate(json.loads((a / "results.json").read_text()))))
    assert not forges(report) and "Injected heading" in report
    # the terminal: `score` of a run's predictions says the run's warnings again, one line each
    said = render_text(RunWarning.model_validate(warned).said())
    assert "\n" not in said and "cut<U+000A>## Injected heading" in said
    for code in ("EV054\n# x", "XX", "EV05"):
        with pytest.raises(ValidationError):
            RunWarning(code=code, message="m")
