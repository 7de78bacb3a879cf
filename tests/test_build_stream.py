"""Builds stream their rows: verifiers see batches, data files are written a row group at a time. None of
it may change what a build finds or what it writes."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jbcompile.build import RepeatedIds, build_folder, compile_project, write_build
from jbcompile.designs import ConfigSpec, Row, get_kind
from jbcompile.designs.bbq.compiler import BbqKind
from jbcompile.diagnostics import DiagnosticError
from jbcompile.emit import data
from jbcompile.project import load_project
from jbcompile.projecttypes import Project

from tests.conftest import FIXTURES, REPO
from tests.designs.conftest import KINDS_SOURCES
from tests.helpers import edit, problems_of


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _verify(project: Project, kind: str, config: str, rows: list[Row], batch: int) -> list[tuple]:
    """What a config's verifier reports when its rows come ``batch`` at a time."""
    verifier, ids = get_kind(kind).verifier(config, project), RepeatedIds()
    for start in range(0, len(rows), batch):
        verifier.add(rows[start : start + batch])
        ids.add(row["example_id"] for row in rows[start : start + batch])
    found = verifier.finish(ids.find(lambda: (row["example_id"] for row in rows)))
    return [(d.code, d.message, str(d.path), d.line) for d in found]


def _first(rows: list[Row], **match: object) -> Row:
    return next(row for row in rows if all(row[k] == v for k, v in match.items()))


def _break_bbq(config: str, rows: list[Row]) -> set[str]:
    rows[1]["example_id"] = rows[2]["example_id"] = rows[0]["example_id"]  # one id three times
    misfit = _first(rows, context_condition="disambig")
    misfit["label"] = misfit["unknown_label"]  # an unknown gold in a disambiguated row
    template = rows[-1]["template_id"]
    rows[:] = [  # a template without its ambiguous negative cell
        r
        for r in rows
        if (r["template_id"], r["context_condition"], r["question_polarity"]) != (template, "ambig", "neg")
    ]
    expected = {"B201", "B202", "B203", "B205"}
    if config == "lite":
        for row in rows:
            if row["context_bias"] == "counter_biased":
                row["context_bias"] = "biased"
        expected.add("B204")
    return expected


def _break_sobaco(config: str, rows: list[Row]) -> set[str]:
    rows[3]["example_id"] = rows[2]["example_id"]
    culture = _first(rows, type="culture" if config == "sobaco" else rows[0]["type"])
    culture["label"] = (culture["label"] + 1) % 3  # unbalanced gold positions in its cell
    del rows[-1]  # a cell one row short
    expected = {"SB201", "SB202", "SB204"}
    if config == "sobaco":
        _first(rows, type="bias")["biased_label"] = None
        _first(rows, type="culture")["ans0"] = "another option"  # its pair no longer shows the same options
        expected |= {"SB203", "SB205"}
    return expected


def _break_jubaku(config: str, rows: list[Row]) -> set[str]:
    rows[1]["example_id"] = rows[0]["example_id"]
    rows[2]["biased_label"] = rows[2]["label"]
    last_case = rows[-1]["template_id"]
    del rows[-1]  # the last case misses a variant
    first_case = _first(rows, template_id=rows[0]["template_id"], label=0)
    if first_case["template_id"] != last_case:
        first_case["label"] = 1  # gold is B more often than A
    return {"JU201", "JU202", "JU203", "JU204"}


BREAK = {"bbq": _break_bbq, "sobaco": _break_sobaco, "jubaku": _break_jubaku}


@pytest.mark.parametrize("root", [FIXTURES / "mini_sources", KINDS_SOURCES], ids=["bbq", "sobaco-jubaku"])
def test_a_verifier_finds_the_same_problems_however_the_rows_are_batched(root: Path) -> None:
    project = load_project(root)
    compiled = compile_project(project, checks=False)
    for name, config in compiled.configs.items():
        assert _verify(project, config.kind, name, config.rows, 1) == []  # the fixture is sound
        rows = [dict(row) for row in config.rows]
        expected = BREAK[config.kind](name, rows)
        whole = _verify(project, config.kind, name, rows, len(rows))
        assert {code for code, *_ in whole} >= expected, name
        for batch in (1, 7, 100):
            assert _verify(project, config.kind, name, rows, batch) == whole, (name, batch)


def test_repeated_ids_are_counted_exactly_in_order_of_first_occurrence() -> None:
    class SameHash(str):
        """Ids whose hashes all collide: only the second pass may tell them apart."""

        def __hash__(self) -> int:
            return 42

    ids = [SameHash(i) for i in ("b", "a", "c", "a", "b", "a", "d")]
    tally = RepeatedIds()
    tally.add(ids[:3])
    tally.add(ids[3:])
    assert list(tally.find(lambda: iter(ids)).items()) == [("b", 2), ("a", 3)]
    assert list(tally.find(lambda: iter(ids))) == []  # the hashes were handed over with the first answer
    unique = RepeatedIds()
    unique.add(f"id-{n}" for n in range(1000))
    assert unique.find(lambda: pytest.fail("no suspect, no second pass")) == {}


