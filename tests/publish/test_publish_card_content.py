"""What the card says before a release: no placeholder of an import or of `init` reaches the Hub (P017),
and a card without uses, limitations or citation is released with a warning (P018). A dry run in offline
mode shows the plan from the build alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from fakehub import FakeHub
from jbcompile.importers.draft import SourcesDraft
from jbcompile.project import load_project
from jbcompile.publish.release import card_gaps
from jbcompile.starter import starter_files
from publish_helpers import REPO, build_files, build_folder, edit, only_read, publish

FIELDS = ("license", "description", "terms_of_use")


def _set_fields(sources: Path, values: dict) -> None:
    data = yaml.safe_load((sources / "dataset.yaml").read_text(encoding="utf-8"))
    data.update(values)
    (sources / "dataset.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")


def _line_of(sources: Path, key: str) -> int:
    lines = (sources / "dataset.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"{key}:"))


def _imported() -> dict:
    return {key: SourcesDraft(lang="ja", name="x", pretty_name="X").dataset()[key] for key in FIELDS}


def _initialised() -> dict:
    text = starter_files("bbq", "x")["sources/dataset.yaml"]
    return {key: yaml.safe_load(text)[key] for key in FIELDS}


@pytest.mark.parametrize("placeholders", [_imported(), _initialised()], ids=["import", "init"])
def test_the_placeholders_of_import_and_init_are_refused_at_their_yaml_position(
    hub_env: FakeHub, make_sources, tmp_path: Path, placeholders: dict
) -> None:
    sources = make_sources()
    _set_fields(sources, placeholders)
    build = build_folder(sources, tmp_path / "build")
    for args in ((), ("--dry-run",)):
        result = publish(sources, build, *args)
        assert result.exit_code == 1, result.output
        for key in FIELDS:
            assert re.search(rf"dataset\.yaml:{_line_of(sources, key)}:\d+: P017 {key} is", result.output), (
                key
            )
    assert only_read(hub_env)  # refused before anything is written


def test_a_card_without_uses_limitations_or_citation_is_released_with_warnings(
    hub_env: FakeHub, make_sources, tmp_path: Path
) -> None:
    sources = make_sources()
    edit(sources / "dataset.yaml", "card:\n  uses: 公開処理のテスト。\n", "card:\n")
    edit(
        sources / "dataset.yaml",
        "  risks: テスト用の小さなデータで、実際のバイアスは測れない。\n",
        "  out_of_scope: 評価以外。\n",
    )
    edit(
        sources / "dataset.yaml",
        'citation: "@misc{pubbench, title = {Publish test bench}, year = {2026}}"\n',
        "",
    )
    build = build_folder(sources, tmp_path / "build")
    dry = json.loads(publish(sources, build, "--dry-run", "--format", "json").stdout)
    assert [d["code"] for d in dry["diagnostics"]] == ["P018"] * 3
    result = publish(sources, build)
    assert result.exit_code == 0, result.output
    warned = re.findall(r"P018 \[warning\] the dataset card does not say ([a-z ]+)", result.output)
    assert sorted(warned) == ["how to cite it ", "its limitations ", "what the dataset is for "]


def test_the_bundled_card_is_warned_for_its_missing_citation_only(bundled_sources: Path) -> None:
    gaps = card_gaps(load_project(bundled_sources))
    assert [d.message.split(":")[-1].strip() for d in gaps] == ["citation is empty in dataset.yaml"]


def test_a_complete_card_gives_no_warning(release) -> None:
    sources, _ = release
    assert card_gaps(load_project(sources)) == []


def test_an_offline_dry_run_shows_the_plan_without_token_or_network(
    hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    sources, build = release
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    result = publish(sources, build, "--dry-run")
    assert result.exit_code == 0, result.output
    assert hub_env.requests == []  # not one request
    assert "Offline: the Hub was not read" in result.stdout and "P007" in result.output
    for name, content in build_files(build).items():
        assert f"{len(content):,}  " in result.stdout and name in result.stdout
    assert f"dataset repository {REPO} (public)" in result.stdout
    assert "gated access auto" in result.stdout and "tag          v0.1.0" in result.stdout
    as_json = json.loads(publish(sources, build, "--dry-run", "--format", "json").stdout)
    assert as_json["hub_read"] is False and as_json["tag"] == "v0.1.0"
    assert {f["path"] for f in as_json["upload"]} == set(build_files(build))
    assert publish(sources, build).exit_code == 1  # the real publish still needs the Hub and a token
