"""The compile spine: expansion counts, labels, lite balance and stability, determinism, atomic writes."""

from __future__ import annotations

import errno
import hashlib
import itertools
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.build import write_build
from jbcompile.diagnostics import DiagnosticError
from jbcompile.emit.manifest import read_manifest

from tests.helpers import compile_folder, edit, problems_of


def _rows(root: Path, config: str = "full", lang: str = "ja") -> list[dict]:
    return compile_folder(root, lang=lang).configs[config].rows


def _by_template(rows: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["template_id"], []).append(row)
    return grouped


def test_expansion_counts_per_template(mini_sources: Path) -> None:
    counts = Counter(row["template_id"] for row in _rows(mini_sources))
    # targets × others × lexical alternatives × 2 assignments × 2 conditions × 2 polarities × 6 orders
    assert counts == {"age-phone": 2 * 3 * 2 * 48, "age-work": 1 * 3 * 48, "dis-meeting": 2 * 2 * 48}


def test_every_question_appears_in_all_six_orders_with_one_unknown_wording(mini_sources: Path) -> None:
    questions: dict[tuple, list[dict]] = {}
    for row in _rows(mini_sources):
        key = (row["context"], row["question"])
        questions.setdefault(key, []).append(row)
    for rows in questions.values():
        assert len(rows) == 6
        orders = {(r["ans0"], r["ans1"], r["ans2"]) for r in rows}
        assert len(orders) == 6
        assert len({frozenset(order) for order in orders}) == 1


def test_labels_are_consistent(mini_sources: Path) -> None:
    for row in _rows(mini_sources):
        options = [row["ans0"], row["ans1"], row["ans2"]]
        tags = [row["answer_info"][f"ans{i}"][1] for i in range(3)]
        assert tags[row["unknown_label"]] == "unknown"
        assert tags[row["target_label"]] in row["additional_metadata"]["stereotyped_groups"]
        assert row["rationale"].endswith(f"答えは「{options[row['label']]}」です。")
        if row["context_condition"] == "ambig":
            assert row["label"] == row["unknown_label"] and row["context_bias"] is None
        else:
            assert row["label"] != row["unknown_label"]
            agrees = row["label"] == row["biased_label"]
            assert row["context_bias"] == ("biased" if agrees else "counter_biased")
        other = ({0, 1, 2} - {row["target_label"], row["unknown_label"]}).pop()
        expected_biased = row["target_label"] if row["question_polarity"] == "neg" else other
        assert row["biased_label"] == expected_biased
        for filler in row["fillers"]:
            assert filler["text"] in row["context"]


def test_gold_answer_follows_the_disambiguating_context(mini_sources: Path) -> None:
    for row in _rows(mini_sources):
        if row["template_id"] != "age-phone" or row["context_condition"] != "disambig":
            continue
        names = {f["slot"]: f["text"] for f in row["fillers"]}
        gold = [row["ans0"], row["ans1"], row["ans2"]][row["label"]]
        expected = names["NAME2"] if row["question_polarity"] == "neg" else names["NAME1"]
        assert gold.endswith(expected) or expected.endswith(gold)


def test_full_gold_positions_are_uniform_per_category(mini_sources: Path) -> None:
    for category in ("Age", "Disability_status"):
        rows = [r for r in _rows(mini_sources) if r["category"] == category]
        counts = Counter(r["label"] for r in rows)
        assert counts[0] == counts[1] == counts[2]


def test_lite_is_balanced_and_covers_every_cell(mini_sources: Path) -> None:
    lite = _rows(mini_sources, "lite")
    full_ids = {r["example_id"] for r in _rows(mini_sources)}
    assert {r["example_id"] for r in lite} <= full_ids
    for template_rows in _by_template(lite).values():
        assert len(template_rows) == 12
        cells = Counter((r["context_condition"], r["question_polarity"]) for r in template_rows)
        assert set(cells.values()) == {3} and len(cells) == 4
        assert Counter(r["label"] for r in template_rows) == {0: 4, 1: 4, 2: 4}
        assert Counter(r["unknown_label"] for r in template_rows) == {0: 4, 1: 4, 2: 4}
        bias = Counter(r["context_bias"] for r in template_rows if r["context_bias"])
        assert bias == {"biased": 3, "counter_biased": 3}
        versions = Counter(
            r["additional_metadata"]["version"] for r in template_rows if r["context_condition"] == "disambig"
        )
        assert versions == {"a": 3, "b": 3}


def test_lite_rows_of_a_template_do_not_change_when_others_change(mini_sources: Path) -> None:
    before = _by_template(_rows(mini_sources, "lite"))
    edit(mini_sources / "templates/Disability_status/dis-meeting.yaml", "会議で、", "定例の会議で、")
    new_template = (mini_sources / "templates/Age/age-work.yaml").read_text(encoding="utf-8")
    (mini_sources / "templates/Age/age-extra.yaml").write_text(
        new_template.replace("id: age-work", "id: age-extra"), encoding="utf-8"
    )
    after = _by_template(_rows(mini_sources, "lite"))
    assert after["age-phone"] == before["age-phone"]
    assert after["age-work"] == before["age-work"]
    assert after["dis-meeting"] != before["dis-meeting"]
    assert len(after["age-extra"]) == 12


