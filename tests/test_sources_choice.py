"""Which benchmark a command works on: found from the working folder (its sources folder, or any folder
inside it), the bundled one only when none is found, and always named in the command's first line."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.paths import SourcesChoice, bundled_sources, choose_sources, find_sources

from tests.helpers import cli, edit


@pytest.fixture
def bench(mini_sources: Path) -> Path:
    """A benchmark folder: bench/sources (the mini benchmark), as `jbcompile init` lays it out."""
    return mini_sources.parent


def test_find_sources_from_the_benchmark_its_sources_and_any_folder_inside(bench: Path) -> None:
    sources = bench / "sources"
    assert find_sources(bench) == sources
    assert find_sources(sources) == sources
    assert find_sources(sources / "templates" / "Age") == sources
    (bench / "notes").mkdir()
    assert find_sources(bench / "notes") == sources  # a sibling folder: the parent's sources/


def test_the_working_folder_decides_and_the_bundled_benchmark_comes_last(
    bench: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path_factory.mktemp("empty")
    monkeypatch.chdir(empty)
    assert choose_sources(None) == SourcesChoice(bundled_sources(), "bundled")
    monkeypatch.chdir(bench / "sources" / "vocab")
    found = choose_sources(None)
    assert found.how == "found" and found.root.resolve() == (bench / "sources").resolve()
    assert found.build_folder().resolve() == (bench / "build").resolve()  # beside the sources, not in them
    assert choose_sources(Path("x")) == SourcesChoice(Path("x"), "given")


def test_build_inside_a_benchmarks_sources_builds_that_benchmark_and_says_so(bench: Path) -> None:
    result = cli("build", cwd=bench / "sources" / "templates")
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("building mini-bench v1.2.3 (Mini bench) from ")
    assert str(bench / "sources") in first and "into" in first
    assert (bench / "build" / "manifest.json").is_file()  # beside the sources: never inside them
    assert "lite 36" in result.stderr  # the mini benchmark, not the bundled 3,000 rows


@pytest.mark.parametrize("command", [["check"], ["stats", "--json"], ["check", "--format", "json"]])
def test_every_command_that_reads_sources_names_them_first(bench: Path, command: list[str]) -> None:
    result = cli(*command, cwd=bench)
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert "mini-bench v1.2.3 (Mini bench) from sources" in first, first


def test_outside_any_benchmark_the_bundled_one_is_used_and_named(tmp_path: Path) -> None:
    result = cli("stats", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("no dataset.yaml in this folder or above it")
    assert "bundled with jbcompile" in first and "jbcompile-demo" in first and "jbcompile init" in first


def test_a_broken_sources_folder_is_reported_not_replaced_by_the_bundled_one(bench: Path) -> None:
    edit(bench / "sources" / "dataset.yaml", "seed: 7", "seed: seven")
    result = cli("check", cwd=bench)
    assert result.returncode == 2 and "S002" in result.stderr and "jbcompile-demo" not in result.stderr
    (bench / "sources" / "dataset.yaml").unlink()
    result = cli("build", cwd=bench)
    assert result.returncode == 2 and "S000" in result.stderr and "bundled" not in result.stderr


def test_fix_and_translate_never_fall_back_to_the_bundled_benchmark(tmp_path: Path) -> None:
    fixed = cli("check", "--fix", cwd=tmp_path)
    assert fixed.returncode == 2 and "CL004" in fixed.stderr and "above it" in fixed.stderr
    translated = cli("translate", "--dry-run", cwd=tmp_path)
    assert translated.returncode == 2 and "TR014" in translated.stderr


def test_fix_inside_a_benchmark_fixes_that_benchmark(bench: Path) -> None:
    template = bench / "sources" / "templates" / "Age" / "age-work.yaml"
    edit(template, "何度も講師に質問していた。", "何度も講師に質問していた。彼らは熱心だった。")
    result = cli("check", "--fix", cwd=bench / "sources" / "templates")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("fixing mini-bench v1.2.3")
    assert "かれらは熱心だった" in template.read_text(encoding="utf-8")


def test_a_name_with_a_line_break_cannot_forge_a_line_of_the_opening(bench: Path) -> None:
    """The opening line is printed before validation: a name's line break is written out, not printed."""
    edit(bench / "sources" / "dataset.yaml", "name: mini-bench", 'name: "mini-bench\\n# forged"')
    result = cli("build", cwd=bench)
    lines = result.stderr.splitlines()
    assert lines[0].startswith("building mini-bench<U+000A># forged v1.2.3 (Mini bench) from "), lines[0]
    assert not any(line.startswith("# forged") for line in lines)
