"""`jbcompile score` on BBQ-format JSONL from another harness: labels derived from tags, never guessed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.bbq.release import derive_labels, second_attributes, tag_names_group
from typer.testing import CliRunner

OUR_COLUMNS = ("target_label", "unknown_label", "biased_label", "context_bias", "template_id")


def bbq_format(rows: list[dict], predict) -> list[dict]:
    """Rows as BBQ's JSONL has them (none of our label columns) plus a ``prediction`` column."""
    out = []
    for index, row in enumerate(rows):
        plain = {k: v for k, v in row.items() if k not in OUR_COLUMNS and k not in ("fillers", "rationale")}
        plain["prediction"] = predict(index, row)
        out.append(plain)
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def score(path: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["score", str(path), "--out", str(out), "--bootstrap", "100", *extra])
    return result.exit_code, result.output


def stereotyped(index: int, row: dict) -> object:
    """Always the stereotype-following option: as an index on even rows, as option text on odd rows."""
    choice = row["biased_label"]
    return choice if index % 2 == 0 else row[f"ans{choice}"].upper()  # case and width are normalized


def test_bbq_format_scores_like_our_labels(lite_rows: list[dict], tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bbq.jsonl", bbq_format(lite_rows, stereotyped))
    code, output = score(path, tmp_path / "out", "--prediction-field", "prediction")
    assert code == 0, output
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["ambiguous_rows"] == []
    expected_records = [
        dict(BBQ.base_record(row, "qa"), pred=row["biased_label"], template_id=row["question_index"])
        for row in lite_rows
    ]
    assert results["metrics"] == BBQ.metrics(expected_records)
    overall = results["metrics"]["overall"]
    assert overall["diff_bias_ambig"] == 1.0 and overall["s_dis"] == 1.0 and overall["s_amb_bbq"] == 1.0
    assert overall["ooc_ratio"] == 0.0
    assert (tmp_path / "out" / "report.md").is_file()


def test_unmatched_predictions_are_out_of_choice(lite_rows: list[dict], tmp_path: Path) -> None:
    # a reply that declines both persons is out of choice ("誰にもわからない" would say "unknown" in words)
    rows = bbq_format(lite_rows, lambda i, row: "どちらでもない" if i < 6 else row["label"])
    code, output = score(
        write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out", "--prediction-field", "prediction"
    )
    assert code == 0, output
    overall = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]["overall"]
    assert overall["ooc_ratio"] == pytest.approx(6 / len(rows))
    # out-of-choice rows are never read as "unknown": wrong in JBBQ's `acc`, left out of KoBBQ's `acc_valid`
    assert overall["acc_valid"] == 1.0
    assert overall["acc"] == pytest.approx(1 - 6 / len(rows))


def test_rows_with_an_unclear_stereotyped_option_are_listed(lite_rows: list[dict], tmp_path: Path) -> None:
    rows = bbq_format(lite_rows, stereotyped)
    tags = [rows[0]["answer_info"][f"ans{i}"][1] for i in range(3)]
    person_tags = [t for t in tags if t != "unknown"]
    rows[0]["additional_metadata"] = dict(rows[0]["additional_metadata"], stereotyped_groups=person_tags)
    code, output = score(
        write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out", "--prediction-field", "prediction"
    )
    assert code == 0, output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [a["example_id"] for a in results["ambiguous_rows"]] == [rows[0]["example_id"]]
    assert results["ambiguous_rows"][0]["line"] == 1
    assert "not unique" in results["ambiguous_rows"][0]["problem"]
    assert "could not be derived" in output
    assert rows[0]["example_id"] in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert results["metrics"]["overall"]["n"] == len(rows)  # still counted for accuracy


