"""A build never deletes what is not a build, never ships an empty build, and fails with a diagnostic."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from jbcompile.build import write_build
from jbcompile.compiled import ConfigRows
from jbcompile.diagnostics import DiagnosticError

from tests.helpers import compile_folder

REPO = Path(__file__).resolve().parent.parent


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _codes(error: pytest.ExceptionInfo[DiagnosticError]) -> list[str]:
    return [d.code for d in error.value.diagnostics]


def cli(*args: str, cwd: Path | None = None, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    env["PYTHONPATH"] = f"{REPO / 'compiler'}{os.pathsep}{env.get('PYTHONPATH', '')}"

    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "jbcompile.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        preexec_fn=limit,
    )


def test_a_folder_with_someone_elses_manifest_json_is_never_replaced(
    mini_sources: Path, tmp_path: Path
) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "manifest.json").write_text('{"name": "my web app", "files": {}}')
    (web / "index.html").write_text("<h1>keep me</h1>")
    before = _tree(web)
    with pytest.raises(DiagnosticError) as error:
        write_build(compile_folder(mini_sources), web)
    assert _codes(error) == ["B001"]
    assert "its manifest.json is not one jbcompile wrote" in error.value.diagnostics[0].message
    assert _tree(web) == before
    (web / "manifest.json").unlink()
    with pytest.raises(DiagnosticError) as error:
        write_build(compile_folder(mini_sources), web)
    assert "(no manifest.json)" in error.value.diagnostics[0].message


def test_a_build_folder_holding_a_users_file_is_never_replaced(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    (out / "notes.md").write_text("my notes")
    with pytest.raises(DiagnosticError) as error:
        write_build(compile_folder(mini_sources), out)
    assert _codes(error) == ["B001"] and "notes.md" in error.value.diagnostics[0].message
    assert (out / "notes.md").read_text() == "my notes"


def test_out_naming_an_existing_file_is_refused(mini_sources: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("keep")
    result = cli("build", "--sources", str(mini_sources), "--out", str(target))
    assert result.returncode == 2 and "B001" in result.stderr and "Traceback" not in result.stderr
    assert target.read_text() == "keep"


@pytest.mark.parametrize("out", [".", "..", "sources/..", "sources/build", "sources/templates"])
def test_out_that_would_take_the_working_folder_or_the_sources_with_it_is_refused(
    mini_sources: Path, out: str
) -> None:
    work = mini_sources.parent
    (work / "keep.txt").write_text("mine")
    before = _tree(mini_sources)
    result = cli("build", "--out", out, cwd=work)
    assert result.returncode == 2, result.stderr
    assert "B003" in result.stderr and "Traceback" not in result.stderr
    assert _tree(mini_sources) == before and (work / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("damage", ["missing", "misspelled", "empty"])
def test_an_empty_build_is_an_error_and_keeps_the_previous_build(
    mini_sources: Path, tmp_path: Path, damage: str
) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    before = _tree(out)
    templates = mini_sources / "templates"
    if damage == "misspelled":
        templates.rename(mini_sources / "template")
    else:
        for path in sorted(templates.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        if damage == "missing":
            templates.rmdir()
    result = cli("build", "--sources", str(mini_sources), "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert ("S014" if damage != "empty" else "B002") in result.stderr
    if damage == "misspelled":
        assert "template is there: a misspelling?" in result.stderr
    assert _tree(out) == before


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_failed_write_is_a_b004_diagnostic_and_keeps_the_previous_build(
    mini_sources: Path, tmp_path: Path, monkeypatch, code: int
) -> None:
    out = tmp_path / "build"
    compiled = compile_folder(mini_sources)
    write_build(compiled, out)
    before = _tree(out)
    import pyarrow.parquet as pq

    def failing(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(pq, "ParquetWriter", failing)  # how emit/data.py writes every data file
    with pytest.raises(DiagnosticError) as error:
        write_build(compiled, out)
    assert _codes(error) == ["B004"] and errno.errorcode[code] in error.value.diagnostics[0].message
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "sources"]


def test_a_file_size_limit_gives_a_diagnostic_not_a_killed_process(
    mini_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    before = _tree(out)
    result = cli("build", "--sources", str(mini_sources), "--out", str(out), limit_bytes=8_000)
    assert result.returncode == 2, result.stderr
    assert "B004" in result.stderr and "EFBIG" in result.stderr and "Traceback" not in result.stderr
    assert _tree(out) == before


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{% for x in %}", "README.md.j2:1:1: B005"),
        ("line one\n{{ no_such_variable }}\n", "README.md.j2:2:1: B005"),
        ("{{ dataset.version | no_such_filter }}", "B005"),
        ("{{ 1 / 0 }}", "B005"),
    ],
)
def test_broken_card_templates_are_diagnostics_with_their_line(
    mini_sources: Path, tmp_path: Path, template: str, expected: str
) -> None:
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "README.md.j2").write_text(template)
    result = cli("build", "--sources", str(mini_sources), "--out", str(tmp_path / "b"), "--cards", str(cards))
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ('{{ lipsum.__globals__["os"].environ["HF_TOKEN"] }}', "__globals__"),  # Python's internals
        ('{{ cycler.__init__.__globals__.os.popen("touch PWNED").read() }}', "unsafe"),  # a process
        ("{% for i in range(100000000) %}x{% endfor %}", "MAX_RANGE"),  # a range beyond the sandbox's
        ("{{ 'x' * 3000000000 }}", "repeated text"),  # a string that would fill the memory
        ("{% for i in range(99999) %}{{ 'y' * 200 }}{% endfor %}", "more than 16,777,216 characters"),
        ("{{ 2 ** 99999999 }}", "exponent"),
    ],
)
def test_a_card_template_renders_in_a_sandbox(
    mini_sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str, said: str
) -> None:
    """A card template may come with someone else's benchmark (``./cards`` is read by default): it reaches
    the card's variables and nothing else, and what it renders is bounded. Each of these is B005, nothing
    is written, and no secret of the environment reaches the output."""
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "README.md.j2").write_text("# {{ dataset.name }}\n" + template + "\n", encoding="utf-8")
    monkeypatch.setenv("HF_TOKEN", "hf_SECRETsecret0123456789")
    result = cli(
        "build",
        "--sources",
        str(mini_sources),
        "--out",
        str(tmp_path / "b"),
        "--cards",
        str(cards),
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "B005" in result.stderr and said in result.stderr and "Traceback" not in result.stderr
    assert "SECRET" not in result.stdout + result.stderr
    assert not (tmp_path / "b").exists() and not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    ("template", "where"),
    [
        ("# {{ dataset.name }}\n\n評価用\u202eデータ\n", "README.md.j2:3:4: F005"),  # a bidi override
        ("{% include 'part.md' %}\n", "part.md:1:3: F005"),  # in a file the card includes
    ],
)
def test_a_card_template_with_a_character_no_one_can_see_is_refused(
    mini_sources: Path, tmp_path: Path, template: str, where: str
) -> None:
    """The card is what a dataset's page shows: a character that reorders or hides text in its template
    would be published unreviewed. A zero-width joiner (part of an emoji) passes."""
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "README.md.j2").write_text(template, encoding="utf-8")
    (cards / "part.md").write_text("ok\x1b[2Jx\n", encoding="utf-8")  # an escape sequence's ESC
    result = cli("build", "--sources", str(mini_sources), "--out", str(tmp_path / "b"), "--cards", str(cards))
    assert result.returncode == 2 and where in result.stderr, result.stderr
    assert "U+" in result.stderr and "Traceback" not in result.stderr and not (tmp_path / "b").exists()
    (cards / "README.md.j2").write_text("# {{ dataset.name }} 👩\u200d💻\n", encoding="utf-8")
    result = cli("build", "--sources", str(mini_sources), "--out", str(tmp_path / "b"), "--cards", str(cards))
    assert result.returncode == 0, result.stderr
    assert "👩\u200d💻" in (tmp_path / "b" / "README.md").read_text(encoding="utf-8")


def test_cards_folder_without_a_card_template_is_an_option_error(mini_sources: Path, tmp_path: Path) -> None:
    result = cli(
        "build", "--sources", str(mini_sources), "--out", str(tmp_path / "b"), "--cards", str(tmp_path)
    )
    assert result.returncode == 2 and "CL006" in result.stderr


def test_card_rows_per_category_is_one_markdown_table(mini_sources: Path, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    text = (out / "README.md").read_text(encoding="utf-8")
    section = text.split("## Rows per category", 1)[1].split("\n## ", 1)[0]
    tokens = MarkdownIt("commonmark").enable("table").parse(section)
    assert [t.type for t in tokens].count("table_open") == 1
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) == 1 + 2  # the header and one row per category (Age, Disability_status)


def test_stats_and_json_agree_on_an_empty_build_error(tmp_path: Path) -> None:
    (tmp_path / "dataset.yaml").write_text((REPO / "tests/fixtures/mini_sources/dataset.yaml").read_text())
    (tmp_path / "templates").mkdir()
    result = cli("stats", "--sources", str(tmp_path), "--json")
    assert result.returncode == 2 and "B002" in result.stderr and json.loads(result.stdout or "null") is None


def test_a_config_without_rows_is_refused_and_keeps_the_previous_build(
    mini_sources: Path, tmp_path: Path
) -> None:
    out = tmp_path / "build"
    compiled = compile_folder(mini_sources)
    write_build(compiled, out)
    before = _tree(out)
    lite = compiled.configs["lite"]
    compiled.configs["lite"] = ConfigRows(lite.spec, lite.kind)  # a config without rows
    with pytest.raises(DiagnosticError) as error:
        write_build(compiled, out)
    assert _codes(error) == ["B006"]
    assert _tree(out) == before


def test_a_language_no_template_has_builds_nothing_and_is_an_error(
    mini_sources: Path, tmp_path: Path
) -> None:
    (mini_sources / "templates/Age/age-phone.yaml").unlink()  # the only template with English texts
    result = cli("build", "--sources", str(mini_sources), "--lang", "en", "--out", str(tmp_path / "b"))
    assert result.returncode == 2 and "B002" in result.stderr and "R012" in result.stderr
    assert not (tmp_path / "b").exists()


def test_a_build_folder_a_file_manager_littered_is_still_replaced(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    (out / "data" / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    write_build(compile_folder(mini_sources), out)
    assert not (out / "data" / ".DS_Store").exists()


@pytest.mark.parametrize("out", ["afile/sub", "afile/sub/deeper"])
def test_an_out_under_a_file_names_the_file_not_eexist(mini_sources: Path, tmp_path: Path, out: str) -> None:
    """A --out below a file failed with the system's "File exists (EEXIST)", which names no file."""
    (tmp_path / "afile").write_text("mine\n", encoding="utf-8")
    result = cli("build", "--sources", str(mini_sources), "--out", out, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "B004" in result.stderr and "afile is a file, not a folder" in result.stderr, result.stderr
    assert "move the file afile away" in result.stderr and "EEXIST" not in result.stderr
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "mine\n"
