"""Sources are read with YAML 1.2's core types: YAML 1.1's `off`, `no`, `y`, `1:30`, `010` keep what was
written (PyYAML's defaults turned a probe's documented ``off: true`` into the key ``false``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.loader import parse_yaml
from jbcompile.starter import init_benchmark

from tests.helpers import cli, compile_folder


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("off", "off"), ("on", "on"), ("no", "no"), ("yes", "yes"), ("y", "y"), ("N", "N"),
        ("1:30", "1:30"), ("010", 10), ("0o17", 15), ("0x1f", 31), ("-3", -3), ("1.5", 1.5),
        ("true", True), ("False", False), ("~", None), ("1_000", "1_000"),
    ],
)  # fmt: skip
def test_a_value_reads_as_yaml_1_2_does(written: str, read: object) -> None:
    assert parse_yaml(f"value: {written}\n", "x.yaml").data == {"value": read}


def test_a_key_is_the_name_as_written() -> None:
    data = parse_yaml("off: 1\nno: 2\n1.50: 3\ntrue: 4\n", "x.yaml").data
    assert data == {"off": 1, "no": 2, "1.50": 3, "true": 4}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    init_benchmark(tmp_path / "bench", "bbq")
    return tmp_path / "bench" / "sources"


def test_the_documented_off_settings_are_accepted_unquoted(sources: Path, tmp_path: Path) -> None:
    """docs/audit.md's `context-free: {off: true, reason: …}` and docs/checks.md's `JA107: off`."""
    dataset = sources / "dataset.yaml"
    text = dataset.read_text(encoding="utf-8")
    assert "\naudit:" not in text and "\nchecks:" not in text
    dataset.write_text(
        text + "audit:\n  probes:\n    option-length: {off: true, reason: a test}\nchecks:\n  JA107: off\n",
        encoding="utf-8",
    )
    compile_folder(sources, checks=True)  # raises on S002/S003
    out = tmp_path / "build"
    done = cli("build", "--sources", str(sources), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    judged = [r for r in manifest["audit"]["results"] if r["probe"] == "option-length"]
    assert judged and all(r["overall"]["status"] == "not judged" for r in judged), judged


@pytest.mark.parametrize(
    "value", ["!!binary 4oCu5pys", "!!set {a, b}", "!!omap [a: 1]", "!!pairs [a: 1]", "!local x"]
)
def test_a_tag_that_makes_other_than_text_is_refused_at_its_value(value: str) -> None:
    """`!!binary` turned a text into bytes that JA120 never read (a U+202E reached the rows)."""
    with pytest.raises(DiagnosticError) as refused:
        parse_yaml(f"name: x\nambiguous_context: {value}\n", "t.yaml")
    (problem,) = refused.value.diagnostics
    assert (problem.code, problem.line, problem.col) == ("Y011", 2, 20) and problem.hint


def test_a_binary_text_with_a_hidden_character_never_reaches_the_rows(sources: Path) -> None:
    template = sources / "templates" / "Age" / "age-tiller.yaml"
    lines = template.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("ambiguous_context:"))
    hidden = base64.b64encode("市民農園で、{{NAME1}}と{{NAME2}}が\u202e話していた。".encode()).decode()
    lines[index] = f"ambiguous_context: !!binary {hidden}"
    template.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as refused:
        compile_folder(sources, checks=True)
    assert [d.code for d in refused.value.diagnostics] == ["Y011"]
