"""`jbcompile audit` on a release's own files (BBQ/JBBQ JSONL, JUBAKU-v2 JSONL), so that any BBQ-style
dataset can be audited without importing it first."""

from __future__ import annotations

import json
from pathlib import Path

from jbcompile.cli import app
from typer.testing import CliRunner

from tests.audit.rows import bbq_release, bbq_rows, jubaku_release, jubaku_rows, write_jsonl


def audit_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def exceeded(output: str) -> set[str]:
    record = json.loads(output)
    return {r["probe"] for r in record["results"] if any(s["exceeds"] for s in _scopes(r))}


def _scopes(result: dict) -> list[dict]:
    return [result["overall"], *result["categories"].values()] if result["overall"] else []


def test_a_bbq_release_file_is_audited_with_its_derived_labels(tmp_path: Path) -> None:
    planted = write_jsonl(tmp_path / "Age.jsonl", bbq_release(bbq_rows(gold_last=True)))
    code, output = audit_cli(str(planted), "--format", "json")
    assert code == 1, output
    record = json.loads(output)
    assert {r["kind"] for r in record["results"]} == {"bbq"} and not record["passed"]
    assert exceeded(output) == {"mention-order", "mention-order-disambiguating"}
    templates = {t["template"] for r in record["results"] if r["overall"] for t in r["overall"]["worst"]}
    assert templates <= {f"t{n:02d}" for n in range(12)}  # BBQ's question_index stands for the template

    balanced = write_jsonl(tmp_path / "balanced.jsonl", bbq_release(bbq_rows()))
    code, output = audit_cli(str(balanced), "--format", "json")
    assert code == 0 and json.loads(output)["passed"], output


def test_several_files_of_one_release_are_audited_together(tmp_path: Path) -> None:
    rows = bbq_release(bbq_rows(gold_first_option=True))
    half = len(rows) // 2
    first = write_jsonl(tmp_path / "a.jsonl", rows[:half])
    second = write_jsonl(tmp_path / "b.jsonl", rows[half:])
    code, output = audit_cli(str(first), str(second), "--format", "json")
    # the gold always first puts the unknown option first exactly in the ambiguous rows: unknown-gold
    # reads the condition off its position
    assert code == 1 and exceeded(output) == {"option-position", "unknown-gold"}
    position = next(r for r in json.loads(output)["results"] if r["probe"] == "option-position")
    assert position["overall"]["rows"] == len(rows)  # every row of both files


def test_a_jubaku_release_file_is_audited(tmp_path: Path) -> None:
    planted = write_jsonl(tmp_path / "jubaku.jsonl", jubaku_release(jubaku_rows(neutral_echoes=True)))
    code, output = audit_cli(str(planted), "--format", "json")
    assert code == 1 and "context-overlap" in exceeded(output), output
    assert {r["kind"] for r in json.loads(output)["results"]} == {"jubaku"}
    balanced = write_jsonl(tmp_path / "balanced.jsonl", jubaku_release(jubaku_rows()))
    code, output = audit_cli(str(balanced))
    assert code == 0 and "every probe within its bar" in output, output


def test_files_of_two_designs_and_unknown_configs_are_refused(tmp_path: Path) -> None:
    bbq = write_jsonl(tmp_path / "bbq.jsonl", bbq_release(bbq_rows()))
    jubaku = write_jsonl(tmp_path / "jubaku.jsonl", jubaku_release(jubaku_rows()))
    code, output = audit_cli(str(bbq), str(jubaku))
    assert code == 2 and "AU021" in output
    code, output = audit_cli(str(bbq), "--config", "full")
    assert code == 2 and "AU022" in output
    (tmp_path / "folder").mkdir()
    code, output = audit_cli(str(tmp_path / "folder"))
    assert code == 2 and "AU020" in output


def test_a_lean_over_the_bar_that_the_interval_does_not_confirm_is_said_plainly(tmp_path: Path) -> None:
    # per category, four of six templates name the person who answers the negative question last, two
    # first: 66.7% on the point figure, over the 55% bar, but six templates cannot tell it from noise
    last = bbq_rows(gold_last=True)
    first = bbq_rows(gold_named_first=True)
    mirrored = {"t00", "t01", "t02", "t03"}
    rows = [r for r in last if r["template_id"] not in mirrored] + [
        r for r in first if r["template_id"] in mirrored
    ]
    leaning = write_jsonl(tmp_path / "Age.jsonl", bbq_release(rows))
    code, output = audit_cli(str(leaning), "--format", "json")
    assert code == 0, output
    found = next(r for r in json.loads(output)["results"] if r["probe"] == "mention-order-disambiguating")
    for scope in _scopes(found):
        assert scope["value"] > scope["threshold"] > scope["low"] and not scope["exceeds"], scope
        assert scope["status"] == "over, not significant"
    code, output = audit_cli(str(leaning))
    assert code == 0 and "every probe within its bar" in output
    assert "over the bar on the point figure, but not significantly" in output
    assert "release/mention-order-disambiguating all" in " ".join(output.split())


def test_a_build_folder_whose_manifest_is_too_large_gets_the_file_diagnostic(tmp_path: Path) -> None:
    from jbcompile.limits import MAX_RECORD_BYTES

    folder = tmp_path / "build"
    folder.mkdir()
    with (folder / "manifest.json").open("wb") as manifest:
        manifest.truncate(MAX_RECORD_BYTES + 1)  # sparse: as `score` and `export` say, not "no manifest"
    code, output = audit_cli(str(folder))
    assert code == 2 and "F001" in output and "AU020" not in output, output
