"""A FIFO, a device, a folder or a link to one where a command expects a file is F002 — never "no such
file" (which would skip what it was for: a paired test, the project's rules, its card) — and the text
files of the sources that no loader reads (README.md, CHANGELOG.md, translations) are reported, not
passed over, when they cannot be read whole. Also: what a stop of `import` and `check --fix` says."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from jbcompile import reading
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError
from typer.testing import CliRunner

from tests.conftest import FIXTURES


def _sources(tmp_path: Path) -> Path:
    root = tmp_path / "sources"
    shutil.copytree(FIXTURES / "mini_sources", root)
    return root


def _f002(call) -> str:
    with pytest.raises(DiagnosticError) as error:
        call()
    [problem] = error.value.diagnostics
    assert problem.code == "F002" and problem.path and problem.hint, problem
    return problem.path


def test_is_present_tells_nothing_there_from_something_else_there(tmp_path: Path) -> None:
    assert not reading.is_present(tmp_path / "absent.json", reading.RECORD)
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling.json")
    assert not reading.is_present(tmp_path / "dangling.json", reading.RECORD)
    (tmp_path / "file.json").write_text("{}")
    assert reading.is_present(tmp_path / "file.json", reading.RECORD)
    assert not reading.is_present(tmp_path / "file.json" / "below", reading.RECORD)
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "folder.json").mkdir()
    os.symlink("/dev/null", tmp_path / "device.json")
    os.symlink(tmp_path / "fifo.json", tmp_path / "to-fifo.json")
    for name in ("fifo.json", "folder.json", "device.json", "to-fifo.json"):
        shown = _f002(lambda name=name: reading.is_present(tmp_path / name, reading.RECORD, name))
        assert shown == name


def _run_folder(tmp_path: Path) -> Path:
    """A run folder as `score` writes it (results.json, predictions.jsonl)."""
    rows = [
        {"example_id": f"r{i}", "category": "Age", "context_condition": "ambig", "question_polarity": "neg",
         "label": 2, "target_label": 0, "unknown_label": 2, "biased_label": 0, "context_bias": None,
         "template_id": f"t{i % 3}", "pred": i % 3, "gold": 2, "kind": "bbq", "task": "qa"}
        for i in range(6)
    ]  # fmt: skip
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["score", str(predictions), "--out", str(run), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    return run


def test_compare_refuses_a_fifo_for_predictions_or_results(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(run, other)
    (other / "predictions.jsonl").unlink()
    os.mkfifo(other / "predictions.jsonl")
    result = CliRunner().invoke(app, ["compare", str(run), str(other), "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 2 and "F002" in result.output, result.output  # never "without predictions"
    assert not (tmp_path / "cmp").exists()
    (other / "predictions.jsonl").unlink()
    (other / "results.json").unlink()
    os.symlink("/dev/zero", other / "results.json")
    result = CliRunner().invoke(app, ["compare", str(run), str(other), "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 2 and "F002" in result.output and "EV210" not in result.output, result.output


@pytest.mark.parametrize("make", [os.mkfifo, os.mkdir])
def test_a_dataset_yaml_that_is_no_file_is_f002_for_every_command(tmp_path: Path, make) -> None:
    root = _sources(tmp_path)
    (root / "dataset.yaml").unlink()
    make(root / "dataset.yaml")
    for args in (
        ["check", "--sources", str(root)],
        ["stats", "--sources", str(root)],
        ["build", "--sources", str(root), "--out", str(tmp_path / "out")],
        ["translate", "--sources", str(root), "--dry-run"],
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "F002" in result.output, (args, result.output)
        assert "S000" not in result.output and "TR014" not in result.output, args


def test_a_card_template_or_a_rules_file_that_is_no_file_is_f002(tmp_path: Path) -> None:
    from jbcompile.checks.ruledata import PronounRulesFile, rule_file_path

    cards = tmp_path / "cards"
    cards.mkdir()
    os.symlink("/dev/zero", cards / "README.md.j2")
    root = _sources(tmp_path)
    args = ["build", "--sources", str(root), "--cards", str(cards), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "README.md.j2: F002" in result.output, result.output
    assert "CL006" not in result.output and not (tmp_path / "out").exists()
    (root / "rules").mkdir()
    os.mkfifo(root / "rules" / "pronouns.yaml")
    _f002(lambda: rule_file_path(PronounRulesFile, root))  # never the bundled rules in its place
    (root / "rules" / "pronouns.yaml").unlink()
    assert rule_file_path(PronounRulesFile, root).parent != root / "rules"


# ---- the text files no loader reads (item 3) ---------------------------------------------------------------


def _check(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check", "--sources", str(root)])
    return result.exit_code, result.output


def test_a_readme_that_is_not_utf8_is_reported_at_its_line(tmp_path: Path) -> None:
    root = _sources(tmp_path)
    (root / "README.md").write_bytes(b"# notes\n- hidden \xe2\x80\xae here\n\xff\n")
    code, output = _check(root)
    assert code == 2 and "README.md:3:1: Y005" in output, output
    result = CliRunner().invoke(app, ["build", "--sources", str(root), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "README.md:3:1: Y005" in result.output
    result = CliRunner().invoke(app, ["stats", "--sources", str(root)])
    assert "README.md:3:1: Y005" in result.output


def test_a_glossary_that_is_not_utf8_is_reported_by_check(tmp_path: Path) -> None:
    root = _sources(tmp_path)
    (root / "translations").mkdir()
    (root / "translations" / "glossary.yaml").write_bytes(b"entries:\n  a: \xff\n")
    code, output = _check(root)
    assert code == 2 and "glossary.yaml:2:6: Y005" in output, output


def test_a_changelog_above_its_limit_is_a_document_not_a_data_file(tmp_path: Path) -> None:
    from jbcompile.limits import MAX_DOCUMENT_BYTES
    from jbcompile.sourcefiles import sources_hash

    root = _sources(tmp_path)
    with open(root / "CHANGELOG.md", "wb") as file:
        file.truncate(MAX_DOCUMENT_BYTES + 1)  # sparse: refused by its size, unread
    code, output = _check(root)
    assert code == 2 and "F001" in output and "MAX_DOCUMENT_BYTES" in output, output
    with pytest.raises(DiagnosticError) as error:
        sources_hash(root)  # what build hashes: named as what it is, under its own limit
    [problem] = error.value.diagnostics
    assert "a Markdown document" in problem.message and "MAX_DOCUMENT_BYTES" in problem.message
    assert problem.path and problem.path.endswith("CHANGELOG.md")


# ---- smaller ones (item 11) --------------------------------------------------------------------------------


def test_a_merge_key_is_named_as_such() -> None:
    from jbcompile.loader import parse_yaml

    with pytest.raises(DiagnosticError) as error:
        parse_yaml("words:\n  NAME2: {<<: {group: age_young}}\n", "t.yaml")
    [problem] = error.value.diagnostics
    assert "merge key" in problem.message and problem.hint and "quote" not in problem.hint


def test_ctrl_c_in_check_fix_says_what_was_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jbcompile.checks as checks

    root = _sources(tmp_path)

    def stopped_before(root: Path, **_: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(checks, "fix_sources", stopped_before)
    result = CliRunner().invoke(app, ["check", "--fix", "--sources", str(root)])
    assert result.exit_code == 130 and "interrupted; nothing was written" in result.output, result.output
    assert "is as it was" in result.output

    def stopped_after(root: Path, **_: object) -> object:
        target = root / "dataset.yaml"
        staged = target.with_name(".dataset.yaml.new")
        staged.write_bytes(target.read_bytes() + b"\n")
        staged.replace(target)
        raise KeyboardInterrupt

    monkeypatch.setattr(checks, "fix_sources", stopped_after)
    result = CliRunner().invoke(app, ["check", "--fix", "--sources", str(root)])
    assert result.exit_code == 130 and "the fixes were written before the stop" in result.output
    assert "dataset.yaml" in result.output


def test_ctrl_c_in_import_says_what_was_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jbcompile.importers.run as run

    release = tmp_path / "rows.jsonl"
    release.write_text("{}\n")
    out = tmp_path / "imported"

    def stopped(*_: object, **__: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "run_import", stopped)
    result = CliRunner().invoke(app, ["import", "jubaku-jsonl", str(release), "--out", str(out)])
    assert result.exit_code == 130 and "interrupted; nothing was written" in result.output, result.output

    def written(*_: object, **__: object) -> object:
        (out / "templates").mkdir(parents=True)
        (out / "dataset.yaml").write_text("name: x\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "run_import", written)
    result = CliRunner().invoke(app, ["import", "jubaku-jsonl", str(release), "--out", str(out)])
    assert result.exit_code == 130 and "was written before the stop (it is whole)" in result.output


@pytest.mark.parametrize("name", ["manifest.json", "croissant.json"])
def test_a_build_file_that_is_no_file_is_f002_for_diff_publish_and_verify_readers(
    tmp_path: Path, name: str
) -> None:
    """Said of a FIFO manifest.json "has no manifest.json" (P003), of a FIFO croissant.json "listed in the
    manifest but missing" (P005): F002 names what is there instead."""
    from jbcompile.build import build_folder
    from jbcompile.project import load_project
    from jbcompile.publish.buildfolder import integrity_problems, open_build

    build = tmp_path / "build"
    build_folder(load_project(_sources(tmp_path)), build, checks=False)
    if name == "croissant.json":
        opened = open_build(build)
        (build / name).unlink()
        os.mkfifo(build / name)
        _f002(lambda: integrity_problems(opened))
    else:
        (build / name).unlink()
        os.mkfifo(build / name)
        _f002(lambda: open_build(build))


def test_a_vocabulary_csv_that_is_no_file_is_f002_for_the_template_import(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "new_templates - Age.csv").write_text("Q_id,Category\n", encoding="utf-8")
    os.mkfifo(folder / "vocabulary.csv")
    result = CliRunner().invoke(app, ["import", "bbq-templates", str(folder), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "F002" in result.output and "vocabulary.csv" in result.output, (
        result.output
    )
    assert not (tmp_path / "o").exists()
