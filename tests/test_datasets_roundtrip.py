"""The build folder loads with `datasets.load_dataset`, offline, with the documented features."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.build import write_build

from tests.helpers import compile_folder

datasets = pytest.importorskip("datasets")

COLUMNS = [
    "example_id",
    "template_id",
    "question_index",
    "category",
    "subcategory",
    "question_polarity",
    "context_condition",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
    "answer_info",
    "additional_metadata",
    "target_label",
    "unknown_label",
    "biased_label",
    "context_bias",
    "is_additional",
    "fillers",
    "rationale",
]


@pytest.mark.parametrize("config", ["lite", "full"])
def test_load_dataset_round_trip(mini_sources: Path, tmp_path: Path, config: str) -> None:
    compiled = compile_folder(mini_sources)
    out = tmp_path / "build"
    write_build(compiled, out)
    loaded = datasets.load_dataset(str(out), config, split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.column_names == COLUMNS
    assert loaded.features["label"].dtype == "int64"
    assert loaded.features["answer_info"]["ans0"].feature.dtype == "string"
    assert loaded.to_list() == compiled.configs[config].rows


def test_default_config_is_lite(mini_sources: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    write_build(compile_folder(mini_sources), out)
    loaded = datasets.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == 36


def test_a_rebuilt_folder_loads_fresh_in_the_same_environment(mini_sources: Path, tmp_path: Path) -> None:
    """datasets keys its cache of a local folder on the card's YAML, not on the data files: a rebuild with
    other rows must change that YAML (each config's description names its data's sha256)."""
    from tests.helpers import edit

    out, cache = tmp_path / "build", str(tmp_path / "cache")
    write_build(compile_folder(mini_sources), out)
    first = datasets.load_dataset(str(out), "lite", split="test", cache_dir=cache)
    edit(mini_sources / "templates/Age/age-work.yaml", "新しい会計ソフト", "新しい経理ソフト")
    rebuilt = compile_folder(mini_sources)
    write_build(rebuilt, out)
    second = datasets.load_dataset(str(out), "lite", split="test", cache_dir=cache)
    assert second.to_list() == rebuilt.configs["lite"].rows
    assert second.to_list() != first.to_list()
