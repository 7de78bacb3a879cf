"""`jbcompile init`: a new benchmark of any built-in design that checks and builds clean at once, and
never a file overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jbcompile.designs import DEFAULT_DESIGN, all_designs
from jbcompile.schema import DatasetConfig
from jbcompile.starter import starter_designs

from tests.helpers import cli

BUILT_IN = [
    design.name for design in all_designs() if design.folder.is_relative_to(Path(__file__).parents[1])
]


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_every_built_in_design_has_a_starter() -> None:
    assert set(BUILT_IN) <= set(starter_designs()) and len(BUILT_IN) >= 3


@pytest.mark.parametrize("design", BUILT_IN)
def test_init_then_check_then_build_in_an_empty_folder(tmp_path: Path, design: str) -> None:
    made = cli("init", "bench", "--kind", design, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    bench = tmp_path / "bench"
    dataset = yaml.safe_load((bench / "sources" / "dataset.yaml").read_text(encoding="utf-8"))
    required = [name for name, field in DatasetConfig.model_fields.items() if field.is_required()]
    assert set(required) <= set(dataset) and len(dataset["unknown_options"]) >= 8
    templates = list((bench / "sources" / "templates").rglob("*.yaml"))
    assert (
        len(templates) == 1
        and yaml.safe_load(templates[0].read_text(encoding="utf-8")).get("kind", DEFAULT_DESIGN) == design
    )
    checked = cli("check", cwd=bench)
    assert checked.returncode == 0 and "no findings" in checked.stderr, checked.stderr
    built = cli("build", cwd=bench)
    assert built.returncode == 0, built.stderr
    assert "[warning]" not in built.stderr and "[error]" not in built.stderr, built.stderr
    manifest = json.loads((bench / "build" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["dataset"] == "bench" and all(n > 0 for n in manifest["rows"].values())


def test_init_defaults_to_the_default_design_in_the_working_folder(tmp_path: Path) -> None:
    assert cli("init", cwd=tmp_path).returncode == 0
    template = next((tmp_path / "sources" / "templates").rglob("*.yaml"))
    assert yaml.safe_load(template.read_text(encoding="utf-8")).get("kind", DEFAULT_DESIGN) == DEFAULT_DESIGN
    assert (tmp_path / "sources" / "CHANGELOG.md").read_text(encoding="utf-8").count("## 0.1.0") == 1


def test_init_never_overwrites_and_then_writes_nothing(tmp_path: Path) -> None:
    assert cli("init", "bench", cwd=tmp_path).returncode == 0
    before = files_under(tmp_path)
    again = cli("init", "bench", "--kind", BUILT_IN[-1], cwd=tmp_path)
    assert again.returncode == 2 and "CL007" in again.stderr and "nothing was written" in again.stderr
    assert files_under(tmp_path) == before
    # one file in the way is enough: nothing else is written either
    lone = tmp_path / "lone" / "sources"
    lone.mkdir(parents=True)
    (lone / "CHANGELOG.md").write_text("mine\n", encoding="utf-8")
    refused = cli("init", "lone", cwd=tmp_path)
    assert refused.returncode == 2 and "CL007" in refused.stderr
    assert files_under(tmp_path / "lone") == {"sources/CHANGELOG.md": b"mine\n"}
    # a file where a folder must go
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "sources").write_text("x", encoding="utf-8")
    blocked = cli("init", "blocked", cwd=tmp_path)
    assert blocked.returncode == 2 and "CL007" in blocked.stderr and "Traceback" not in blocked.stderr


def test_init_refuses_a_design_it_does_not_know(tmp_path: Path) -> None:
    result = cli("init", "bench", "--kind", "nope", cwd=tmp_path)
    assert result.returncode == 2 and "CL001" in result.stderr and DEFAULT_DESIGN in result.stderr
    assert not (tmp_path / "bench").exists()
