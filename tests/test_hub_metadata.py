"""The metadata a build carries for the Hub and for dataset search: the card's YAML as huggingface_hub and
datasets read it (configs and dataset_info agree with the data files), and croissant.json, validated with
mlcroissant, with its Responsible-AI fields from dataset.yaml."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from jbcompile.build import build_folder
from jbcompile.designs import all_kinds
from jbcompile.emit.croissant import CROISSANT
from jbcompile.emit.features import features
from jbcompile.emit.manifest import read_manifest
from jbcompile.project import load_project
from jbcompile.publish.release import card_metadata

from tests.helpers import edit

KINDS_SOURCES = Path(__file__).parent / "designs" / "fixtures" / "kinds_sources"
RAI_TEXTS = {
    "creation": "テンプレートは開発者が一から書いた。",
    "review": "二人が全変種を読んだ。",
    "risks": "ステレオタイプを文として含む。",
    "out_of_scope": "訓練には使わない。",
    "personal_data": "実在の人物の情報は含まない。",
    "uses": "言語モデルの社会的バイアスの評価。",
}


def _with_card(sources: Path) -> Path:
    block = "card:\n" + "".join(f"  {key}: {text}\n" for key, text in RAI_TEXTS.items())
    (sources / "dataset.yaml").write_text(
        (sources / "dataset.yaml").read_text(encoding="utf-8") + block, encoding="utf-8"
    )
    return sources


@pytest.fixture(params=["bbq", "sobaco-and-jubaku"])
def built(request, mini_sources: Path, tmp_path: Path) -> Path:
    """A build folder of every built-in design (the mini benchmark; the kinds benchmark), with a card."""
    sources = mini_sources
    if request.param != "bbq":
        sources = tmp_path / "kinds"
        shutil.copytree(KINDS_SOURCES, sources)
    build_folder(load_project(_with_card(sources)), tmp_path / "build", checks=False)
    return tmp_path / "build"


def _card(build: Path) -> dict:
    meta = card_metadata((build / "README.md").read_text(encoding="utf-8"))
    assert meta is not None
    return meta


def test_the_features_are_what_datasets_writes_for_each_designs_schema() -> None:
    import pyarrow as pa
    from datasets import Features

    for kind in all_kinds():
        for spec in kind.configs:
            assert features(spec.schema) == Features.from_arrow_schema(spec.schema)._to_yaml_list(), spec.name
    # the Arrow types a design may use beyond today's schemas
    other = pa.schema(
        [
            ("score", pa.float64()),
            ("weight", pa.float32()),
            ("small", pa.int8()),
            ("nested", pa.list_(pa.list_(pa.string()))),
            ("big", pa.large_list(pa.int32())),
            ("deep", pa.struct([("items", pa.list_(pa.struct([("ok", pa.bool_())])))])),
            ("code", pa.dictionary(pa.int32(), pa.string())),
        ]
    )
    assert features(other) == Features.from_arrow_schema(other)._to_yaml_list()


def test_the_card_yaml_passes_huggingface_hubs_card_data(built: Path) -> None:
    from huggingface_hub import DatasetCard, DatasetCardData

    text = (built / "README.md").read_text(encoding="utf-8")
    card = DatasetCard(text)  # parses the front matter as the Hub client does (a mapping, valid YAML)
    meta = _card(built)
    assert card.data.to_dict() == meta  # nothing dropped or rewritten by the card data model
    data = DatasetCardData(**meta)
    assert data.license == meta["license"] and data.pretty_name == meta["pretty_name"]
    assert set(data.size_categories) <= {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M"}
    # the same validation the fake Hub applies to a commit (a subset of the Hub's own)
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "publish"))
    from fakehub import validate_card_metadata

    assert validate_card_metadata(text) == []


def test_configs_and_dataset_info_agree_with_the_data_files(built: Path) -> None:
    from datasets import Features
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    card = DatasetCard((built / "README.md").read_text(encoding="utf-8"))
    manifest = read_manifest(built)
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    assert set(configs) == set(infos) == set(manifest["rows"])
    for name, info in infos.items():
        (pattern,) = [entry["path"] for entry in configs[name]["data_files"] if entry["split"] == "test"]
        (parquet,) = sorted(built.glob(pattern))
        assert info.features == Features.from_arrow_schema(pq.read_schema(parquet))
        assert info.splits["test"].num_examples == pq.ParquetFile(parquet).metadata.num_rows
        assert info.splits["test"].num_examples == manifest["rows"][name]
        assert info.download_size == parquet.stat().st_size
        assert info.dataset_size == info.splits["test"].num_bytes > 0


def test_datasets_checks_the_row_counts_of_dataset_info(mini_sources: Path, tmp_path: Path) -> None:
    from datasets import load_dataset
    from datasets.exceptions import NonMatchingSplitsSizesError

    build = tmp_path / "build"
    build_folder(load_project(mini_sources), build, checks=False)
    assert load_dataset(str(build), "lite", split="test").num_rows == 36
    edit(build / "README.md", "num_examples: 36", "num_examples: 35")
    with pytest.raises(NonMatchingSplitsSizesError):
        load_dataset(str(build), "lite", split="test", download_mode="force_redownload")


def test_croissant_is_in_the_manifest_and_byte_identical_across_builds(
    mini_sources: Path, tmp_path: Path
) -> None:
    project = load_project(_with_card(mini_sources))
    build_folder(project, tmp_path / "one", checks=False)
    build_folder(project, tmp_path / "two", checks=False)
    one, two = (tmp_path / name / CROISSANT for name in ("one", "two"))
    assert one.read_bytes() == two.read_bytes()
    assert (tmp_path / "one" / "manifest.json").read_bytes() == (
        tmp_path / "two" / "manifest.json"
    ).read_bytes()
    assert read_manifest(tmp_path / "one")["files"][CROISSANT] == hashlib.sha256(one.read_bytes()).hexdigest()


def test_croissant_carries_the_rai_fields_from_dataset_yaml(built: Path) -> None:
    document = json.loads((built / CROISSANT).read_text(encoding="utf-8"))
    assert document["rai:dataCollection"] == RAI_TEXTS["creation"]
    assert document["rai:dataAnnotationProtocol"].startswith(RAI_TEXTS["review"])
    assert "templates are recorded as reviewed" in document["rai:dataAnnotationProtocol"]
    assert document["rai:dataBiases"] == RAI_TEXTS["risks"]
    assert document["rai:dataLimitations"] == f"{RAI_TEXTS['risks']}\n\n{RAI_TEXTS['out_of_scope']}"
    assert document["rai:personalSensitiveInformation"] == RAI_TEXTS["personal_data"]
    assert document["rai:dataUseCases"] == RAI_TEXTS["uses"]
    manifest = read_manifest(built)
    files = {entry["contentUrl"]: entry["sha256"] for entry in document["distribution"]}
    assert files == {path: digest for path, digest in manifest["files"].items() if path.endswith(".parquet")}


def test_croissant_validates_with_mlcroissant_and_reads_every_row(built: Path) -> None:
    mlcroissant = pytest.importorskip("mlcroissant")
    dataset = mlcroissant.Dataset(jsonld=str(built / CROISSANT))
    issues = dataset.metadata.ctx.issues
    assert not issues.errors
    # recommended properties a deterministic build cannot have (a date) or the fixture lacks (a citation)
    assert all("datePublished" in w or "citeAs" in w for w in issues.warnings), issues.warnings
    metadata = dataset.metadata
    assert metadata.data_collection == RAI_TEXTS["creation"]
    assert metadata.personal_sensitive_information == [RAI_TEXTS["personal_data"]]
    manifest = read_manifest(built)
    for record_set in metadata.record_sets:
        rows = list(dataset.records(record_set.uuid))
        assert len(rows) == manifest["rows"][record_set.uuid]
        table = pq.read_table(built / f"data/{record_set.uuid}/test-00000-of-00001.parquet").to_pylist()
        first = {key.split("/", 1)[1]: value for key, value in rows[0].items()}
        value = first["example_id"]
        assert (value.decode() if isinstance(value, bytes) else value) == table[0]["example_id"]


def test_the_bundled_build_has_a_valid_croissant_with_every_rai_field(
    bundled_sources: Path, tmp_path: Path
) -> None:
    build_folder(load_project(bundled_sources), tmp_path / "build", checks=False)
    document = json.loads((tmp_path / "build" / CROISSANT).read_text(encoding="utf-8"))
    for field in (
        "rai:dataCollection",
        "rai:dataAnnotationProtocol",
        "rai:dataBiases",
        "rai:dataLimitations",
        "rai:personalSensitiveInformation",
        "rai:dataUseCases",
    ):
        assert document.get(field), field
    assert yaml.safe_load((bundled_sources / "dataset.yaml").read_text(encoding="utf-8"))["card"][
        "personal_data"
    ]
