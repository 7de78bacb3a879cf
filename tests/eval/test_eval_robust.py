"""`eval` and `score` under bad input: a user's files are never overwritten, a damaged predictions log
loses nothing, every option is checked, and every problem is a coded diagnostic with exit code 2."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.designs.bbq.evaluate import BBQ
from typer.testing import CliRunner

from tests.eval.test_eval_score import bbq_format

HUB_LIKE_MODEL = "nobody/no-model"  # a Hub id: nothing is downloaded, the checks stop the run first


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def our_predictions(rows: list[dict]) -> list[dict]:
    """Records as `jbcompile eval` writes them: the row's metric fields, gold and pred (the gold here)."""
    return [dict(BBQ.base_record(row, "qa"), pred=row["label"]) for row in rows]


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def score(path: Path, out: Path, *extra: str) -> tuple[int, str]:
    return run_cli("score", str(path), "--out", str(out), "--bootstrap", "20", *extra)


# ---- the output folder --------------------------------------------------------------------------


def test_score_never_overwrites_a_folder_that_is_not_a_run(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))
    site = tmp_path / "site"
    site.mkdir()
    (site / "report.md").write_text("my own notes\n", encoding="utf-8")
    (site / "results.json").write_text('{"mine": true}\n', encoding="utf-8")  # a name alone is no marker
    code, output = score(predictions, site)
    assert code == 2 and "EV101" in output
    assert (site / "report.md").read_text(encoding="utf-8") == "my own notes\n"
    assert sorted(p.name for p in site.iterdir()) == ["report.md", "results.json"]


def test_a_run_folder_is_recognized_by_its_content(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))
    out = tmp_path / "run"
    assert score(predictions, out)[0] == 0
    (out / "notes.txt").write_text("kept\n", encoding="utf-8")
    code, output = score(predictions, out)  # scoring again into our own folder is fine
    assert code == 0, output
    assert (out / "notes.txt").read_text(encoding="utf-8") == "kept\n"


def test_out_naming_a_file_is_refused(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))
    target = tmp_path / "a-file"
    target.write_text("keep me\n", encoding="utf-8")
    code, output = score(predictions, target)
    assert code == 2 and "EV100" in output
    assert target.read_text(encoding="utf-8") == "keep me\n"
    code, output = run_cli(
        "eval", "--model", HUB_LIKE_MODEL, "--dataset", str(predictions), "--out", str(target)
    )
    assert code == 2 and "EV100" in output


def test_eval_never_writes_into_a_users_folder(build_dir: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "report.md").write_text("mine\n", encoding="utf-8")
    code, output = run_cli("eval", "--model", HUB_LIKE_MODEL, "--dataset", str(build_dir), "--out", str(site))
    assert code == 2 and "EV101" in output
    code, output = run_cli(
        "eval", "--model", HUB_LIKE_MODEL, "--dataset", str(build_dir), "--out", str(site), "--overwrite"
    )
    assert code == 2 and "EV101" in output  # --overwrite discards an earlier run, never a user's files
    assert [p.name for p in site.iterdir()] == ["report.md"]