def _duplicating_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bbq template gives its second full row the first one's id (a kind bug the build must catch)."""
    build = BbqKind.build

    def duplicating(self: BbqKind, template, project):  # noqa: ANN001, ANN202
        built = build(self, template, project)
        full = built.rows["full"] = list(built.rows["full"])
        full[1] = dict(full[1], example_id=full[0]["example_id"])
        return built

    monkeypatch.setattr(BbqKind, "build", duplicating)


def test_a_streamed_build_that_breaks_an_invariant_ships_nothing(
    mini_sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "build"
    build_folder(load_project(mini_sources), out, checks=False)
    before = _tree(out)
    _duplicating_build(monkeypatch)
    monkeypatch.setattr(data, "ROW_GROUP", 10)  # several row groups are on disk when the check fails
    monkeypatch.setattr(data, "CONVERT", 3)
    with pytest.raises(DiagnosticError) as error:
        build_folder(load_project(mini_sources), out, checks=False, formats=("parquet", "jsonl"))
    repeated = [d.message for d in error.value.diagnostics if d.code == "B201"]
    assert len(repeated) == 3 and all(m.endswith("occurs 2 times") for m in repeated)  # one per template
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]  # no staging folder left


def test_every_problem_of_a_streamed_build_is_reported_together(
    mini_sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 彼ら breaks a lint rule (JA101, an error), found by the checks that run beside the expansion
    edit(
        mini_sources / "templates/Age/age-work.yaml",
        "が参加した。",
        "が参加した。彼らの後ろには列ができていた。",
    )
    with pytest.raises(DiagnosticError) as alone:
        compile_project(load_project(mini_sources))
    assert "JA101" in {d.code for d in alone.value.diagnostics}
    _duplicating_build(monkeypatch)
    with pytest.raises(DiagnosticError) as both:
        build_folder(load_project(mini_sources), tmp_path / "build")
    codes = [d.code for d in both.value.diagnostics]
    assert {d.code for d in alone.value.diagnostics} <= set(codes) and "B201" in codes
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("root", [FIXTURES / "mini_sources", KINDS_SOURCES], ids=["bbq", "sobaco-jubaku"])
def test_a_streamed_build_writes_the_bytes_of_a_build_from_memory(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(data, "ROW_GROUP", 50)  # many groups, cut across templates and conversions
    monkeypatch.setattr(data, "CONVERT", 7)
    formats = ("parquet", "jsonl")
    compiled, manifest = build_folder(
        load_project(root), tmp_path / "streamed", checks=False, formats=formats
    )
    kept = compile_project(load_project(root), checks=False)
    assert write_build(kept, tmp_path / "kept", formats=formats) == manifest
    assert _tree(tmp_path / "streamed") == _tree(tmp_path / "kept")
    assert all(not config.rows for config in compiled.configs.values())  # nothing held in memory
    for name, config in kept.configs.items():
        path = tmp_path / "streamed" / data.data_path(name, "parquet")
        metadata = pq.ParquetFile(path).metadata
        assert metadata.num_row_groups == max(1, -(-len(config.rows) // 50))
        assert (
            pq.read_table(path).to_pylist()
            == pa.Table.from_pylist(config.rows, config.spec.schema).to_pylist()
        )
        lines = (
            (tmp_path / "streamed" / data.data_path(name, "jsonl")).read_text(encoding="utf-8").splitlines()
        )
        assert [json.loads(line)["example_id"] for line in lines] == [r["example_id"] for r in config.rows]


def test_build_progress_counts_templates_rows_and_bytes(mini_sources: Path, tmp_path: Path) -> None:
    seen: dict[str, list[tuple[int, int | None]]] = {}
    project = load_project(mini_sources)
    _, manifest = build_folder(
        project,
        tmp_path / "build",
        checks=False,
        progress=lambda stage, done, total: seen.setdefault(stage, []).append((done, total)),
    )
    assert seen["expand"][-1] == (3, 3) and [d for d, _ in seen["expand"]] == [1, 2, 3]
    rows = sum(manifest["rows"].values())
    assert seen["write"][-1][0] == rows
    data_bytes = sum(
        (tmp_path / "build" / data.data_path(n, "parquet")).stat().st_size for n in manifest["rows"]
    )
    assert seen["hash"][-1] == (data_bytes, data_bytes)


def test_the_build_command_draws_no_progress_on_a_pipe(mini_sources: Path, tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "jbcompile.cli",
        "build",
        "-s",
        str(mini_sources),
        "-o",
        str(tmp_path / "b"),
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "compiler"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "expanding templates" not in result.stderr and "hashing" not in result.stderr
    assert "\x1b" not in result.stderr and "\r" not in result.stderr
    assert result.stderr.count("built") == 1


def _counting_build(monkeypatch: pytest.MonkeyPatch, made: dict[str, int]) -> None:
    """bbq's rows, counted per config as the kind makes them."""
    build = BbqKind.build

    def counted(rows: Iterable[Row], config: str) -> Iterator[Row]:
        for row in rows:
            made[config] += 1
            yield row

    def counting(self: BbqKind, template, project):  # noqa: ANN001, ANN202
        built = build(self, template, project)
        built.rows = {config: counted(rows, config) for config, rows in built.rows.items()}
        return built

    monkeypatch.setattr(BbqKind, "build", counting)


def test_the_build_takes_a_templates_rows_a_batch_at_a_time(
    mini_sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile import build

    monkeypatch.setattr(build, "BATCH_ROWS", 5)
    made: Counter[str] = Counter()
    _counting_build(monkeypatch, made)
    taken: Counter[str] = Counter()
    sizes: list[int] = []

    def sink(spec: ConfigSpec, rows: Sequence[Row]) -> None:
        taken[spec.name] += len(rows)
        sizes.append(len(rows))
        assert made[spec.name] == taken[spec.name]  # no row was made before the sink needed it

    compiled = compile_project(load_project(mini_sources), checks=False, sink=sink)
    assert max(sizes) == 5 and len(sizes) > len(compiled.configs["full"].template_ids) * 2
    assert taken == made and taken["full"] == compiled.configs["full"].count


def _alias_sources(mini_sources: Path) -> Path:
    """age-work with a word only its disambiguating context shows: its combos share ambiguous rows."""
    path = mini_sources / "templates/Age/age-work.yaml"
    edit(path, "その{{NAME2}}は初日で", "その{{NAME2}}は{{WORD1}}")
    edit(path, "ambiguous_context:", "words:\n  WORD1: [初日で, 一日で, 最初の日に]\nambiguous_context:")
    return mini_sources


def test_lite_picks_the_rows_of_its_keys_however_the_rows_are_consumed(
    mini_sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.designs.bbq import compiler as bbq

    project = load_project(_alias_sources(mini_sources))
    template = next(t for t in project.templates if t.id == "age-work")
    plan = bbq._plan(template, project)
    every = [
        (condition, polarity, assignment, combo, 0, order)
        for condition, polarity, assignment in itertools.product(bbq.CONDITIONS, bbq.POLARITIES, "ab")
        for combo in range(len(plan.combos))
        for order in bbq.ORDERS
    ]
    assert any(plan.row_of(key) != key for key in every)  # some keys show an earlier combo's row
    monkeypatch.setattr(bbq, "_lite_keys", lambda plan, seed: every)  # lite: a row for every key

    in_order = get_kind("bbq").build(template, project)
    full = list(in_order.rows["full"])
    lite = list(in_order.rows["lite"])
    lite_first = list(get_kind("bbq").build(template, project).rows["lite"])
    assert lite == lite_first and len(lite) == len(every) > len(full)
    for (condition, polarity, assignment, combo, _, order), row in zip(every, lite, strict=True):
        t, o, words = plan.combos[combo]
        values = bbq._slot_values(plan, plan.targets[t], plan.others[o], words, assignment)
        shown = plan.renderings[0].ambiguous.fill(values)
        assert any(row is kept for kept in full)
        assert (row["context_condition"], row["question_polarity"]) == (condition, polarity)
        assert row["additional_metadata"]["version"] == assignment
        assert row["context"].startswith(shown) and (condition == "ambig") == (row["context"] == shown)
        assert (row["target_label"], row["unknown_label"]) == (order.index("T"), order.index("U"))
        if condition == "disambig":
            assert [f["text"] for f in row["fillers"]] == [values[f["slot"]] for f in row["fillers"]]


def test_expansion_problems_are_all_reported_from_streamed_rows(
    mini_sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile import build

    path = mini_sources / "templates/Disability_status/dis-meeting.yaml"
    edit(path, "questions:", "rationale:\n  non_negative:\n    ambig: 答えは「{{NAME1}}」です。\nquestions:")
    project = load_project(mini_sources)
    template = next(t for t in project.templates if t.id == "dis-meeting")
    built = get_kind("bbq").build(template, project)
    for rows in built.rows.values():
        list(rows)
    lite_first = get_kind("bbq").build(template, project)
    list(lite_first.rows["lite"])
    assert built.diagnostics and lite_first.diagnostics == built.diagnostics
    monkeypatch.setattr(build, "BATCH_ROWS", 3)
    streamed = [d for d in problems_of(mini_sources) if d.path.endswith("dis-meeting.yaml")]
    assert sorted(streamed, key=str) == sorted(built.diagnostics, key=str)  # the report sorts them
