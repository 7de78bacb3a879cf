"""Bounds the loader enforces before anything else (MeCab included) reads a source file, and positions
of the problems no YAML parser positions by itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.limits import MAX_DEPTH, MAX_SOURCE_FILE_BYTES, MAX_TEXT_CHARS
from jbcompile.loader import load_yaml, parse_yaml

REPO = Path(__file__).resolve().parent.parent
AGE_WORK = "templates/Age/age-work.yaml"


def _problem(text: str) -> tuple[str, int | None, int | None]:
    with pytest.raises(DiagnosticError) as error:
        parse_yaml(text, "x.yaml")
    [problem] = error.value.diagnostics
    assert problem.path == "x.yaml"
    return problem.code, problem.line, problem.col


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * 9) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_quickly_with_its_line() -> None:
    started = time.perf_counter()
    code, line, _ = _problem(_bomb())
    assert code == "Y007" and line is not None
    assert time.perf_counter() - started < 10  # a bound, not a speed goal: unbounded takes minutes


def test_a_recursive_alias_names_its_line() -> None:
    assert _problem("ok: 1\nloop: &a [1, *a]\n") == ("Y009", 2, 7)
    assert _problem("loop: &m {self: *m}\n")[0:2] == ("Y009", 1)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x\n", "a: " + "{b: " * 70])
def test_deep_nesting_is_refused_without_crashing(text: str) -> None:
    code, line, col = _problem(text)
    assert code in ("Y008", "Y001") and line is not None and col is not None


def test_nesting_within_the_bound_loads() -> None:
    depth = MAX_DEPTH - 1
    assert parse_yaml("[" * depth + "]" * depth, "x.yaml").data is not None


def test_a_giant_text_is_refused_at_its_position() -> None:
    assert _problem("ok: 1\ntext: " + "あ" * (MAX_TEXT_CHARS + 1) + "\n") == ("Y010", 2, 7)
    assert parse_yaml("text: " + "あ" * MAX_TEXT_CHARS, "x.yaml").data["text"]


def test_a_file_above_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_SOURCE_FILE_BYTES + b"\n")
    with pytest.raises(DiagnosticError) as error:
        load_yaml(path)
    assert [d.code for d in error.value.diagnostics] == ["Y006"]


def test_a_bad_byte_is_reported_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"a: ok\nb: \xe3\x81\x82\xff\n")  # line 2: "b: あ" then a byte that is not UTF-8
    with pytest.raises(DiagnosticError) as error:
        load_yaml(path)
    [problem] = error.value.diagnostics
    assert (problem.code, problem.line, problem.col) == ("Y005", 2, 5)
    assert "0xff" in problem.message


def test_mecab_never_sees_a_giant_text_in_check_or_build(mini_sources: Path, tmp_path: Path) -> None:
    """A million-character text crashed MeCab (exit 139); now the loader refuses it first."""
    path = mini_sources / AGE_WORK
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("新しい会計ソフト", "新" * 1_000_000, 1), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{REPO / 'compiler'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for args in (["check"], ["build", "--out", str(tmp_path / "b")]):
        result = subprocess.run(
            [sys.executable, "-m", "jbcompile.cli", *args, "--sources", str(mini_sources)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert result.returncode == 2, result.stderr
        assert "age-work.yaml:10:" in result.stderr and "Y010" in result.stderr


def test_a_control_character_is_reported_at_its_line_and_column() -> None:
    code, line, col = _problem("a: ok\nb: x\x07y\n")
    assert (code, line, col) == ("Y001", 2, 5)


def test_a_large_file_written_out_is_no_alias_bomb(monkeypatch) -> None:
    import jbcompile.loader as loader

    monkeypatch.setattr(loader, "MAX_NODES", 1_000)
    plain = "\n".join(f"k{i}: [a, b, c]" for i in range(1_000))  # 4,000 values, each written out
    assert len(parse_yaml(plain, "x.yaml").data) == 1_000
    assert _problem(_bomb(4))[0] == "Y007"  # 9**4 values from 37 written


@pytest.mark.parametrize("char", ["\0", "\x01", "\x7f", "\ufffe"])
def test_a_refused_character_is_positioned_where_the_editor_shows_it(char: str) -> None:
    """libyaml gives a refused character's offset in UTF-8 bytes: after Japanese text (three bytes a
    character) it pointed lines past the file's end."""
    text = "title: 年齢についての質問\n" * 24 + "context: 高齢の人が" + char + "来た\nlast: 1\n"
    with pytest.raises(DiagnosticError) as error:
        parse_yaml(text, "x.yaml")
    [problem] = error.value.diagnostics
    assert (problem.code, problem.line, problem.col) == ("Y001", 25, 15)
    assert f"U+{ord(char):04X}" in problem.message


@pytest.mark.parametrize(
    ("char", "name"),
    [("\u2028", "LINE SEPARATOR"), ("\u2029", "PARAGRAPH SEPARATOR"), ("\x85", "NEXT LINE")],
)
def test_a_character_only_yaml_reads_as_a_line_break_is_named_where_it_stands(char: str, name: str) -> None:
    """YAML takes U+2028, U+2029 and U+0085 for line breaks (editors mostly do not): the value was cut and
    the error ("could not find expected ':'") named neither the character nor its line."""
    text = "".join(f"k{n}: 1\n" for n in range(26)) + "context: 高齢の" + char + "人\nlast: 1\n"
    with pytest.raises(DiagnosticError) as error:
        parse_yaml(text, "x.yaml")
    [problem] = error.value.diagnostics
    assert (problem.code, problem.line, problem.col) == ("Y001", 27, 13)
    assert f"U+{ord(char):04X} {name}" in problem.message and "line break" in problem.message
    # in double quotes U+2028 and U+2029 are kept as they are (an import writes them so); U+0085 would
    # become a space there, so it is refused wherever it stands
    quoted = text.replace("高齢の" + char + "人", f'"高齢の{char}人"')
    if char == "\x85":
        assert _problem(quoted) == ("Y001", 27, 14)
    else:
        assert parse_yaml(quoted, "x.yaml").data["context"] == f"高齢の{char}人"


def test_yaml_errors_after_a_line_separator_in_quotes_count_lines_as_an_editor_does() -> None:
    text = 'a: "x\u2028y"\nb: [1, 2\n'
    assert _problem(text)[1:] == (3, 1)