def test_score_never_replaces_another_run_unasked(
    lite_rows: list[dict], build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_lines(tmp_path / "a" / "predictions.jsonl", our_predictions(lite_rows))
    other = [dict(r, pred=(r["pred"] + 1) % 3) for r in our_predictions(lite_rows)]
    second = write_lines(tmp_path / "b" / "predictions.jsonl", other)
    assert run_cli("score", str(first), "--bootstrap", "20")[0] == 0
    folder = tmp_path / "runs" / "score-predictions"  # the default folder: the file's stem
    kept = (folder / "results.json").read_bytes()
    (folder / "charts" / "old-chart.png").write_bytes(b"stale")
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    code, output = run_cli("score", str(second), "--bootstrap", "20")  # the same default folder
    assert code == 2 and "EV007" in output and "another file" in output
    assert (folder / "results.json").read_bytes() == kept
    code, output = run_cli("score", str(second), "--bootstrap", "20", "--overwrite")
    assert code == 0, output
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert results["source"]["predictions"] == str(second)
    assert not (folder / "charts" / "old-chart.png").exists()  # charts/ holds this run's charts only
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    # an eval run's folder, and eval into a score folder
    run = tmp_path / "eval-run"
    run.mkdir()
    settings = {"model": "m", "dataset": "d", "config": "lite", "options": {}, "template_sha256": "x"}
    (run / "run.json").write_text(json.dumps(settings), encoding="utf-8")
    (run / "predictions.jsonl").write_text("", encoding="utf-8")
    code, output = score(first, run)
    assert code == 2 and "EV007" in output and "jbcompile eval" in output
    assert sorted(p.name for p in run.iterdir()) == ["predictions.jsonl", "run.json"]
    code, output = run_cli("eval", "-m", HUB_LIKE_MODEL, "--dataset", str(build_dir), "--out", str(folder))
    assert code == 2 and "EV007" in output and "jbcompile score" in output
    (run / "requests.jsonl").write_text('{"cached": 1}\n', encoding="utf-8")  # eval's own files
    shutil.copytree(run, run / "sample-1", ignore=shutil.ignore_patterns("sample-*"))
    (run / "notes.txt").write_text("mine\n", encoding="utf-8")  # the user's
    code, output = score(first, run, "--overwrite")  # that eval run is discarded whole
    assert code == 0, output
    assert sorted(p.name for p in run.iterdir()) == [
        "charts",
        "notes.txt",
        "predictions.jsonl",
        "report.md",
        "results.json",
    ]
    scored = (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines()  # score's rows, not eval's
    assert len(scored) == len(lite_rows)


def test_score_lists_only_the_files_it_writes(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))
    out = tmp_path / "out"
    code, output = score(predictions, out)
    assert code == 0, output
    wrote = next(line for line in output.splitlines() if line.startswith("wrote "))
    listed = sorted(Path(part).name for part in wrote.removeprefix("wrote ").split(", "))
    assert listed == sorted(path.name for path in out.iterdir())  # what it lists, and nothing else
    assert listed == ["charts", "predictions.jsonl", "report.md", "results.json"]


# ---- score's input -------------------------------------------------------------------------------


def test_a_pred_outside_the_options_is_an_error(lite_rows: list[dict], tmp_path: Path) -> None:
    for bad in (7, -1, True, "1", 1.5):
        records = our_predictions(lite_rows)
        records[3]["pred"] = bad
        code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
        assert code == 2 and "EV120" in output and "p.jsonl:4" in output, (bad, output)
    records = our_predictions(lite_rows)
    records[0]["pred"] = None  # null is out-of-choice: valid
    assert score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")[0] == 0


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_or_infinity_in_a_row_is_an_error_not_copied(
    lite_rows: list[dict], tmp_path: Path, bad: float
) -> None:
    records = our_predictions(lite_rows)
    records[4]["option_logprobs"] = [-0.5, bad, -2.0]  # json.dumps writes NaN / Infinity, which is no JSON
    out = tmp_path / "out"
    code, output = score(write_lines(tmp_path / "p.jsonl", records), out)
    assert code == 2 and "EV129" in output and "p.jsonl:5" in output and "option_logprobs[1]" in output
    assert not out.exists()
    rows = bbq_format(lite_rows, lambda i, row: row["label"])
    rows[2]["confidence"] = bad  # another harness's row: the same rule
    code, output = score(write_lines(tmp_path / "f.jsonl", rows), out, "--prediction-field", "prediction")
    assert code == 2 and "EV129" in output and "f.jsonl:3" in output and "confidence" in output
    assert not out.exists()


def test_no_nan_reaches_a_json_file_written() -> None:
    from jbcompile.evaluate import predictions as files

    for write in (
        files.dump_json,
        lambda value: files.json_lines([value]),
        lambda v: files.records_text([v]),
    ):
        with pytest.raises(ValueError):
            write({"option_logprobs": [float("nan")]})


def test_duplicate_example_ids_are_an_error_not_last_wins(
    lite_rows: list[dict], build_dir: Path, tmp_path: Path
) -> None:
    records = our_predictions(lite_rows)
    records.append(dict(records[0], pred=(records[0]["pred"] + 1) % 3))
    code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
    assert code == 2 and "EV121" in output and records[0]["example_id"] in output
    assert f"p.jsonl:{len(records)}" in output
    foreign = [{"example_id": r["example_id"], "answer": r["label"]} for r in [*lite_rows, lite_rows[0]]]
    path = write_lines(tmp_path / "thin.jsonl", foreign)
    code, output = score(path, tmp_path / "out2", "--prediction-field", "answer", "--dataset", str(build_dir))
    assert code == 2 and "EV121" in output


def test_a_missing_category_is_an_error(lite_rows: list[dict], tmp_path: Path) -> None:
    records = our_predictions(lite_rows)
    del records[2]["category"]
    code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
    assert code == 2 and "EV122" in output and "p.jsonl:3" in output
    plain = [dict(row, prediction=row["label"]) for row in lite_rows]
    plain[1]["category"] = None
    code, output = score(
        write_lines(tmp_path / "f.jsonl", plain), tmp_path / "out2", "--prediction-field", "prediction"
    )
    assert code == 2 and "EV122" in output and "f.jsonl:2" in output
    results = tmp_path / "out2" / "results.json"
    assert not results.exists()  # never a category named "None"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--kind", "jubaku"], "EV107"),
        (["--kind", "nope"], "EV106"),
        (["--task", "nope"], "EV105"),
        (["--bootstrap", "-5"], "EV103"),
        (["--bootstrap", "100000000"], "EV103"),
        (["--seed", "-1"], "EV103"),
        (["--revision", "v1"], "EV109"),
    ],
)
def test_every_score_option_is_checked(
    lite_rows: list[dict], tmp_path: Path, args: list[str], code: str
) -> None:
    path = write_lines(tmp_path / "p.jsonl", [dict(r, prediction=r["label"]) for r in lite_rows])
    exit_code, output = score(path, tmp_path / "out", "--prediction-field", "prediction", *args)
    assert exit_code == 2 and code in output
    assert not (tmp_path / "out").exists()


