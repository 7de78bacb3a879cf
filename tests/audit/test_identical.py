"""Identical rows: each is emitted once, with a note at its template; a stable config (lite) keeps a
template's rows whatever other templates hold, and warns when they repeat another template's."""

from __future__ import annotations

import re
from pathlib import Path

from jbcompile.audit.identical import IdenticalRows, shown_digests
from jbcompile.build import compile_project
from jbcompile.designs import get_kind
from jbcompile.diagnostics import Severity
from jbcompile.project import load_project

COLUMNS = ("context", "question", "ans0")


def _row(context: str, answer: str = "a", **extra: str) -> dict:
    return {"context": context, "question": "q", "ans0": answer, **extra}


def test_a_row_is_identical_when_every_shown_column_agrees() -> None:
    rows = IdenticalRows("full", COLUMNS)
    rows.start("t1")
    first = [_row("x", example_id="1"), _row("x", example_id="2"), _row("x", "b"), _row("y")]
    kept = rows.fresh(first)
    assert [r.get("example_id") for r in kept] == ["1", None, None] and rows.take_counts() == (1, 0)
    rows.start("t2")
    assert rows.fresh([_row("y"), _row("z"), _row("x", "b")]) == [_row("z")]  # across templates and batches
    assert rows.take_counts() == (2, 0) and rows.take_counts() == (0, 0)
    assert len({bytes(d) for d in shown_digests([_row("x"), {"context": "x", "ans0": "a"}], COLUMNS)}) == 2


def test_a_rows_hash_does_not_depend_on_the_other_rows_of_its_batch() -> None:
    complete = [_row("x"), _row("y", "b")]
    ragged = [{"context": "x", "ans0": "a"}, {**_row("x"), "question": None}, {**_row("x"), "ans0": 3}]
    alone = shown_digests(complete, COLUMNS)
    mixed = shown_digests([complete[0], *ragged, complete[1]], COLUMNS)
    assert (mixed[[0, -1]] == alone).all()
    # a missing column is None; an empty text is not; a number is its text
    empty = {**_row("x"), "question": ""}
    found = [bytes(d) for d in shown_digests([*ragged, empty, {**_row("x"), "ans0": "3"}], COLUMNS)]
    assert found[0] == found[1] and found[1] != found[3] and found[2] == found[4]


def test_a_stable_config_leaves_out_repeats_within_a_template_only() -> None:
    rows = IdenticalRows("lite", COLUMNS, stable=True)
    rows.start("t1")
    assert rows.fresh([_row("x"), _row("x")]) == [_row("x")]
    rows.start("t2")
    assert rows.fresh([_row("x"), _row("w")]) == [_row("x"), _row("w")]
    assert rows.take_counts() == (1, 1)


def test_many_batches_keep_every_distinct_row() -> None:
    rows = IdenticalRows("full", COLUMNS)
    kept = []
    for start in range(0, 3000, 7):
        kept += rows.fresh([_row(str(n % 1000)) for n in range(start, start + 7)])
    assert [r["context"] for r in kept] == [str(n) for n in range(1000)]


def test_a_template_that_repeats_another_is_emitted_once(mini_sources: Path) -> None:
    original = (mini_sources / "templates/Age/age-work.yaml").read_text(encoding="utf-8")
    (mini_sources / "templates/Age/age-zcopy.yaml").write_text(
        original.replace("id: age-work", "id: age-zcopy"), encoding="utf-8"
    )
    compiled = compile_project(load_project(mini_sources), checks=False)
    full = compiled.configs["full"]
    columns = get_kind("bbq").shown_columns
    shown = [tuple(row[c] for c in columns) for row in full.rows]
    assert len(shown) == len(set(shown))
    notes = {d.code: d for d in compiled.diagnostics if d.code in ("AU010", "AU011")}
    assert notes["AU010"].severity is Severity.INFO and notes["AU010"].path.endswith("age-zcopy.yaml")
    left_out = int(re.search(r"full: (\d+) rows", notes["AU010"].message).group(1))
    ages = full.categories["Age"]
    # the copy draws other unknown wordings (seeded by its id): its rows that show the same are left out
    assert left_out > 0 and ages["age-zcopy"] + left_out == ages["age-work"]
    # lite stays twelve rows per template (its rows depend on their template alone), with a warning
    assert compiled.configs["lite"].categories["Age"]["age-zcopy"] == 12
    assert notes["AU011"].severity is Severity.WARNING and "lite: 1 row)" in notes["AU011"].message


def test_a_build_without_identical_rows_says_nothing(mini_sources: Path) -> None:
    compiled = compile_project(load_project(mini_sources), checks=False)
    assert not [d for d in compiled.diagnostics if d.code in ("AU010", "AU011")]