def test_predictions_joined_with_the_dataset(lite_rows: list[dict], build_dir: Path, tmp_path: Path) -> None:
    thin = [{"example_id": row["example_id"], "answer": row["label"]} for row in lite_rows]
    path = write_jsonl(tmp_path / "thin.jsonl", thin)
    code, output = score(path, tmp_path / "out", "--prediction-field", "answer", "--dataset", str(build_dir))
    assert code == 0, output
    overall = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]["overall"]
    assert overall["acc"] == 1.0 and overall["diff_bias_ambig"] == 0.0
    write_jsonl(path, [*thin, {"example_id": "not-in-the-dataset", "answer": 0}])
    code, output = score(path, tmp_path / "out2", "--prediction-field", "answer", "--dataset", str(build_dir))
    assert code == 2 and "EV063" in output


def test_predictions_of_part_of_the_dataset_say_so(
    lite_rows: list[dict], build_dir: Path, tmp_path: Path
) -> None:
    """EV057: --dataset rows without a prediction are said (counts, categories left out), recorded in
    results.json and report.md; whole coverage says nothing."""
    thin = [{"example_id": row["example_id"], "answer": row["label"]} for row in lite_rows]
    code, output = score(
        write_jsonl(tmp_path / "all.jsonl", thin), tmp_path / "all", "--prediction-field", "answer",
        "--dataset", str(build_dir), "--config", "lite",
    )  # fmt: skip
    assert code == 0 and "EV057" not in output, output
    assert "warnings" not in json.loads((tmp_path / "all" / "results.json").read_text("utf-8"))
    first = lite_rows[0]["category"]
    kept = [t for t, row in zip(thin, lite_rows, strict=True) if row["category"] == first]
    kept = kept[: len(kept) // 2 or 1] + [
        t for t, row in zip(thin, lite_rows, strict=True) if row["category"] != first
    ]
    left_out = sorted({row["category"] for row in lite_rows} - {first})
    kept = kept[: len(kept) - sum(1 for row in lite_rows if row["category"] == left_out[-1])]
    code, output = score(
        write_jsonl(tmp_path / "part.jsonl", kept), tmp_path / "part", "--prediction-field", "answer",
        "--dataset", str(build_dir), "--config", "lite",
    )  # fmt: skip
    assert code == 0, output  # scored as a subset (as eval --limit is), not refused
    [warning] = json.loads((tmp_path / "part" / "results.json").read_text("utf-8"))["warnings"]
    assert warning["code"] == "EV057"
    assert f"cover {len(kept):,} of the {len(lite_rows):,} rows" in warning["message"]
    assert (
        f"no prediction: {left_out[-1]}" in warning["message"]
        and "1 is answered in part" in warning["message"]
    )
    assert "EV057" in output and "EV057" in (tmp_path / "part" / "report.md").read_text("utf-8")


def test_a_list_in_the_prediction_column_is_out_of_choice(lite_rows: list[dict], tmp_path: Path) -> None:
    """["b"] is not "b": any value that is not one scalar answers nothing (as an object does)."""
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.parsing import parse_prediction_value, read_prediction

    options = ("七十代の男性", "二十代の男性", "わからない")
    for value in (["1"], [1], ["七十代の男性"], {"a": 1}, (0,)):
        assert parse_prediction_value(value, options) is None, value
        assert read_prediction(value, ("A", "B", "C"), options) is None, value
        assert BBQ.read_prediction(value, options, EvalOptions()) is None, value
    assert parse_prediction_value("1", options) == 1 and read_prediction("B", ("A", "B", "C"), options) == 1
    assert read_prediction(["b"], ("a", "b"), ("x", "y")) is None  # jubaku's reading of a column
    rows = bbq_format(lite_rows, lambda i, row: [row["label"]] if i < 4 else row["label"])
    code, output = score(
        write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out", "--prediction-field", "prediction"
    )
    assert code == 0, output
    overall = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]["overall"]
    assert overall["ooc_ratio"] == pytest.approx(4 / len(rows))