def test_the_task_of_our_file_must_be_a_task_of_its_kind(lite_rows: list[dict], tmp_path: Path) -> None:
    records = [dict(r, task="nope") for r in our_predictions(lite_rows)]
    code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
    assert code == 2 and "EV105" in output


@pytest.mark.parametrize(
    ("content", "code", "where"),
    [
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "EV111", ":1"),
        (b'{"example_id": "a"}\n' + b"\x00\x01\xff\xfe binary \x89PNG\n", "EV112", ":2:"),
        (b'{"example_id": "a"}\n[1, 2]\n', "EV061", ":2"),
        (b'{"example_id": "a"}\n{"example_id": "b", \n', "EV061", ":2"),
        (b"", "EV062", ""),
        (b'{\n  "score": 0.5,\n  "rows": []\n}\n', "EV114", ":1"),
    ],
)
def test_unreadable_files_are_positioned_diagnostics(
    tmp_path: Path, content: bytes, code: str, where: str
) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(content)
    exit_code, output = score(path, tmp_path / "out", "--prediction-field", "p")
    assert exit_code == 2 and code in output and f"p.jsonl{where}" in output, output


def test_a_folder_given_as_the_predictions_file(tmp_path: Path) -> None:
    code, output = score(tmp_path, tmp_path / "out")
    assert code == 2 and "EV116" in output


# ---- eval's options ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--limit", "-5"], "EV103"),
        (["--limit", "0"], "EV103"),
        (["--batch-size", "0"], "EV103"),
        (["--max-new-tokens", "0"], "EV103"),
        (["--bootstrap", "-5"], "EV103"),
        (["--revision", "v1.0"], "EV104"),
        (["--setting", "basic-1"], "EV021"),
    ],
)
def test_every_eval_option_is_checked(build_dir: Path, tmp_path: Path, args: list[str], code: str) -> None:
    out = tmp_path / "never"
    exit_code, output = run_cli(
        "eval", "--model", HUB_LIKE_MODEL, "--dataset", str(build_dir), "--out", str(out), *args
    )
    assert exit_code == 2 and code in output
    assert not out.exists()


