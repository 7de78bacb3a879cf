"""One rule for which files are sources (the loader and the sources hash agree), and the checks of where
a template stands: its file name, its category folder, ids that differ only in case, stray braces."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError, Severity
from jbcompile.project import load_project
from jbcompile.sourcefiles import sources_hash, walk_sources

from tests.helpers import compile_folder, edit, problems_of

AGE_WORK = "templates/Age/age-work.yaml"


def _notes(root: Path) -> dict[str, list[str]]:
    notes: dict[str, list[str]] = {}
    for d in load_project(root).notes:
        notes.setdefault(d.code, []).append(d.path or "")
    return notes


def test_a_hidden_template_is_neither_built_nor_hashed_and_is_reported(mini_sources: Path) -> None:
    before = sources_hash(mini_sources)
    hidden = mini_sources / "templates/Age/.age-copy.yaml"
    shutil.copy(mini_sources / AGE_WORK, hidden)
    assert sources_hash(mini_sources) == before  # not a source: not in the hash …
    assert len(load_project(mini_sources).templates) == 3  # … and not built
    [note] = _notes(mini_sources)["S012"]
    assert note.endswith(".age-copy.yaml")


def test_every_file_the_build_reads_is_in_the_hash(mini_sources: Path) -> None:
    walk = walk_sources(mini_sources)
    for path in [walk.dataset, *walk.vocab, *walk.templates]:
        before = sources_hash(mini_sources)
        path.write_bytes(path.read_bytes() + b"\n# edited\n")
        assert sources_hash(mini_sources) != before, path


def test_a_yml_template_is_an_error_not_silence(mini_sources: Path) -> None:
    shutil.copy(mini_sources / AGE_WORK, mini_sources / "templates/Age/age-more.yml")
    [problem] = problems_of(mini_sources)
    assert problem.code == "S011" and problem.path.endswith("age-more.yml")
    assert "age-more.yaml" in (problem.hint or "")


def test_other_files_among_the_templates_are_reported(mini_sources: Path) -> None:
    (mini_sources / "templates/Age/notes.txt").write_text("todo")
    (mini_sources / "vocab/old").mkdir()
    (mini_sources / "vocab/old/Age.yaml").write_text("category: Age\n")
    notes = _notes(mini_sources)
    assert sorted(Path(p).name for p in notes["S013"]) == ["Age.yaml", "notes.txt"]
    assert len(compile_folder(mini_sources).project.templates) == 3


def test_a_build_folder_inside_the_sources_is_skipped_with_a_note(mini_sources: Path) -> None:
    from jbcompile.build import write_build

    before = sources_hash(mini_sources)
    compiled = compile_folder(mini_sources)
    nested = mini_sources.parent / "b"
    write_build(compiled, nested)
    nested.rename(mini_sources / "old-build")
    assert sources_hash(mini_sources) == before
    assert "S016" in _notes(mini_sources)


def test_an_unknown_top_level_entry_is_reported_with_a_suggestion(mini_sources: Path) -> None:
    (mini_sources / "vocabs").mkdir()
    (mini_sources / "vocabs/extra.yaml").write_text("category: Age\n")
    [note] = [d for d in load_project(mini_sources).notes if d.code == "S015"]
    assert "did you mean vocab?" in note.message and note.severity is Severity.WARNING


@pytest.mark.parametrize("broken", ["{{NAME1}", "{{{{NAME1}}}}", "{NAME1}}", "{{NAME1}}}"])
def test_unbalanced_braces_are_errors_at_their_column(mini_sources: Path, broken: str) -> None:
    edit(mini_sources / AGE_WORK, "{{NAME1}}と", f"{broken}と")
    problems = [d for d in problems_of(mini_sources) if d.code == "R013"]
    assert len(problems) == 1
    line = (mini_sources / AGE_WORK).read_text(encoding="utf-8").splitlines()[problems[0].line - 1]
    assert line[problems[0].col - 1] in "{}"


def test_a_template_id_that_differs_from_its_file_name_is_reported(mini_sources: Path) -> None:
    edit(mini_sources / AGE_WORK, "id: age-work", "id: age-office")
    [note] = [d for d in compile_folder(mini_sources).diagnostics if d.code == "R014"]
    assert note.path.endswith("age-work.yaml") and note.line == 1 and note.severity is Severity.WARNING


def test_a_template_in_another_categorys_folder_is_an_error(mini_sources: Path) -> None:
    (mini_sources / AGE_WORK).rename(mini_sources / "templates/Disability_status/age-work.yaml")
    [problem] = problems_of(mini_sources)
    assert problem.code == "R015" and "templates/Age/" in (problem.hint or "")


def test_template_ids_that_differ_only_in_case_are_an_error(mini_sources: Path) -> None:
    twin = mini_sources / "templates/Age/twin.yaml"
    shutil.copy(mini_sources / AGE_WORK, twin)
    edit(twin, "id: age-work", "id: Age-Work")
    errors = [d.code for d in problems_of(mini_sources) if d.severity is Severity.ERROR]
    assert errors == ["R016"]


def test_the_bundled_benchmark_follows_the_placement_rules(bundled_sources: Path) -> None:
    project = load_project(bundled_sources)
    assert not [d for d in project.notes if d.code.startswith(("R014", "R015", "S01"))]


def test_a_missing_templates_folder_is_an_error(mini_sources: Path) -> None:
    shutil.rmtree(mini_sources / "templates")
    with pytest.raises(DiagnosticError) as error:
        load_project(mini_sources)
    assert [d.code for d in error.value.diagnostics] == ["S014"]


def test_a_broken_link_among_the_templates_is_an_error(mini_sources: Path) -> None:
    (mini_sources / "templates/Age/gone.yaml").symlink_to(mini_sources / "nowhere.yaml")
    assert [d.code for d in problems_of(mini_sources)] == ["S013"]


def test_a_linked_template_folder_is_read_and_hashed_and_a_loop_is_reported(
    mini_sources: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    (mini_sources / AGE_WORK).rename(elsewhere / "age-work.yaml")
    (mini_sources / "templates/Age/linked").symlink_to(elsewhere)
    (mini_sources / "templates/loop").symlink_to(mini_sources / "templates")
    before = sources_hash(mini_sources)
    assert len(compile_folder(mini_sources).project.templates) == 3
    assert "S018" in _notes(mini_sources)
    (elsewhere / "age-work.yaml").write_text(
        (elsewhere / "age-work.yaml").read_text(encoding="utf-8") + "\n", encoding="utf-8"
    )
    assert sources_hash(mini_sources) != before


def test_version_control_entries_are_noted_not_warned(mini_sources: Path) -> None:
    (mini_sources / ".git").mkdir()
    (mini_sources / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (mini_sources / "LICENSE").write_text("CC-BY-4.0\n")
    before = sources_hash(mini_sources)
    notes = {d.code: d for d in load_project(mini_sources).notes if d.code in ("S012", "S015")}
    assert notes["S012"].severity is Severity.INFO and notes["S015"].severity is Severity.INFO
    (mini_sources / ".git/HEAD").write_text("ref: refs/heads/other\n")
    assert sources_hash(mini_sources) == before


def test_file_names_that_differ_only_in_case_are_an_error(mini_sources: Path) -> None:
    twin = mini_sources / "templates/Age/AGE-WORK.yaml"
    shutil.copy(mini_sources / AGE_WORK, twin)
    edit(twin, "id: age-work", "id: age-work-2")
    codes = [d.code for d in problems_of(mini_sources)]
    assert "S019" in codes