def test_input_problems_name_file_and_line(lite_rows: list[dict], tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"example_id": "a"}\n{not json\n', encoding="utf-8")
    code, output = score(path, tmp_path / "out", "--prediction-field", "p")
    assert code == 2 and "bad.jsonl:2" in output and "EV061" in output
    rows = bbq_format(lite_rows[:2], stereotyped)
    code, output = score(write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out")
    assert code == 2 and "--prediction-field" in output
    code, output = score(
        write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out", "--prediction-field", "nope"
    )
    assert code == 2 and "EV040" in output and "p.jsonl:1" in output
    assert "Traceback" not in output


def test_a_wrong_prediction_field_is_reported_once_with_the_columns(
    lite_rows: list[dict], tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", bbq_format(lite_rows, stereotyped))
    code, output = score(path, tmp_path / "out", "--prediction-field", "predicton")
    assert code == 2 and output.count("EV040") == 1, output  # not once per row
    assert "'predicton': no row has it" in output and "p.jsonl:1" in output
    assert "columns: example_id" in output and "prediction" in output
    code, output = score(path, tmp_path / "out")  # no --prediction-field: the columns to choose from
    assert code == 2 and "EV064" in output and "prediction" in output and "context_condition" in output


def test_rows_that_lack_the_prediction_field_are_counted_in_one_diagnostic(
    lite_rows: list[dict], tmp_path: Path
) -> None:
    rows = bbq_format(lite_rows, stereotyped)
    for row in rows[5:]:
        del row["prediction"]
    code, output = score(
        write_jsonl(tmp_path / "p.jsonl", rows), tmp_path / "out", "--prediction-field", "prediction"
    )
    assert code == 2 and output.count("EV040") == 1, output
    assert f"{len(rows) - 5} of {len(rows)} rows lack it" in output and "p.jsonl:6" in output


@pytest.mark.parametrize(
    ("tag", "group", "expected"),
    [("old", "old", True), ("nonOld", "old", False), ("F", "f", True), ("trans_F", "trans", True),
     ("F-Black", "Black", True), ("M", "F", False), ("", "old", False)],
)  # fmt: skip
def test_tag_names_group(tag: str, group: str, expected: bool) -> None:
    assert tag_names_group(tag, group) is expected


def test_nonnegative_question_biased_answer_is_the_other_person() -> None:
    row = {
        "question_polarity": "nonneg",
        "context_condition": "disambig",
        "label": 2,
        "answer_info": {
            "ans0": ["高齢の男性", "old"],
            "ans1": ["不明", "unknown"],
            "ans2": ["大学生", "nonOld"],
        },
        "additional_metadata": {"stereotyped_groups": ["old"]},
    }
    derived = derive_labels(row)
    assert (derived.target_label, derived.unknown_label, derived.biased_label) == (0, 1, 2)
    assert derived.context_bias == "biased"
    assert derive_labels(dict(row, question_polarity="neg")).biased_label == 0
    no_unknown = dict(row, answer_info={"ans0": ["a", "old"], "ans1": ["b", "x"], "ans2": ["c", "nonOld"]})
    assert derive_labels(no_unknown).problem


def _intersectional(subcategory: str, first: str, second: str, polarity: str = "neg") -> dict:
    """A row of BBQ's Race_x_SES format: persons tagged ``<income>-<group>``, only the groups listed."""
    return {
        "example_id": 0,
        "category": "Race_x_SES",
        "question_index": "4",
        "question_polarity": polarity,
        "context_condition": "ambig",
        "label": 2,
        "answer_info": {"ans0": ["a", first], "ans1": ["b", second], "ans2": ["Unknown", "unknown"]},
        "additional_metadata": {"subcategory": subcategory, "stereotyped_groups": ["Hillfolk"]},
    }


def test_two_persons_of_a_stereotyped_group_are_told_apart_by_the_questions_second_attribute() -> None:
    same_group = _intersectional("intersectional_a", "highSES-Hillfolk", "lowSES-Hillfolk")
    rows = [
        same_group,
        _intersectional("intersectional_b", "lowSES-Riverfolk", "lowSES-Hillfolk"),
        _intersectional("intersectional_c", "lowSES-Hillfolk", "highSES-Riverfolk"),
    ]
    assert second_attributes(rows) == {("Race_x_SES", "4"): "lowSES"}
    assert derive_labels(same_group).problem  # alone, the row is ambiguous and is listed
    labels = derive_labels(same_group, "lowSES")
    assert (labels.target_label, labels.biased_label, labels.problem) == (1, 1, None)
    nonneg = derive_labels(
        _intersectional("intersectional_a", "highSES-Hillfolk", "lowSES-Hillfolk", "nonneg"), "lowSES"
    )
    assert nonneg.biased_label == 0  # the other person, as for any non-negative question
    broken = _intersectional("intersectional_a", "lowSES-Hillfolk", "lowSES-Hillfolk")  # BBQ's shared entry
    assert "not unique" in derive_labels(broken, "lowSES").problem  # still listed, never guessed
    nobody = _intersectional("intersectional_c", "lowSES-Riverfolk", "highSES-Riverfolk")
    assert "no option is the stereotyped one" in derive_labels(nobody, "lowSES").problem
    assert second_attributes([_intersectional("", "F", "M")]) == {}  # tags without a second attribute


def test_score_reads_bbqs_intersectional_rows_with_their_second_attribute(tmp_path: Path) -> None:
    rows = []
    for index, (subcategory, first, second) in enumerate(
        [
            ("intersectional_a", "highSES-Hillfolk", "lowSES-Hillfolk"),
            ("intersectional_b", "lowSES-Riverfolk", "lowSES-Hillfolk"),
            ("intersectional_c", "lowSES-Hillfolk", "highSES-Riverfolk"),
        ]
    ):
        row = _intersectional(subcategory, first, second) | {
            "example_id": index,
            "context": "c",
            "question": "q",
        }
        rows.append(row | {"ans0": "A", "ans1": "B", "ans2": "Unknown", "prediction": 0})
    code, output = score(
        write_jsonl(tmp_path / "x.jsonl", rows), tmp_path / "out", "--prediction-field", "prediction"
    )
    assert code == 0, output
    results = json.loads((tmp_path / "out" / "results.json").read_text("utf-8"))
    assert results["ambiguous_rows"] == []


def test_a_control_character_in_a_file_name_is_escaped_and_kept_out_of_the_default_folder(
    lite_rows: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line break in the predictions' name was printed raw ("wrote runs/score-a⏎b/…") and made the
    default folder's name."""
    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path / "a\nb\x1b.jsonl", bbq_format(lite_rows, stereotyped))
    result = CliRunner().invoke(
        app, ["score", str(path), "--prediction-field", "prediction", "--bootstrap", "0"]
    )
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["score-a-b"]
    [wrote] = [line for line in result.output.splitlines() if line.startswith("wrote ")]
    assert "runs/score-a-b/results.json" in wrote
    assert all(line.isprintable() for line in result.output.splitlines())
    # a name the user chose keeps its characters on disk, and is printed with them written out
    out = ["--out", "o\nx", "--prediction-field", "prediction", "--bootstrap", "0"]
    result = CliRunner().invoke(app, ["score", str(path), *out])
    assert result.exit_code == 0 and (tmp_path / "o\nx" / "results.json").is_file(), result.output
    assert "wrote o<U+000A>x/results.json" in result.output
    assert all(line.isprintable() for line in result.output.splitlines())


@pytest.mark.parametrize("value", [{"source": "x"}, ["A", "B"]])
def test_a_prediction_field_of_objects_or_lists_is_refused_with_its_name(
    lite_rows: list[dict], tmp_path: Path, value: object
) -> None:
    """`--prediction-field additional_metadata` (objects) scored every row out of choice and exited 0."""
    rows = bbq_format(lite_rows, stereotyped)
    for row in rows:
        row["meta"] = value
    for path in (
        write_jsonl(tmp_path / "bbq.jsonl", rows),  # BBQ's own columns: read as BBQ's release
        write_jsonl(tmp_path / "plain.jsonl", [{"example_id": r["example_id"], "meta": value} for r in rows]),
    ):
        code, output = score(path, tmp_path / "out", "--prediction-field", "meta")
        assert code == 2 and "EV041" in output and "'meta'" in output, output
        assert f"{len(rows)} of {len(rows)} rows" in output and not (tmp_path / "out").exists()