def test_a_missing_local_model_folder_is_not_found(build_dir: Path, tmp_path: Path) -> None:
    for model in (str(tmp_path / "models" / "gone"), "./no-such-model", "models/org/name"):
        code, output = run_cli(
            "eval", "--model", model, "--dataset", str(build_dir), "--out", str(tmp_path / "o")
        )
        assert code == 2 and "EV108" in output and "model folder not found" in output
        assert "Hub" not in output.split("EV108")[1].split("\n")[0].replace("Hub id such as", "")


def test_a_missing_local_dataset_is_not_found_rather_than_looked_for_on_the_hub(
    tiny_model: Path, tmp_path: Path
) -> None:
    for dataset in (str(tmp_path / "build_typo"), "./build_typo", "data/org/name"):
        code, output = run_cli(
            "eval", "--model", str(tiny_model), "--dataset", dataset, "--out", str(tmp_path / "o")
        )
        assert code == 2 and "EV003" in output and "dataset folder or file not found" in output
        assert "Hub (" not in output and not (tmp_path / "o").exists()


def test_default_setting_and_folder_follow_the_kind_and_chat() -> None:
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.registered import get_eval_kind
    from jbcompile.evaluate.requests import EvalRequest, with_defaults

    request = EvalRequest(model="org/model", dataset="d", config="sobaco", options=EvalOptions(setting=None))
    sobaco = with_defaults(request, get_eval_kind("sobaco"), None)
    assert sobaco.options.setting == "basic-1"
    assert get_eval_kind("sobaco").check_options(sobaco.options) == []
    assert with_defaults(request, get_eval_kind("bbq"), None).options.setting == "basic"
    assert with_defaults(request, get_eval_kind("jubaku"), None).options.setting == "basic"
    chat = EvalRequest(model="org/model", dataset="d", options=EvalOptions(setting="basic", chat=True))
    assert with_defaults(chat, get_eval_kind("bbq"), None).out == Path("runs/org__model-lite-basic-chat")
    plain = EvalRequest(model="org/model", dataset="d", options=EvalOptions(setting="basic"))
    assert with_defaults(plain, get_eval_kind("bbq"), None).out == Path("runs/org__model-lite-basic")


def test_help_lists_every_kinds_settings_and_configs() -> None:
    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "1000"})
    text = " ".join(result.output.replace("│", " ").split())
    for word in ("lite", "full", "sobaco_dummy", "cot-r", "debias", "warning", "cot", "detect"):
        assert word in text, word
    for kind in ("bbq:", "sobaco:", "jubaku:"):
        assert text.count(kind) >= 3, kind  # its configs, tasks and settings


# ---- resuming from a damaged predictions log -------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tiny_model: Path, build_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("short") / "run"
    code, output = run_cli(*_eval_args(tiny_model, build_dir, out))
    assert code == 0, output
    return out


@pytest.fixture
def short_run(finished_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished_run, tmp_path / "run"))


