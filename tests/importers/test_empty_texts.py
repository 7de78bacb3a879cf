"""An empty text in the input is never imported as a text of no words: every importer reports it, with a
code and a hint at the row (in a template CSV: at the cell), leaves the row out and counts it as not
imported, so the import exits 1. And the per-category figures of bbq-jsonl count the rows it skipped."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.designs.bbq.importers.common import cell_places
from jbcompile.designs.sobaco.importer import FIELDS
from typer.testing import CliRunner

from .bbq.test_intersectional import _write as write_intersectional
from .conftest import EN_SPECS, write_template_csvs
from .test_jubaku import release_rows
from .test_sobaco import _import as import_sobaco
from .test_sobaco import problems


def _run(*args: str):
    return CliRunner().invoke(app, ["import", *args])


@pytest.mark.parametrize(
    "column", ["Disambiguating_Context", "Question_negative_stereotype", "Question_non_negative", "Q_id"]
)
def test_an_empty_template_cell_is_reported_at_the_cell_and_not_imported(tmp_path: Path, column: str):
    empty = dict(EN_SPECS[2]) | {column: "  \t"}  # spaces only: empty too
    folder = write_template_csvs(tmp_path / "bbq", [EN_SPECS[0], empty])
    report = tmp_path / "report.json"
    result = _run("bbq-templates", str(folder), "--out", str(tmp_path / "out"), "--report", str(report))
    assert result.exit_code == 1, result.output
    csv_file = next(folder.glob("new_templates - *.csv"))
    lines = csv_file.read_text(encoding="utf-8").splitlines()
    header = next(csv.reader([lines[0]]))
    [finding] = [f for t in json.loads(report.read_text("utf-8"))["templates"] for f in t["findings"]]
    assert finding["code"] == "IM002" and column in finding["message"] and finding["hint"]
    # the finding points at the cell: the text before it holds the columns before it
    line = lines[finding["line"] - 1]
    before = next(csv.reader([line[: finding["col"] - 1]])) if finding["col"] > 1 else [""]
    assert len(before) - 1 == header.index(column)
    assert "coverage 50.0% (1/2 template rows imported)" in result.output
    texts = [p.read_text("utf-8") for p in (tmp_path / "out" / "templates").rglob("*.yaml")]
    assert len(texts) == 1 and "''" not in texts[0]


def test_an_empty_intersectional_cell_is_reported_and_not_imported(tmp_path: Path):
    folder = write_intersectional(tmp_path / "bbq")
    path = folder / "new_templates - Race_x_SES.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    rows[0]["Question_non_negative"] = " "
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    report = tmp_path / "report.json"
    args = (str(folder), "--out", str(tmp_path / "out"), "-c", "Race_x_SES", "--report", str(report))
    result = _run("bbq-templates", *args)
    assert result.exit_code == 1, result.output
    assert "IM002 Question_non_negative is empty" in result.output
    entries = {t["template"]: t for t in json.loads(report.read_text("utf-8"))["templates"]}
    assert (entries["Race_x_SES/1"]["rows"], entries["Race_x_SES/1"]["reproduced"]) == (1, 0)
    assert not any(t["upstream"] == "Race_x_SES/1" for t in entries.values())


def test_cell_places_find_every_field_as_the_csv_module_reads_it():
    text = 'a,"b, ""quoted""\nand on",,"",last\n'
    [fields] = list(csv.reader(io.StringIO(text)))
    places = cell_places(text.splitlines(keepends=True), 7)
    assert len(places) == len(fields) == 5
    lines = text.splitlines(keepends=True)
    assert places == [(7, 1), (7, 3), (8, 9), (8, 10), (8, 13)]
    assert lines[1][places[4][1] - 1 :].startswith("last")
    assert cell_places(["\n", "x,\n"], 3) == [(4, 1), (4, 3)]  # a blank line before; an empty last field


def _bbq_rows() -> list[dict]:
    rows = []
    for condition, context in (
        ("ambig", "The elder and the kid met."),
        ("disambig", "The elder and the kid met. The kid left."),
    ):
        for polarity, question, label in (("neg", "Who left?", 1), ("nonneg", "Who stayed?", 0)):
            rows.append(
                {
                    "example_id": len(rows),
                    "question_index": "1",
                    "question_polarity": polarity,
                    "context_condition": condition,
                    "category": "Age",
                    "answer_info": {
                        "ans0": ["elder", "old"],
                        "ans1": ["kid", "nonOld"],
                        "ans2": ["Unknown", "unknown"],
                    },
                    "additional_metadata": {
                        "subcategory": "None",
                        "stereotyped_groups": ["old"],
                        "version": "a",
                        "source": "x",
                    },
                    "context": context,
                    "question": question,
                    "ans0": "The elder",
                    "ans1": "The kid",
                    "ans2": "Unknown",
                    "label": label if condition == "disambig" else 2,
                }
            )
    return rows


@pytest.mark.parametrize("field", ["context", "question", "ans1"])
def test_a_bbq_row_with_an_empty_text_is_skipped_and_counted_in_its_category(tmp_path: Path, field: str):
    rows = _bbq_rows()
    broken = rows[1] | {field: " "}
    lines = [json.dumps(r) for r in rows] + [json.dumps(broken), "{not json"]
    source = tmp_path / "a.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    result = _run("bbq-jsonl", str(source), "--out", str(tmp_path / "out"), "--report", str(report))
    assert result.exit_code == 1, result.output
    assert f"a.jsonl:5:1: IM002 empty, or not text: {field}" in " ".join(result.output.split())
    data = json.loads(report.read_text("utf-8"))
    assert (data["rows"], data["reproduced"]) == (6, 4)
    # the per-category figures add up to the total: the skipped row in Age, the unreadable line apart
    assert data["release_coverage"]["Age"] == {"rows": 5, "reproduced": 4, "rate": 0.8}
    assert data["release_coverage"]["(rows not read)"]["rows"] == 1
    assert sum(c["rows"] for c in data["release_coverage"].values()) == data["rows"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("question", ""), ("context", "  "), ("additional_context_culture", "\n"), ("param", ["店", " "])],
)
def test_a_sobaco_problem_with_an_empty_text_is_skipped(tmp_path: Path, field: str, value):
    data = problems()
    data[0] = data[0] | {field: value}
    result, _ = import_sobaco(tmp_path, data)
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert "IM031 problem 0" in output and field in output
    # the hint names SOBACO's own fields
    assert all(name in output for name in FIELDS) and "options, label" not in output


@pytest.mark.parametrize("empty", ["dialogue", "response", "viewpoint"])
def test_a_jubaku_row_with_an_empty_text_is_skipped(tmp_path: Path, empty: str):
    rows = release_rows()
    row = rows[0]
    if empty == "dialogue":
        start = row["instruction"].index("【文脈】\n") + len("【文脈】\n")
        end = row["instruction"].index("\n\n【応答A】")
        row["instruction"] = row["instruction"][:start] + "  " + row["instruction"][end:]
    elif empty == "response":
        start = row["instruction"].index("【応答A】\n") + len("【応答A】\n")
        end = row["instruction"].index("\n\n【応答B】")
        row["instruction"] = row["instruction"][:start] + row["instruction"][end:]
    else:
        row["viewpoint"] = ""
    source = tmp_path / "j.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    result = _run("jubaku-jsonl", str(source), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    assert "j.jsonl:1:1: IM021" in result.output and "empty" in result.output
