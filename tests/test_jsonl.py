"""The tool's one JSON Lines reader (``jbcompile.jsonl``): one decision of what is wrong with a line, each
area reporting it under its own codes."""

from __future__ import annotations

from pathlib import Path

from jbcompile.evaluate.jsonfile import CODES as EVALUATOR
from jbcompile.importers.releases import RowCodes, read_release_rows
from jbcompile.importers.report import ImportReport
from jbcompile.jsonl import JsonCodes, parse_value, read_json_lines
from jbcompile.reading import RELEASE

IMPORTER = JsonCodes(not_json="X1", too_deep="X2", not_text="X3", not_object="X4", not_rows="X5")
LINES = (
    b'\xef\xbb\xbf{"a": 1}',  # a byte order mark is no problem
    b"",
    b"[1, 2]",
    b"{oops",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"b": "\xff"}',
    b'{"c": "x\xe2\x80\xa8y"}',  # U+2028 inside a string: still one line
)


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


def test_every_area_sees_the_same_problems_under_its_own_codes(tmp_path: Path) -> None:
    path = _file(tmp_path)
    mine, theirs = read_json_lines(path, IMPORTER, RELEASE), read_json_lines(path, EVALUATOR, RELEASE)
    assert mine.records == theirs.records == [(1, {"a": 1}), (7, {"c": "x\u2028y"})]
    assert [(d.code, d.line) for d in mine.problems] == [("X4", 3), ("X1", 4), ("X2", 5), ("X3", 6)]
    assert [(d.code, d.line) for d in theirs.problems] == [
        ("EV061", 3),
        ("EV061", 4),
        ("EV111", 5),
        ("EV112", 6),
    ]
    assert [(d.message, d.col) for d in mine.problems] == [(d.message, d.col) for d in theirs.problems]


def test_an_importer_counts_each_unreadable_line_as_a_row_lost(tmp_path: Path) -> None:
    report = ImportReport()
    rows = read_release_rows(
        [_file(tmp_path)], lambda data, path, line: line, report, RowCodes("IM001", "IM002", "rows: a, b")
    )
    assert rows == [1, 7]
    assert report.total_rows == 4 and report.reproduced_rows == 0
    assert [(d.code, d.line) for d in report.diagnostics] == [
        ("IM002", 3),
        ("IM001", 4),
        ("IM001", 5),
        ("IM001", 6),
    ]
    assert {d.hint for d in report.diagnostics} == {"rows: a, b"}  # each skipped row says what a row is


def test_half_a_surrogate_pair_is_refused_where_it_stands_and_a_whole_pair_is_read(tmp_path: Path) -> None:
    """``"\\ud800"`` parses in Python but is no character: written out later (YAML, parquet, a report)
    it would end in a UnicodeEncodeError. The reader refuses it at its line and column."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": "ok \\ud83d\\ude00"}\n{"a": "x\\ud800y"}\n', encoding="utf-8")
    lines = read_json_lines(path, EVALUATOR, RELEASE)
    assert [number for number, _ in lines.records] == [1] and lines.records[0][1]["a"] == "ok \U0001f600"
    (problem,) = lines.problems
    assert (problem.code, problem.line, problem.col) == (EVALUATOR.not_text, 2, 9), problem


UNREADABLE = {
    "rows.jsonl": [
        b"{oops",  # not JSON
        b"[1, 2]",  # JSON, not an object
        b"[" * 100_000 + b"]" * 100_000,  # too deep
        b'{"b": "\xff"}',  # not UTF-8
        b'{"d": "\\ud800"}',  # half a surrogate pair
    ],
    "rows.json": [b'[{"id": 1},', b'  3, {"id": 2}', b"]"],  # a list element that is not an object
    "cut.json": [b'[{"id": 1},', b'{"id": 2'],  # a document cut short
    "latin.json": [b'[{"id": "\xe9"}]'],  # a document that is not UTF-8
    "predictions.csv": [b"id,prediction", b"3,1"],  # CSV where JSON Lines are read
}


def test_every_unreadable_input_says_what_to_do(tmp_path: Path) -> None:
    """Each problem the one reader finds, in lines or in a whole document, comes with a hint."""
    from jbcompile.jsonl import read_json_records

    for name, lines in UNREADABLE.items():
        path = tmp_path / name
        path.write_bytes(b"\n".join(lines) + b"\n")
        problems = read_json_records(path, EVALUATOR, RELEASE).problems
        assert problems, name
        for problem in problems:
            assert problem.hint, (name, problem.message)


def test_a_csv_file_is_named_as_csv_and_a_bad_list_element_by_its_place(tmp_path: Path) -> None:
    from jbcompile.jsonl import read_json_records

    path = tmp_path / "predictions.csv"
    path.write_text("id,prediction\n3,1\n")
    first = read_json_records(path, EVALUATOR, RELEASE).problems[0]
    assert (first.line, "CSV" in first.message, "JSON Lines" in (first.hint or "")) == (1, True, True)
    path = tmp_path / "rows.json"
    path.write_text('[{"id": 1},\n  3, {"id": 2}\n]\n')
    (problem,) = read_json_records(path, EVALUATOR, RELEASE).problems
    assert (problem.line, "row 2 of the list" in problem.message) == (2, True)


def test_a_line_cut_short_is_told_with_where_its_string_starts(tmp_path: Path) -> None:
    """The decoder's "Unterminated string starting at" is finished with its column (a one-line record)
    or its file line and column (a JSON document over several lines), for every reader."""
    path = tmp_path / "cut.jsonl"
    path.write_text('{"a": 1}\n{"question": "途中で切れ\n', encoding="utf-8")
    for codes in (IMPORTER, EVALUATOR):
        (problem,) = read_json_lines(path, codes, RELEASE).problems
        assert problem.message == "not JSON: Unterminated string starting at column 14", problem
        assert (problem.line, problem.col) == (2, 14)
    report = ImportReport()
    read_release_rows([path], lambda data, path, line: line, report, RowCodes("IM001", "IM002", "rows"))
    assert [d.message for d in report.diagnostics] == [
        "not JSON: Unterminated string starting at column 14; row skipped"
    ]
    _, problem = parse_value('{"a": 1,\n "b": "x', path, 5, IMPORTER)
    assert problem is not None and problem.message.endswith("starting at line 6 column 7"), problem
    assert (problem.line, problem.col) == (6, 7)