def _eval_args(model: Path, build: Path, out: Path) -> list[str]:
    return ["eval", "--model", str(model), "--dataset", str(build), "--out", str(out), "--quiet",
            "--bootstrap", "20", "--batch-size", "4", "--limit", "8", "--shots", "0"]  # fmt: skip


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (b"{garbled\n", "EV061"),
        (b"[1, 2, 3]\n", "EV061"),
        (b'{"pred": 1, "gold": 1}\n', "EV115"),
        (b'{"example_id": "\xff\xfe"}\n', "EV112"),
    ],
)
def test_a_damaged_log_loses_no_prediction(
    short_run: Path, tiny_model: Path, build_dir: Path, damage: bytes, code: str, monkeypatch
) -> None:
    from jbcompile.evaluate import backends

    log = short_run / "predictions.jsonl"
    good = log.read_bytes().splitlines(keepends=True)
    damaged = b"".join([*good[:3], damage, *good[3:6]])  # two rows lost to the crash, one line garbled
    log.write_bytes(damaged)
    exit_code, output = run_cli(*_eval_args(tiny_model, build_dir, short_run))
    assert exit_code == 2 and code in output and "predictions.jsonl:4" in output
    assert "6 readable predictions are kept" in output or code == "EV115"
    assert log.read_bytes() == damaged  # nothing thrown away, nothing rewritten
    log.write_bytes(b"".join([*good[:3], *good[3:6]]))  # the user deletes the bad line
    computed = []
    real = backends.TransformersBackend.score

    def counting(self, sequences, keys, label_ids):
        computed.append(len(sequences))
        return real(self, sequences, keys, label_ids)

    monkeypatch.setattr(backends.TransformersBackend, "score", counting)
    exit_code, output = run_cli(*_eval_args(tiny_model, build_dir, short_run))
    assert exit_code == 0, output
    assert sum(computed) == 2  # only the two lost rows are redone
    resumed = [json.loads(line) for line in log.read_bytes().splitlines()]
    original = [json.loads(line) for line in good]
    assert [r["example_id"] for r in resumed] == [r["example_id"] for r in original]
    assert [r["pred"] for r in resumed] == [r["pred"] for r in original]
    for new, old in zip(resumed, original, strict=True):  # a batch of other rows: last float digits
        assert new["option_logprobs"] == pytest.approx(old["option_logprobs"], abs=1e-4)


# ---- charts in Japanese ----------------------------------------------------------------------------


def test_japanese_category_names_render_with_a_japanese_font(tmp_path: Path) -> None:
    from jbcompile.evaluate.report import ChartSpec, draw_charts, japanese_font
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    family = japanese_font()
    assert family is not None, "the japanize-matplotlib dependency is missing"
    names = ["年齢", "障害の有無", "性自認・ジェンダー", "外見（体型）"]
    metrics = {"acc": 0.5}
    results = {"metrics": {"overall": metrics, "by_category": {name: metrics for name in names}}}
    chart = ChartSpec("acc.png", "カテゴリ別の正答率", ("acc",), "正答率")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (written,) = draw_charts(tmp_path, results, [chart])
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert missing == []
    assert written.stat().st_size > 0
    font = FT2Font(
        font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    )
    charmap = font.get_charmap()
    assert all(ord(char) in charmap for char in "".join(names) + chart.title + chart.ylabel)


def test_a_folder_that_cannot_be_written_is_a_diagnostic(lite_rows: list[dict], tmp_path: Path) -> None:
    predictions = write_lines(tmp_path / "p.jsonl", our_predictions(lite_rows))
    code, output = score(predictions, Path("/proc/jbcompile-cannot-be-made/out"))  # even root cannot
    assert code == 2 and "EV102" in output


def test_a_file_mixing_kinds_or_tasks_is_an_error(lite_rows: list[dict], tmp_path: Path) -> None:
    records = our_predictions(lite_rows)
    records[4]["task"] = "detect"
    code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
    assert code == 2 and "EV127" in output and "p.jsonl:5" in output
    records = our_predictions(lite_rows)
    del records[6]["context_condition"]  # no longer a bbq record
    code, output = score(write_lines(tmp_path / "p.jsonl", records), tmp_path / "out")
    assert code == 2 and "EV126" in output and "p.jsonl:7" in output


