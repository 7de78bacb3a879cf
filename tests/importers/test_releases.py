"""A release's JSON Lines go through the tool's one reader: a line that cannot come in is reported where it
stands and counted as lost, whatever is wrong with it, and the other rows come in."""

from __future__ import annotations

import json
from pathlib import Path

from jbcompile.cli import app
from typer.testing import CliRunner

from .conftest import EN_SPECS, generate_rows
from .test_jubaku import release_rows

BROKEN = (
    b"[" * 100_000 + b"]" * 100_000,  # nested too deeply for the parser
    b'{"context": "caf\xe9"}',  # Latin-1, not UTF-8
    b"{not json",
)


def _write(path: Path, rows: list[dict], extra: tuple[bytes, ...] = ()) -> Path:
    lines = [json.dumps(row, ensure_ascii=False).encode("utf-8") for row in rows] + list(extra)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _import(command: str, source: Path, out: Path, *args: str):
    result = CliRunner().invoke(app, ["import", command, str(source), "--out", str(out), *args])
    assert "Traceback" not in result.output
    return result, " ".join(result.output.split())


def _findings(report: Path, code: str) -> list[tuple[int, str]]:
    data = json.loads(report.read_text(encoding="utf-8"))
    return sorted(
        (f["line"], f["message"]) for t in data["templates"] for f in t["findings"] if f["code"] == code
    )


def test_a_bbq_line_that_cannot_be_read_is_a_row_lost_not_the_whole_import(tmp_path: Path) -> None:
    rows = generate_rows(EN_SPECS, "en")
    source = _write(tmp_path / "rows.jsonl", rows, BROKEN)
    report = tmp_path / "report.json"
    result, output = _import("bbq-jsonl", source, tmp_path / "sources", "--report", str(report))
    assert result.exit_code == 1  # three rows are lost; the others are written
    assert f"({len(rows)}/{len(rows) + 3} rows reproduced)" in output
    lost = _findings(report, "IM001")
    assert [line for line, _ in lost] == [len(rows) + 1, len(rows) + 2, len(rows) + 3]
    assert "nested too deeply" in lost[0][1] and "not UTF-8" in lost[1][1] and "not JSON" in lost[2][1]
    assert all(message.endswith("; row skipped") for _, message in lost)


def test_a_jubaku_line_that_cannot_be_read_is_reported_like_a_row_that_does_not_fit(tmp_path: Path) -> None:
    rows = release_rows()
    source = _write(tmp_path / "jubaku.jsonl", rows, BROKEN)
    report = tmp_path / "report.json"
    result, output = _import("jubaku-jsonl", source, tmp_path / "sources", "--report", str(report))
    assert result.exit_code == 1
    assert f"({len(rows)}/{len(rows) + 3} rows reproduced)" in output
    assert [line for line, _ in _findings(report, "IM021")] == [len(rows) + 1, len(rows) + 2, len(rows) + 3]


def test_only_a_line_break_ends_a_row(tmp_path: Path) -> None:
    """A JSON string may hold U+2028 or a form feed unescaped: the row is one line all the same."""
    rows = release_rows()
    for row in rows:
        row["instruction"] = (
            row["instruction"].replace("新人の一人", "新人の\u2028一人").replace("候補の", "候補\x0cの")
        )
    result, output = _import("jubaku-jsonl", _write(tmp_path / "jubaku.jsonl", rows), tmp_path / "sources")
    assert result.exit_code == 0, output
    assert f"coverage 100.0% ({len(rows)}/{len(rows)} rows reproduced)" in output


def test_a_sobaco_file_that_is_not_json_is_positioned(tmp_path: Path) -> None:
    source = tmp_path / "templates.json"
    source.write_text('[\n  {"context": "a"},\n  {"context": \n', encoding="utf-8")
    result, output = _import("sobaco-json", source, tmp_path / "sources")
    assert result.exit_code == 2 and "IM001" in output and "templates.json:3:" in output
    assert not (tmp_path / "sources").exists()


def test_a_sobaco_problem_that_does_not_fit_names_its_line(tmp_path: Path) -> None:
    from .test_sobaco import problems

    source = tmp_path / "templates.json"
    source.write_text(json.dumps([*problems(), "a string"], ensure_ascii=False, indent=2), encoding="utf-8")
    result, output = _import("sobaco-json", source, tmp_path / "sources")
    last = len(source.read_text(encoding="utf-8").splitlines()) - 1
    assert f"templates.json:{last}:1: IM031 problem 4: a problem must be a JSON object; skipped" in output


def test_an_import_of_which_no_row_comes_in_says_why_each_was_kept_out(tmp_path: Path) -> None:
    """Nothing readable (a CSV, or rows of another format): IM001 comes with the reason per row, not alone."""
    csv = tmp_path / "rows.csv"
    csv.write_text("context,question,label\nA,B,0\n", encoding="utf-8")
    other = _write(tmp_path / "other.jsonl", [{"id": n} for n in range(30)])
    for command, source, reason in (
        ("bbq-jsonl", csv, "looks like CSV"),
        ("bbq-jsonl", other, "missing fields"),
        ("jubaku-jsonl", other, "missing fields"),
    ):
        out = tmp_path / f"sources-{command}-{source.suffix}"
        result, output = _import(command, source, out)
        assert result.exit_code == 2 and not out.exists()
        assert "IM001 no readable rows in the input" in output
        assert reason in output and f"{source.name}:1:1" in output
        if source is other:  # thirty rows: the first ones, then how many more
            assert "more problem(s) like these" in output


def test_a_sobaco_import_with_nothing_in_it_says_so(tmp_path: Path) -> None:
    empty, unfit = tmp_path / "empty.json", tmp_path / "unfit.json"
    empty.write_text("[]", encoding="utf-8")
    unfit.write_text(json.dumps([{"id": n} for n in range(40)]), encoding="utf-8")
    result, output = _import("sobaco-json", empty, tmp_path / "a")
    assert result.exit_code == 2 and "IM037" in output and "holds nothing to import" in output
    result, output = _import("sobaco-json", unfit, tmp_path / "b")  # forty reasons: the first, then a count
    assert result.exit_code == 2 and "IM037" in output and "check the input files named above" in output
    assert output.count("IM031 problem") < 40 and "more problem(s) like these" in output


def test_an_empty_file_among_the_inputs_is_said(tmp_path: Path) -> None:
    """No file passed over in silence: an empty one among the inputs is a warning naming it."""
    rows = release_rows()
    source, empty = _write(tmp_path / "jubaku.jsonl", rows), tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = CliRunner().invoke(
        app, ["import", "jubaku-jsonl", str(source), str(empty), "--out", str(tmp_path / "sources")]
    )
    output = " ".join(result.output.split())
    assert result.exit_code == 0 and "IM001 [warning]" in output and "empty.jsonl holds no rows" in output
