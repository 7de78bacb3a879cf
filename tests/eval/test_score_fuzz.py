"""Fuzzing ``score``'s reader: whatever the file holds, the outcome is a positioned diagnostic (exit
code 2) or metrics equal to those of exactly the records the file holds — never a traceback, never a
success computed from a file that was not wholly understood."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate import score as scoring
from jbcompile.evaluate.requests import ScoreRequest
from jbcompile.evaluate.score import run_score

from tests.eval.test_eval_score import bbq_format

LINE_CODES = {
    "EV061",
    "EV111",
    "EV112",
    "EV120",
    "EV121",
    "EV122",
    "EV123",
    "EV124",
    "EV125",
    "EV126",
    "EV127",
    "F003",
}
FILE_CODES = {"EV062", "EV064", "EV105", "EV114", "EV128"}  # about the file as a whole: path, no line

json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=4),
)
mutation = st.one_of(
    st.just(("keep",)),
    st.tuples(st.just("set"), st.sampled_from(["pred", "gold", "category", "example_id"]), json_values),
    st.tuples(st.just("drop"), st.sampled_from(["pred", "gold", "category", "example_id"])),
    st.just(("duplicate",)),
)
garbage = st.one_of(
    st.binary(max_size=24).map(lambda b: b.replace(b"\n", b"") + b"\xff"),  # never UTF-8
    st.sampled_from([b"", b"   ", b"\t"]),  # blank lines are skipped
    st.sampled_from([b"[1, 2]", b'"text"', b"42", b"null", b"{", b'{"example_id": ', b"{}"]),
    st.integers(1, 60_000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.sampled_from([b'{"example_id": "x", "example_id": "y"}', b'{"a": {"pred": 1, "pred": 2}}']),  # F003
)
line_spec = st.one_of(
    st.tuples(st.just("record"), st.integers(0, 11), mutation), st.tuples(st.just("raw"), garbage)
)


def valid_record(record: object) -> bool:
    """The oracle: what a line of our predictions.jsonl must be, written independently of the reader."""
    if not isinstance(record, dict):
        return False
    example_id, category = record.get("example_id"), record.get("category")
    pred, gold = record.get("pred", "missing"), record.get("gold", "missing")

    def option(value: object) -> bool:
        return type(value) is int and 0 <= value < 3

    return (
        type(example_id) in (str, int)
        and isinstance(category, str)
        and category != ""
        and (pred is None or option(pred))
        and option(gold)
        and gold == record.get("label")  # a qa record's gold is its row's correct answer
    )


def _keys_once(pairs: list) -> dict:
    """The oracle's own refusal of a key given twice (written apart from the reader's)."""
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key twice")
    return dict(pairs)


@pytest.fixture(scope="module")
def base_records(lite_rows: list[dict]) -> list[dict]:
    return [dict(BBQ.base_record(row, "qa"), pred=index % 3) for index, row in enumerate(lite_rows[:12])]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(line_spec, min_size=0, max_size=14), trailing_newline=st.booleans())
def test_score_reader_never_crashes_nor_lies(
    base_records: list[dict], specs: list, trailing_newline: bool
) -> None:
    lines: list[bytes] = []
    expected: list[object] = []  # what each non-blank line holds, None for unreadable lines
    for spec in specs:
        if spec[0] == "raw":
            lines.append(spec[1])
            if spec[1].strip():
                try:
                    expected.append(json.loads(spec[1].decode("utf-8"), object_pairs_hook=_keys_once))
                except (ValueError, RecursionError):
                    expected.append(None)
            continue
        record = dict(base_records[spec[1]])
        change = spec[2]
        if change[0] == "set":
            record[change[1]] = change[2]
        elif change[0] == "drop":
            del record[change[1]]
        copies = 2 if change[0] == "duplicate" else 1
        for _ in range(copies):
            lines.append(json.dumps(record, ensure_ascii=False).encode("utf-8"))
            expected.append(record)
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    ids = [str(r.get("example_id")) for r in expected if isinstance(r, dict)]
    should_succeed = bool(expected) and all(valid_record(r) for r in expected) and len(set(ids)) == len(ids)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(scoring, "write_outputs", lambda *args, **kwargs: None)  # reading is under test
        path = Path(folder) / "predictions.jsonl"
        path.write_bytes(data)
        try:
            results = run_score(ScoreRequest(path, out=Path(folder) / "out", bootstrap=0)).results.to_json()
        except DiagnosticError as error:
            assert not should_succeed, [str(d) for d in error.diagnostics]
            assert error.diagnostics
            for diagnostic in error.diagnostics:
                assert diagnostic.path == str(path)
                assert diagnostic.code in LINE_CODES | FILE_CODES, diagnostic
                if diagnostic.code in LINE_CODES:
                    assert diagnostic.line is not None and 1 <= diagnostic.line <= max(1, len(lines))
            return
    assert should_succeed, "exit 0 on a file that is not a valid predictions file"
    assert results["metrics"] == BBQ.metrics(expected)


any_json = st.recursive(
    json_values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
)
VALID_FIELD = {
    "label": lambda v: type(v) is int and 0 <= v < 3,
    "question_polarity": lambda v: v in ("neg", "nonneg"),
    "context_condition": lambda v: v in ("ambig", "disambig"),
    "ans0": lambda v: isinstance(v, str),
    "answer_info": lambda v: isinstance(v, dict),
    "additional_metadata": lambda v: (
        isinstance(v, dict)
        and isinstance(v.get("stereotyped_groups"), list)
        and all(isinstance(g, str) for g in v["stereotyped_groups"])
    ),
    "category": lambda v: isinstance(v, str) and v != "",
    "prediction": lambda v: True,  # any value: an option, or out-of-choice
}


@pytest.fixture(scope="module")
def bbq_rows(lite_rows: list[dict]) -> list[dict]:
    """Rows as BBQ's JSONL has them (none of our label columns), with a prediction column."""
    return bbq_format(lite_rows[:12], lambda index, row: index % 3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=st.lists(
        st.tuples(st.integers(0, 11), st.sampled_from(sorted(VALID_FIELD)), any_json), max_size=4
    )
)
def test_foreign_rows_never_crash_nor_pass_bad_values(bbq_rows: list[dict], changes: list) -> None:
    rows = [dict(row) for row in bbq_rows]
    for index, name, value in changes:
        rows[index][name] = value
    should_succeed = all(VALID_FIELD[name](rows[index][name]) for index, name, _ in changes)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(scoring, "write_outputs", lambda *args, **kwargs: None)
        path = Path(folder) / "bbq.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        try:
            results = run_score(
                ScoreRequest(path, prediction_field="prediction", out=Path(folder) / "o", bootstrap=0)
            ).results.to_json()
        except DiagnosticError as error:
            assert not should_succeed, [str(d) for d in error.diagnostics]
            assert all(d.path == str(path) and d.line is not None for d in error.diagnostics)
            return
    assert should_succeed, "exit 0 on rows with values the metrics cannot use"
    assert results["metrics"]["overall"]["n"] == len(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 11), st.sampled_from(["pred", "gold", "example_id", "category"]), st.integers(0, 2))
def test_a_prediction_with_a_key_twice_is_never_scored(
    base_records: list[dict], line: int, key: str, value: int
) -> None:
    """``{"pred": 1, …, "pred": 2}`` would be scored with the last value by any JSON reader that keeps
    it: refused at its line (F003), whatever the key and whichever value comes first."""
    lines = [json.dumps(record, ensure_ascii=False) for record in base_records]
    lines[line] = lines[line][:-1] + f', "{key}": {json.dumps(value)}}}'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "predictions.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        with pytest.raises(DiagnosticError) as error:
            run_score(ScoreRequest(path, out=Path(folder) / "out", bootstrap=0))
    assert [(d.code, d.line) for d in error.value.diagnostics] == [("F003", line + 1)]
