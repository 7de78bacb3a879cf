"""Input whose rows do not read as the rows the file shows is never imported as if they did. In a
template CSV: a quote that swallows cells or rows (a cell count other than the header's, a quote that
closes a cell before it ends, a line break inside a text) is IM061 at the cell where it starts, a control
character IM063 at its place, and the row counts as not imported (exit 1); a header naming a column twice
is IM062 and a byte that is not UTF-8 IM001 at its line and column, before anything is written. In a
release: a row given twice (same name, or same content under another name) is IM064, imported once."""

from __future__ import annotations

import json
from pathlib import Path

from jbcompile.cli import app
from jbcompile.jsonl import repeated
from typer.testing import CliRunner

from .conftest import EN_SPECS, write_template_csvs
from .test_empty_texts import _bbq_rows
from .test_jubaku import release_rows
from .test_sobaco import _import as import_sobaco
from .test_sobaco import problems


def _run(*args: str):
    return CliRunner().invoke(app, ["import", *args])


def _templates(tmp_path: Path, edit) -> tuple[Path, Path]:
    """A template folder of two Age rows whose CSV bytes ``edit`` changes."""
    folder = write_template_csvs(tmp_path / "bbq", [EN_SPECS[0], EN_SPECS[3]])
    [path] = folder.glob("new_templates - *.csv")
    path.write_bytes(edit(path.read_bytes()))
    return folder, path


def _findings(report: Path) -> list[dict]:
    return [f for t in json.loads(report.read_text("utf-8"))["templates"] for f in t["findings"]]


def _import_templates(tmp_path: Path, folder: Path):
    report = tmp_path / "report.json"
    result = _run("bbq-templates", str(folder), "--out", str(tmp_path / "out"), "--report", str(report))
    return result, report


