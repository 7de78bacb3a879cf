"""``eval --sample N``: every stratum represented, in proportion, the same rows for the same seed; and the
last progress line shows the run's average rate."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.selection import allocate, stratified_sample
from typer.testing import CliRunner


def test_one_row_per_stratum_then_in_proportion() -> None:
    counts = allocate({"a": 100, "b": 10, "c": 1}, 23)
    # one each, then the 20 left shared as 99 : 9 : 0 (18.3 and 1.7: the larger remainder gets the last)
    assert counts == {"a": 19, "b": 3, "c": 1}


def test_fewer_rows_than_strata_are_refused_with_the_smallest_size_that_covers_them() -> None:
    keys = [(category, condition) for category in "abc" for condition in ("ambig", "disambig")] * 5
    with pytest.raises(DiagnosticError) as refused:
        stratified_sample(keys, 5, seed=0, fields=("category", "context_condition"))
    (problem,) = refused.value.diagnostics
    assert problem.code == "EV031" and "6 strata" in problem.message
    assert "category × context condition" in problem.message and "--sample 6" in (problem.hint or "")
    assert len({keys[i] for i in stratified_sample(keys, 6, seed=0)}) == 6  # the size it names is enough


def test_a_sample_as_large_as_the_rows_is_every_row() -> None:
    assert stratified_sample(["x", "y", "x"], 10, 0) == [0, 1, 2]


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=12),
    size=st.integers(min_value=12, max_value=300),
)
def test_allocation_properties(sizes: list[int], size: int) -> None:
    strata = {f"s{i}": n for i, n in enumerate(sizes)}
    counts = allocate(strata, size)
    total = sum(sizes)
    assert sum(counts.values()) == min(size, total)
    assert all(0 < counts[s] <= strata[s] for s in counts)
    if len(strata) <= size < total:
        assert set(counts) == set(strata)  # every stratum represented
        rest, spare = size - len(strata), total - len(strata)
        for name, n in strata.items():  # proportional to within one row
            assert abs(counts[name] - 1 - rest * (n - 1) / spare) < 1


def test_the_sample_is_sorted_deterministic_and_seeded() -> None:
    keys = [("Age", "ambig")] * 30 + [("Age", "disambig")] * 30 + [("SES", "ambig")] * 3
    chosen = stratified_sample(keys, 9, seed=0)
    assert chosen == sorted(chosen) == stratified_sample(keys, 9, seed=0)
    assert {keys[i] for i in chosen} == set(keys)
    assert [keys[i] for i in chosen].count(("SES", "ambig")) == 1
    assert stratified_sample(keys, 9, seed=1) != chosen


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_eval_sample_covers_every_category_and_condition(
    tiny_model: Path, build_dir: Path, lite_rows: list[dict], tmp_path: Path
) -> None:
    strata = {(row["category"], row["context_condition"]) for row in lite_rows}
    assert len(strata) == 6 and len(lite_rows) == 36
    picked = []
    for name in ("a", "b"):
        out = tmp_path / name
        code, output = run_cli("eval", "--model", str(tiny_model), "--dataset", str(build_dir),
                               "--out", str(out), "--bootstrap", "20", "--sample", "8")  # fmt: skip
        assert code == 0, output
        rows = [
            json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert len(rows) == 8
        assert {(row["category"], row["context_condition"]) for row in rows} == strata
        picked.append(sorted(row["example_id"] for row in rows))
    assert picked[0] == picked[1]  # the same seed, the same rows
    assert "rows/s (average)" in output  # the last progress line: the run's average


def test_sample_and_limit_together_are_refused(tiny_model: Path, build_dir: Path, tmp_path: Path) -> None:
    code, output = run_cli("eval", "--model", str(tiny_model), "--dataset", str(build_dir), "--out",
                           str(tmp_path / "r"), "--sample", "4", "--limit", "4")  # fmt: skip
    assert code == 2 and "EV103" in output and not (tmp_path / "r").exists()


def test_a_sample_below_the_number_of_strata_is_refused_before_any_row_is_run(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    """--sample 2 of bbq's 6 category × context condition strata would drop whole conditions (a run
    with no ambiguous row has no ambiguous accuracy): refused, nothing written (issue 24 §2)."""
    out = tmp_path / "r"
    code, output = run_cli("eval", "--model", str(tiny_model), "--dataset", str(build_dir), "--out",
                           str(out), "--sample", "2", "--bootstrap", "20")  # fmt: skip
    text = " ".join(output.split())
    assert code == 2 and "EV031" in text and "--sample 6" in text, output
    assert not (out / "predictions.jsonl").exists() and not (out / "results.json").exists()


def test_the_rate_is_the_runs_average_once_it_ends() -> None:
    from jbcompile.cli.eval import rows_per_second

    running = SimpleNamespace(finished_time=None, elapsed=10.0, finished=False, completed=50, speed=9.0)
    assert rows_per_second(running, ended=False) == "9.0 rows/s"
    assert rows_per_second(running, ended=True) == "5.0 rows/s (average)"
    done = SimpleNamespace(finished_time=4.0, elapsed=30.0, finished=True, completed=100, speed=80.0)
    assert rows_per_second(done, ended=False) == "25.0 rows/s (average)"