def test_detection_with_no_derivable_row_is_an_error(lite_rows: list[dict], tmp_path: Path) -> None:
    plain = bbq_format(lite_rows[:3], lambda index, row: 0)
    for row in plain:
        row["additional_metadata"] = dict(row["additional_metadata"], stereotyped_groups=["nobody"])
    path = write_lines(tmp_path / "f.jsonl", plain)
    code, output = score(path, tmp_path / "out", "--prediction-field", "prediction", "--task", "detect")
    assert code == 2 and "EV128" in output


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_a_detection_run_reports_accuracy_and_no_bias_scores(
    lite_rows: list[dict], tmp_path: Path, task: str
) -> None:
    """In `detect` the gold is the biased option: answering it is right, so diff-bias and the s scores
    of answering say nothing there, and JBBQ reports accuracy alone (Tables 7, 18, 19)."""
    path = write_lines(tmp_path / "f.jsonl", bbq_format(lite_rows, lambda index, row: index % 3))
    out = tmp_path / "out"
    code, output = score(path, out, "--prediction-field", "prediction", "--task", task, "--bootstrap", "0")
    assert code == 0, output
    header = next(
        line for line in (out / "report.md").read_text(encoding="utf-8").splitlines() if "| category" in line
    )
    charts = {p.name for p in (out / "charts").iterdir()}
    bias = ("diff_bias_ambig", "s_dis", "s_amb_jbbq")
    if task == "detect":
        assert "acc_ambig" in header and not any(name in header for name in bias), header
        assert "diff_bias.png" not in charts and "accuracy.png" in charts
        assert "diff_bias_ambig" not in output  # the console's summary too
    else:
        assert all(name in header for name in bias) and "diff_bias.png" in charts


def test_sampled_runs_name_the_folders_they_wrote(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "k"
    code, output = run_cli(
        "eval", "--model", str(tiny_model), "--dataset", str(build_dir), "--out", str(out), "--limit", "6",
        "--scoring", "generate", "--max-new-tokens", "2", "--temperature", "0.8", "--samples", "2",
        "--bootstrap", "10",
    )  # fmt: skip
    assert code == 0, output
    named = output.split("wrote ", 1)[1].split()
    assert named and all(Path(name.rstrip(",")).exists() for name in named)
    assert {Path(name.rstrip(",")).name for name in named} == {"results.json", "sample-1", "sample-2"}


def test_sampled_runs_keep_out_of_a_users_folder_and_rerun_in_their_own(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    """--samples writes results.json and sample-k/ into --out: a folder of the user's is refused (EV101)
    as a single run's is, and the same command run again in its own folder is accepted."""
    args = [
        "eval", "--model", str(tiny_model), "--dataset", str(build_dir), "--limit", "4", "--scoring",
        "generate", "--max-new-tokens", "2", "--temperature", "0.8", "--samples", "2", "--bootstrap", "0",
    ]  # fmt: skip
    theirs = tmp_path / "mine"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    code, output = run_cli(*args, "--out", str(theirs))
    assert code == 2 and "EV101" in output, output
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    ours = tmp_path / "k"
    assert run_cli(*args, "--out", str(ours))[0] == 0
    code, output = run_cli(*args, "--out", str(ours))
    assert code == 0, output


def test_a_protocol_for_another_kind_is_the_only_complaint(tiny_model: Path, tmp_path: Path) -> None:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    build = tmp_path / "build"  # the bundled benchmark: its sobaco config has no setting `basic`
    write_build(
        compile_project(load_project(Path(__file__).resolve().parents[2] / "sources"), checks=False), build
    )
    code, output = run_cli(
        "eval", "--model", str(tiny_model), "--dataset", str(build), "--config", "sobaco",
        "--protocol", "jbbq", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert code == 2 and "EV202" in output and "EV021" not in output


def test_a_run_with_other_settings_shows_each_difference_whole() -> None:
    """EV007's list of what differs: two long hashes keep their quotes and both ends (where they
    differ), short values stay whole, an unchanged setting is not listed."""
    from jbcompile.evaluate.resume import settings_differ

    old_hash, new_hash = "21619fb1" + "0" * 48 + "a590776b", "21619fb1" + "0" * 48 + "0f140d08"
    there = {"template_sha256": old_hash, "limit": 200, "options": {"setting": "basic", "seed": 0}}
    here = {"template_sha256": new_hash, "limit": 3, "options": {"setting": "warning", "seed": 0}}
    said = settings_differ(there, here)
    assert said[1:] == ["limit: 200 → 3", 'options.setting: "basic" → "warning"'], said
    name, _, change = said[0].partition(": ")
    old, arrow, new = change.partition(" → ")
    assert name == "template_sha256" and arrow and old != new
    for shown, value in ((old, old_hash), (new, new_hash)):
        assert shown.startswith('"21619fb1') and shown.endswith(f'{value[-8:]}"') and "…" in shown, said
        assert len(shown) < len(value)