def _line(number: int, change):
    def edit(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[number - 1] = change(lines[number - 1])
        return b"\n".join(lines)

    return edit


def test_a_stray_quote_that_swallows_cells_is_reported_where_it_opens_and_the_row_counts_as_lost(
    tmp_path: Path,
):
    folder, path = _templates(tmp_path, _line(2, lambda line: b'"' + line))
    result, report = _import_templates(tmp_path, folder)
    assert result.exit_code == 1, result.output
    [finding] = [f for f in _findings(report) if f["severity"] == "error"]
    assert (finding["code"], finding["line"], finding["col"]) == ("IM061", 2, 1)
    assert "header has" in finding["message"] and finding["hint"]
    assert not any(f["code"] == "IM010" for f in _findings(report))  # never taken for an empty row
    assert "coverage 50.0% (1/2 template rows imported)" in result.output


def test_a_line_break_inside_a_text_is_refused_but_not_in_a_list_or_at_the_end(tmp_path: Path):
    def broken(data: bytes) -> bytes:  # a quoted text cell broken in two: BBQ's texts have no such break
        start = data.index(b'"', data.index(b"\n"))
        return data[: start + 4] + b"\n" + data[start + 4 :]

    folder, path = _templates(tmp_path / "a", broken)
    result, report = _import_templates(tmp_path / "a", folder)
    assert result.exit_code == 1, result.output
    [finding] = [f for f in _findings(report) if f["severity"] == "error"]
    assert (finding["code"], finding["line"]) == ("IM061", 2)
    # BBQ's own line breaks: after an item of a bracketed list, and at the end of a text
    spec = dict(EN_SPECS[0]) | {
        "Known_stereotyped_groups": '["old",\n"elderly"]',
        "Disambiguating_Context": EN_SPECS[0]["Disambiguating_Context"] + " \n",
    }
    folder = write_template_csvs(tmp_path / "b" / "bbq", [spec, EN_SPECS[3]])
    result, report = _import_templates(tmp_path / "b", folder)
    assert result.exit_code == 0, result.output
    assert "coverage 100.0% (2/2 template rows imported)" in result.output


def test_a_header_that_names_a_column_twice_is_refused_naming_both(tmp_path: Path):
    folder, _ = _templates(tmp_path, _line(1, lambda line: line.rstrip(b"\r") + b",Q_id\r"))
    result, _ = _import_templates(tmp_path, folder)
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert "IM062" in output and "'Q_id' twice (columns " in output
    assert not (tmp_path / "out").exists()


def test_a_control_character_in_a_cell_is_refused_at_its_place_and_never_written(tmp_path: Path):
    folder, path = _templates(tmp_path, _line(2, lambda line: line.replace(b",", b",\x00", 1)))
    result, report = _import_templates(tmp_path, folder)
    assert result.exit_code == 1, result.output
    [finding] = [f for f in _findings(report) if f["severity"] == "error"]
    column = path.read_bytes().split(b"\n")[1].index(b"\x00") + 1
    assert (finding["code"], finding["line"], finding["col"]) == ("IM063", 2, column)
    assert "U+0000" in finding["message"]
    assert "coverage 50.0% (1/2 template rows imported)" in result.output
    written = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and not any(b"\x00" in data for data in written)


def test_a_byte_that_is_not_utf8_is_reported_at_its_line_and_column(tmp_path: Path):
    folder, path = _templates(tmp_path, _line(3, lambda line: b"\xc3\xa9" + line[:5] + b"\xff" + line[5:]))
    result, _ = _import_templates(tmp_path, folder)
    assert result.exit_code == 2, result.output
    assert f"{path.name}:3:7: IM001" in " ".join(result.output.split())  # é is one character


def test_a_swallowed_vocabulary_row_stops_the_import(tmp_path: Path):
    folder, _ = _templates(tmp_path, lambda data: data)
    vocabulary = folder / "vocabulary.csv"
    vocabulary.write_bytes(_line(3, lambda line: b'"' + line)(vocabulary.read_bytes()))
    result, _ = _import_templates(tmp_path, folder)
    assert result.exit_code == 2, result.output
    assert "vocabulary.csv:3:1: IM061" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_a_repeated_jubaku_row_is_reported_imported_once_and_counted_once(tmp_path: Path):
    rows = release_rows()
    source = _write_jsonl(tmp_path / "j.jsonl", [*rows, rows[3]])
    report = tmp_path / "report.json"
    result = _run("jubaku-jsonl", str(source), "--out", str(tmp_path / "out"), "--report", str(report))
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert f"j.jsonl:{len(rows) + 1}:1: IM064 the row at line 4 has the same example_id" in output
    assert f"({len(rows)}/{len(rows) + 1} rows reproduced)" in output
    # the same content under another name is the same row too
    other = dict(rows[5]) | {
        "example_id": "99_" + rows[5]["example_id"].split("_", 1)[1],
        "original_id": "99",
    }
    source = _write_jsonl(tmp_path / "k.jsonl", [*rows, other])
    result = _run("jubaku-jsonl", str(source), "--out", str(tmp_path / "out2"))
    assert result.exit_code == 1, result.output
    assert "IM064 the row at line 6 has the same content" in " ".join(result.output.split())


def test_a_repeated_bbq_row_is_reported_and_counted_once(tmp_path: Path):
    rows = _bbq_rows()
    source = _write_jsonl(tmp_path / "b.jsonl", [*rows, rows[1]])
    result = _run("bbq-jsonl", str(source), "--out", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert f"b.jsonl:{len(rows) + 1}:1: IM064 the row at line 2" in output
    assert f"({len(rows)}/{len(rows) + 1} rows reproduced)" in output
    # one content under another id is BBQ's own (a pair drawn twice repeats its ambiguous rows)
    again = dict(rows[0]) | {"example_id": 999}
    result = _run(
        "bbq-jsonl", str(_write_jsonl(tmp_path / "d.jsonl", [*rows, again])), "--out", str(tmp_path / "o3")
    )
    assert result.exit_code == 0 and "IM064" not in result.output, result.output
    # BBQ numbers its rows per category: one id in two categories is two rows
    moved = dict(rows[1]) | {"category": "Other", "question_index": "99"}
    result = _run(
        "bbq-jsonl", str(_write_jsonl(tmp_path / "c.jsonl", [*rows, moved])), "--out", str(tmp_path / "o2")
    )
    assert "IM064" not in result.output


def test_a_repeated_sobaco_problem_is_reported_and_counted_once(tmp_path: Path):
    data = problems()
    result, _ = import_sobaco(tmp_path, [*data, data[0]])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())
    assert "IM064 the row at line" in output and "sample_idx" in output


def test_repeated_finds_each_key_given_twice_once():
    assert repeated(["a", "b", None, "a", None, "b", "a"]) == {"a": [0, 3, 6], "b": [1, 5]}
    assert repeated(["x", "y"]) == {}
