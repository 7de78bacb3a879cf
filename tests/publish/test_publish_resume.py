"""Publishing a release that got half-way, or again, or elsewhere: the repository the build names (P019),
a tag or commit whose answer was lost (resumed), a version reused or moved backwards (P020, P021), a
concurrent push (412), and local and Hub problems reported at once."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from fakehub import FakeHub
from publish_helpers import (
    REPO,
    build_files,
    build_folder,
    bump_version,
    edit,
    only_read,
    publish,
    run,
)

LIBRARY = Path("templates") / "Age" / "age-library.yaml"


def _change_rows(sources: Path) -> None:
    edit(sources / LIBRARY, "その{{NAME2}}は慣れた手つきで本を探したが", "その{{NAME2}}はすぐ本を見つけたが")


def _no_hub_repo(sources: Path) -> None:
    edit(sources / "dataset.yaml", "hub_repo: lab/pub-bench\n", "")


def test_a_repo_other_than_the_one_the_build_names_is_refused(hub_env: FakeHub, release) -> None:
    sources, build = release
    for args in ((), ("--dry-run",)):
        result = run(
            "publish", "--repo", "lab/other", "--sources", str(sources), "--build", str(build), *args
        )
        assert result.exit_code == 1, result.output
        assert re.search(r"dataset\.yaml:\d+:\d+: P019 --repo is lab/other", result.output), result.output
        assert "name lab/pub-bench" in result.output
    assert only_read(hub_env) and ("dataset", "lab/other") not in hub_env.repos


def test_a_build_that_names_no_repository_is_not_published(hub_env: FakeHub, make_sources, tmp_path) -> None:
    sources = make_sources()
    _no_hub_repo(sources)
    build = build_folder(sources, tmp_path / "build")
    assert '"<org>/pub-bench"' in (build / "README.md").read_text(encoding="utf-8")
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P019 the build names no Hub repository" in result.output
    assert "set `hub_repo: lab/pub-bench` in dataset.yaml" in result.output
    assert only_read(hub_env)
    # what the hint says is enough: the card and croissant.json then name the repository published
    edit(sources / "dataset.yaml", "version: 0.1.0\n", "version: 0.1.0\nhub_repo: lab/pub-bench\n")
    build = build_folder(sources, tmp_path / "build")
    assert publish(sources, build).exit_code == 0
    released = hub_env.files_at(REPO, "v0.1.0")
    assert b'load_dataset("lab/pub-bench"' in released["README.md"]
    assert json.loads(released["croissant.json"])["url"] == "https://huggingface.co/datasets/lab/pub-bench"


def test_a_lost_tag_answer_is_named_and_the_rerun_finishes_the_release(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.faults["create_tag"] = "lost"
    first = publish(sources, build)
    assert first.exit_code == 1, first.output
    assert "tag v0.1.0 on" in first.output and "may have landed" in first.output
    repo = hub_env.repo(REPO)
    assert "v0.1.0" in repo.tags  # it did land
    requests = len(hub_env.requests)
    second = publish(sources, build)
    assert second.exit_code == 0, second.output
    assert "already published" in second.output and "P001" not in second.output
    assert "tag v0.1.0 already holds these files" in second.output
    after = hub_env.requests[requests:]
    assert after[-1] == ("GET", f"/api/datasets/{REPO}/tree/v0.1.0")  # the after-tag check (P012) ran
    assert hub_env.commit_count() == 1 and [op for op, _ in hub_env.writes].count("tag") == 1
    dry = publish(sources, build, "--dry-run")
    assert dry.exit_code == 0 and "upload       nothing" in dry.stdout and "kept as it is" in dry.stdout


def test_a_lost_commit_answer_is_named_and_the_rerun_makes_no_second_commit(
    hub_env: FakeHub, release
) -> None:
    sources, build = release
    hub_env.faults["commit"] = "lost"
    first = publish(sources, build)
    assert first.exit_code == 1, first.output
    assert "the commit 'Release v0.1.0' of" in first.output and "may have landed" in first.output
    second = publish(sources, build)
    assert second.exit_code == 0, second.output
    assert "nothing to commit, main already holds these files" in second.output
    assert hub_env.commit_count() == 1


def test_a_rerun_after_a_failed_tag_says_no_commit_is_made(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.faults["create_tag"] = "fail"
    first = publish(sources, build)
    assert first.exit_code == 1 and "may have landed" in first.output  # a 5xx may come after the write
    head = hub_env.repo(REPO).branches["main"]
    dry = publish(sources, build, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"nothing to commit, main already holds these files (commit {head})" in dry.stdout
    assert "upload       nothing" in dry.stdout and f"tag          v0.1.0 on commit {head}" in dry.stdout
    as_json = json.loads(publish(sources, build, "--dry-run", "--format", "json").stdout)
    assert as_json["upload"] == [] and as_json["main_holds_build"] == head
    assert {f["path"] for f in as_json["files"]} == set(build_files(build))
    second = publish(sources, build)
    assert second.exit_code == 0, second.output
    assert f"nothing to commit, main already holds these files (commit {head})" in second.output
    assert "committed" not in second.output
    assert hub_env.repo(REPO).tags["v0.1.0"] == head and hub_env.commit_count() == 1


def test_a_version_whose_tag_was_deleted_is_not_released_again(hub_env: FakeHub, release, tmp_path) -> None:
    sources, build = release
    assert publish(sources, build).exit_code == 0
    del hub_env.repo(REPO).tags["v0.1.0"]  # as HfApi().delete_tag would
    edit(
        sources / LIBRARY, "その{{NAME2}}は慣れた手つきで本を探したが", "その{{NAME2}}はすぐに本を見つけたが"
    )
    rebuilt = build_folder(sources, tmp_path / "rebuilt")
    result = publish(sources, rebuilt)
    assert result.exit_code == 1, result.output
    assert "P020" in result.output and "version 0.1.0 was released before" in result.output
    assert hub_env.commit_count() == 1


def test_a_version_below_the_latest_release_needs_allow_older(hub_env: FakeHub, release, tmp_path) -> None:
    sources, build = release
    newer = tmp_path / "newer"
    newer_sources = sources.parent / "newer-sources"
    shutil.copytree(sources, newer_sources)
    bump_version(newer_sources, "0.2.0")
    assert publish(newer_sources, build_folder(newer_sources, newer)).exit_code == 0
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P021 0.1.0 is below the latest release of lab/pub-bench, 0.2.0" in result.output
    assert hub_env.commit_count() == 1
    allowed = publish(sources, build, "--allow-older")
    assert allowed.exit_code == 0, allowed.output
    assert "P021" in allowed.output  # still said, as a warning
    assert "v0.1.0" in hub_env.repo(REPO).tags


def test_a_concurrent_push_gets_its_own_hint(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.seed_repo(REPO, {"README.md": b"# old\n"})
    hub_env.faults["preupload"] = "race"
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "HTTP 412" in result.output and "someone pushed to the repository meanwhile" in result.output
    assert "v0.1.0" not in hub_env.repo(REPO).tags


def test_local_and_hub_refusals_are_reported_at_once(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.seed_repo(REPO, {"README.md": b"# an earlier release\n"}, tags=("v0.1.0",))
    edit(
        sources / LIBRARY, "その{{NAME2}}は慣れた手つきで本を探したが", "その{{NAME2}}はすぐに本を見つけたが"
    )
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P002" in result.output and "P001" in result.output
    assert "holding other files" in result.output
    assert hub_env.writes == []


def test_a_rejected_card_and_an_existing_tag_are_reported_at_once(
    hub_env: FakeHub, make_sources, tmp_path
) -> None:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    sources = make_sources()
    project = load_project(sources)
    project.dataset = project.dataset.model_copy(update={"language": ["Japanese"]})
    build = tmp_path / "build"
    write_build(compile_project(project, checks=False), build)
    hub_env.seed_repo(REPO, {"README.md": b"# an earlier release\n"}, tags=("v0.1.0",))
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P014" in result.output and "P001" in result.output
    assert hub_env.writes == []


def test_an_empty_changelog_section_is_named_with_its_line(hub_env: FakeHub, release) -> None:
    sources, build = release
    changelog = sources / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    heading = text.index("## 0.1.0")
    changelog.write_text(text[:heading] + "## 0.1.0\n\n## 0.0.1\n\n- older\n", encoding="utf-8")
    line = changelog.read_text(encoding="utf-8").splitlines().index("## 0.1.0") + 1
    result = publish(sources, build_folder(sources, build))
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())  # as printed, wrapped to the terminal
    assert re.search(
        rf"CHANGELOG\.md:{line}:\d+: P010 the section for 0\.1\.0 in CHANGELOG\.md is empty", output
    )
    assert "write what changed under `## 0.1.0`" in output