def test_the_verifier_rejects_unbalanced_lite(mini_sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jbcompile.designs.bbq import compiler as bbq

    original = bbq._lite_keys

    def skewed(plan, seed):  # every lite row with the gold in position 0
        keys = original(plan, seed)
        out = []
        for condition, polarity, assignment, combo, mention, order in keys:
            gold = "U" if condition == "ambig" else bbq._gold_role(plan, polarity, assignment)
            rest = [role for role in order if role != gold]
            out.append((condition, polarity, assignment, combo, mention, (gold, *rest)))
        return out

    monkeypatch.setattr(bbq, "_lite_keys", skewed)
    codes = {p.code for p in problems_of(mini_sources)}
    assert "B203" in codes


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_builds_are_byte_identical(mini_sources: Path, tmp_path: Path) -> None:
    write_build(compile_folder(mini_sources), tmp_path / "one", formats=["parquet", "jsonl"])
    write_build(compile_folder(mini_sources), tmp_path / "two", formats=["parquet", "jsonl"])
    one, two = _tree_digest(tmp_path / "one"), _tree_digest(tmp_path / "two")
    assert one == two
    assert {"manifest.json", "README.md", "data/lite/test-00000-of-00001.parquet"} <= set(one)
    manifest = read_manifest(tmp_path / "one")
    assert manifest["files"] == {k: v for k, v in one.items() if k != "manifest.json"}
    assert manifest["rows"] == {"lite": 36, "full": 912}


def test_seed_changes_the_data(mini_sources: Path) -> None:
    before = _rows(mini_sources, "lite")
    edit(mini_sources / "dataset.yaml", "seed: 7", "seed: 8")
    assert _rows(mini_sources, "lite") != before


def test_failed_build_leaves_the_previous_build_untouched(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    before = _tree_digest(out)
    edit(mini_sources / "templates/Age/age-work.yaml", "{{NAME1}}と", "{{NAME9}}と")
    with pytest.raises(DiagnosticError):
        write_build(compile_folder(mini_sources), out)
    assert _tree_digest(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build")]


def test_write_failure_midway_keeps_the_old_build(mini_sources: Path, tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "build"
    compiled = compile_folder(mini_sources)
    write_build(compiled, out)
    before = _tree_digest(out)
    from jbcompile import emit

    def broken_card(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(emit, "render_card", broken_card)
    with pytest.raises(DiagnosticError) as error:
        write_build(compiled, out)
    assert [d.code for d in error.value.diagnostics] == ["B004"]
    assert "ENOSPC" in error.value.diagnostics[0].message
    assert _tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_refuses_to_replace_a_folder_that_is_not_a_build(mini_sources: Path, tmp_path: Path) -> None:
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "todo.txt").write_text("keep me")
    with pytest.raises(DiagnosticError) as error:
        write_build(compile_folder(mini_sources), precious)
    assert error.value.diagnostics[0].code == "B001"
    assert (precious / "todo.txt").read_text() == "keep me"


def test_refuses_to_replace_a_build_of_another_dataset(mini_sources: Path, tmp_path: Path) -> None:
    from jbcompile.build import build_folder
    from jbcompile.cli import app
    from jbcompile.project import load_project
    from typer.testing import CliRunner

    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    write_build(compile_folder(mini_sources), out)  # the same dataset is rebuilt in place
    before = _tree_digest(out)
    edit(mini_sources / "dataset.yaml", "name: mini-bench", "name: other-bench")
    with pytest.raises(DiagnosticError) as error:
        write_build(compile_folder(mini_sources), out)
    assert [d.code for d in error.value.diagnostics] == ["B009"]
    assert "'mini-bench'" in error.value.diagnostics[0].message and _tree_digest(out) == before
    with pytest.raises(DiagnosticError) as error:  # refused before compiling
        build_folder(load_project(mini_sources), out, checks=False)
    assert [d.code for d in error.value.diagnostics] == ["B009"] and _tree_digest(out) == before
    command = ["build", "--sources", str(mini_sources), "--out", str(out)]
    refused = CliRunner().invoke(app, command)
    assert refused.exit_code == 2 and "B009" in refused.output and "--overwrite" in refused.output
    assert _tree_digest(out) == before
    replaced = CliRunner().invoke(app, [*command, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert read_manifest(out)["dataset"] == "other-bench"


def test_english_build_uses_the_english_side(mini_sources: Path) -> None:
    compiled = compile_folder(mini_sources, lang="en")
    rows = compiled.configs["full"].rows
    assert {r["template_id"] for r in rows} == {"age-phone"}
    assert {d.code for d in compiled.diagnostics} == {"R012"}  # the two Japanese-only templates, named
    assert all(r["context"].startswith("At the shop") for r in rows)
    assert all(r["rationale"].endswith("”.") for r in rows)


def test_example_ids_are_unique_and_stable(mini_sources: Path) -> None:
    ids = [r["example_id"] for r in _rows(mini_sources)]
    assert len(ids) == len(set(ids))
    assert ids == [r["example_id"] for r in _rows(mini_sources)]
    assert all(i.split("-")[0] in {"age", "dis"} for i in ids)


def test_unknown_wording_rotates_through_the_expressions(mini_sources: Path) -> None:
    rows = _rows(mini_sources)
    used = Counter(r["answer_info"][f"ans{r['unknown_label']}"][0] for r in rows)
    assert len(used) == 8
    assert max(used.values()) < 3 * min(used.values())


@pytest.mark.parametrize("combo", list(itertools.product(["ambig", "disambig"], ["neg", "nonneg"])))
def test_every_cell_exists_in_full(mini_sources: Path, combo: tuple[str, str]) -> None:
    rows = _rows(mini_sources)
    assert any((r["context_condition"], r["question_polarity"]) == combo for r in rows)
