"""What every import refuses before it writes, and what it counts as lost: a user's files are never
replaced, nothing is written when the command stops with an error, and no loss exits 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

from .conftest import EN_SPECS, EN_TRIP, generate_rows, write_jsonl, write_template_csvs


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


def test_force_never_replaces_a_folder_that_holds_an_input(tmp_path: Path) -> None:
    inside = tmp_path / "work"
    inside.mkdir()
    data = write_jsonl(inside / "released.jsonl", generate_rows(EN_SPECS, "en"))
    before = data.read_bytes()
    for out in (inside, data):  # the folder holding the input, and the input file itself
        code, output = _run("import", "bbq-jsonl", str(data), "--out", str(out), "--force")
        assert code == 2 and "IM056" in output and "nothing was written" in output
        assert data.read_bytes() == before


def test_force_never_replaces_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    here = tmp_path / "here"
    here.mkdir()
    (here / "mine.txt").write_text("keep", encoding="utf-8")
    monkeypatch.chdir(here)
    for out in (".", str(here), str(tmp_path)):
        code, output = _run("import", "bbq-jsonl", str(data), "--out", out, "--force")
        assert code == 2 and "IM056" in output and "working folder" in output
    assert (here / "mine.txt").read_text(encoding="utf-8") == "keep"


def test_an_input_given_twice_is_refused(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    code, output = _run(
        "import", "bbq-jsonl", str(data), str(tmp_path / "." / "released.jsonl"), "--out", str(tmp_path / "s")
    )
    assert code == 2 and "IM057" in output
    assert not (tmp_path / "s").exists()


def test_a_report_that_cannot_be_written_stops_the_import_before_it_writes(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    for report in (tmp_path / "nowhere" / "r.json", tmp_path):
        code, output = _run(
            "import", "bbq-jsonl", str(data), "--out", str(tmp_path / "s"), "--report", str(report)
        )
        assert code == 2 and "IM059" in output
        assert not (tmp_path / "s").exists()


def test_a_report_never_replaces_a_users_file_or_a_file_of_a_run_or_build(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    precious = tmp_path / "precious.json"
    precious.write_text("keep\n", encoding="utf-8")

    def run(out: str, report: Path, *extra: str) -> tuple[int, str]:
        return _run(
            "import", "bbq-jsonl", str(data), "--out", str(tmp_path / out), "--report", str(report), *extra
        )

    code, output = run("s1", precious)
    assert code == 2 and "IM060" in output and "--force" in output and "nothing was written" in output
    assert precious.read_text(encoding="utf-8") == "keep\n" and not (tmp_path / "s1").exists()
    mine = tmp_path / "report.json"
    assert run("s2", mine)[0] == 0  # a new file
    assert run("s3", mine)[0] == 0, "an import report of ours is replaced as it is"
    assert json.loads(mine.read_text(encoding="utf-8"))["files_written"]
    code, output = run("s4", precious, "--force")
    assert code == 0, output
    assert json.loads(precious.read_text(encoding="utf-8"))["files_written"]
    run_folder = tmp_path / "run"  # an eval run's folder: its results.json, or any file beside it
    run_folder.mkdir()
    results = {"schema_version": 2, "metrics": {"overall": {}}, "model": {"name": "m"}}
    (run_folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    build = tmp_path / "build" / "data"  # a build folder's data
    build.mkdir(parents=True)
    manifest = {"compiler": "jbcompile", "files": {}, "rows": {}}
    (tmp_path / "build" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for report in (run_folder / "results.json", run_folder / "new.json", build / "r.json"):
        code, output = run("s5", report, "--force")
        assert code == 2 and "IM060" in output and "lies inside" in output, report
    assert json.loads((run_folder / "results.json").read_text(encoding="utf-8")) == results
    assert not (run_folder / "new.json").exists() and not (build / "r.json").exists()


def test_a_file_is_not_an_out_folder(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    target = tmp_path / "notes.txt"
    target.write_text("mine", encoding="utf-8")
    code, output = _run("import", "bbq-jsonl", str(data), "--out", str(target), "--force")
    assert code == 2 and "IM020" in output and "is a file" in output
    assert target.read_text(encoding="utf-8") == "mine"


def test_compare_rows_are_read_before_the_write_and_a_bad_line_stops_the_import(tmp_path: Path) -> None:
    folder = write_template_csvs(tmp_path / "bbq", [EN_TRIP])
    released = write_jsonl(
        tmp_path / "Age.jsonl", generate_rows([EN_TRIP], "en"), extra_lines=('{"broken":',)
    )
    code, output = _run(
        "import", "bbq-templates", str(folder), "--out", str(tmp_path / "s"), "--compare", str(released)
    )
    assert code == 2 and "IM051" in output and "nothing was written" in output
    assert not (tmp_path / "s").exists()
    missing = tmp_path / "nope.jsonl"
    code, output = _run(
        "import", "bbq-templates", str(folder), "--out", str(tmp_path / "s"), "--compare", str(missing)
    )
    assert code == 2 and not (tmp_path / "s").exists()


def test_compared_rows_that_do_not_come_back_fail_the_import(tmp_path: Path) -> None:
    folder = write_template_csvs(tmp_path / "bbq", [EN_TRIP])
    others = [row for row in generate_rows(EN_SPECS, "en") if row["category"] != "Age"]
    released = write_jsonl(tmp_path / "other.jsonl", generate_rows([EN_TRIP], "en") + others)
    report = tmp_path / "r.json"
    args = ("import", "bbq-templates", str(folder), "--out", str(tmp_path / "s"), "--compare", str(released))
    code, output = _run(*args, "--report", str(report))
    assert code == 1 and "some released rows do not come back" in output
    release = json.loads(report.read_text("utf-8"))["release_coverage"]
    assert release["Age"]["rate"] == 1.0 and any(entry["rate"] < 1.0 for entry in release.values())
    code, _ = _run(*args, "--force", "--keep-going")
    assert code == 0


def test_a_template_file_that_is_not_a_table_is_an_error(tmp_path: Path) -> None:
    folder = write_template_csvs(tmp_path / "bbq", [EN_TRIP])
    (folder / "new_templates - Religion.csv").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n", encoding="utf-8"
    )
    code, output = _run("import", "bbq-templates", str(folder), "--out", str(tmp_path / "s"))
    assert code == 1 and "IM002" in output and "new_templates - Religion.csv" in output
    assert "coverage 50.0%" in output  # the lost file counts


def test_an_unknown_category_names_the_ones_there(tmp_path: Path) -> None:
    folder = write_template_csvs(tmp_path / "bbq", [EN_TRIP])
    code, output = _run("import", "bbq-templates", str(folder), "-c", "Foo", "--out", str(tmp_path / "s"))
    assert code == 2 and "IM001" in output and "Foo" in output and "Age" in output


def test_a_lang_that_disagrees_with_the_data_is_questioned(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    code, output = _run("import", "bbq-jsonl", str(data), "--out", str(tmp_path / "s"), "--lang", "ja")
    assert "IM058" in output and "look English" in output


def test_an_interrupted_import_leaves_nothing_the_next_one_keeps(tmp_path: Path) -> None:
    from tests.safety.children import run_cli

    data = write_jsonl(tmp_path / "released.jsonl", generate_rows(EN_SPECS, "en"))
    args = ("import", "bbq-jsonl", str(data), "--out", str(tmp_path / "s"))
    assert run_cli(*args, kill=("journal:commit", 1, "before")).returncode == -9  # the folder staged
    assert any(".s.jbcompile-import-" in p.name for p in tmp_path.iterdir())
    code, output = _run(*args)
    assert code == 0, output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["released.jsonl", "s"]


def test_a_broken_sources_folder_here_is_reported_not_replaced_by_the_bundled_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sources").mkdir()
    monkeypatch.chdir(tmp_path)
    code, output = _run("build", "--out", "b")
    assert code == 2 and "S000" in output and "no dataset.yaml" in output
    assert not (tmp_path / "b").exists()
