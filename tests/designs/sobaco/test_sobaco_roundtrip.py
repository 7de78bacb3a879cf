"""Build folders of the sobaco and jubaku kinds load with `datasets.load_dataset`, offline; the bundled
sources hold the promised templates; the JSON Schema describes both kinds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from jbcompile.build import write_build
from jbcompile.schema.jsonschema import json_schema

from tests.helpers import compile_folder

datasets = pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def kinds_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    from tests.designs.conftest import KINDS_SOURCES

    out = tmp_path_factory.mktemp("kinds") / "build"
    compiled = compile_folder(KINDS_SOURCES)
    write_build(compiled, out)
    return out, {name: (c.spec.schema.names, c.rows) for name, c in compiled.configs.items()}


@pytest.mark.parametrize("config", ["sobaco", "sobaco_dummy", "jubaku"])
def test_load_dataset_round_trip(kinds_build: tuple[Path, dict], config: str) -> None:
    folder, configs = kinds_build
    columns, rows = configs[config]
    loaded = datasets.load_dataset(str(folder), config, split="test")
    assert len(loaded) == len(rows)
    assert loaded.column_names == columns
    assert loaded[0] == rows[0]
    assert loaded[len(loaded) - 1] == rows[-1]


def test_manifest_counts_rows_per_config(kinds_build: tuple[Path, dict]) -> None:
    folder, _ = kinds_build
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["rows"] == {"sobaco": 864, "sobaco_dummy": 72, "jubaku": 16}


def test_two_builds_are_byte_identical(kinds_build: tuple[Path, dict], tmp_path: Path) -> None:
    from tests.designs.conftest import KINDS_SOURCES

    folder, _ = kinds_build
    again = tmp_path / "again"
    write_build(compile_folder(KINDS_SOURCES), again)
    for config in ("sobaco", "sobaco_dummy", "jubaku"):
        relative = f"data/{config}/test-00000-of-00001.parquet"
        assert (folder / relative).read_bytes() == (again / relative).read_bytes()


def test_bundled_sources_hold_the_promised_templates(bundled_sources: Path) -> None:
    """The scale issue 16 asks of the bundled benchmark (README, "The bundled benchmark")."""
    compiled = compile_folder(bundled_sources)
    bbq = [t.model for t in compiled.project.templates if t.kind == "bbq"]
    per_category = Counter(t.category for t in bbq)
    assert len(per_category) == 5 and min(per_category.values()) >= 50
    for category in per_category:
        added = sum(t.origin == "added" for t in bbq if t.category == category)
        assert added >= 0.4 * per_category[category], category
    assert all(t.attested.strip() for t in bbq)
    targets = Counter(g for t in bbq if t.category == "Age" for g in t.stereotyped_groups)
    assert abs(targets["old"] - targets["nonOld"]) <= 10, targets  # both directions, roughly balanced
    assert all(
        t.model.review is not None and t.model.review.status == "reviewed" for t in compiled.project.templates
    )
    sobaco = compiled.configs["sobaco"].rows
    pairs = {(r["template_id"], r["category"]) for r in sobaco}
    assert len(pairs) >= 33
    assert Counter(category for _, category in pairs).keys() == {"Age", "Gender", "Hierarchical_relationship"}
    assert len({r["template_id"] for r in compiled.configs["sobaco_dummy"].rows}) >= 4
    cases = {(r["template_id"], r["category"]) for r in compiled.configs["jubaku"].rows}
    assert len(cases) >= 30 and len({category for _, category in cases}) >= 10
    per_problem = Counter((r["template_id"], r["type"], r["question_id"]) for r in sobaco)
    assert set(per_problem.values()) == {36, 72, 108}
    culture_unknown = {
        r["template_id"] for r in sobaco if r["type"] == "culture" and r["label"] == r["unknown_label"]
    }
    assert 0 < len(culture_unknown) < len(pairs)  # usually a name, sometimes unknown


def test_json_schema_describes_both_kinds() -> None:
    schema = json.dumps(json_schema("template"), ensure_ascii=False)
    for field in ("biased_answer", "culture_answer", "dummy_context", "neutral_response", "conclusion"):
        assert field in schema
    assert "stereotype-following answer picks for the first question" in schema
