"""`jbcompile publish` against the fake Hub: what lands on the Hub, and every refusal."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from fakehub import FakeHub
from publish_helpers import REPO, build_files, build_folder, bump_version, edit, only_read, publish, run


def test_publish_uploads_the_build_byte_for_byte_and_tags_that_commit(hub_env: FakeHub, release) -> None:
    sources, build = release
    result = publish(sources, build)
    assert result.exit_code == 0, result.output
    repo = hub_env.repo(REPO)
    tag_commit = repo.commits[repo.tags["v0.1.0"]]
    assert repo.branches["main"] == tag_commit.oid
    uploaded = {path: content for path, content in tag_commit.files.items() if path != ".gitattributes"}
    assert uploaded == build_files(build)
    assert tag_commit.title == "Release v0.1.0"
    assert tag_commit.message == "First release of the test bench.\n\n- Templates age-train and age-library."
    assert repo.tag_messages["v0.1.0"] == "Release v0.1.0"
    assert repo.gated == "auto" and repo.private is False
    # gating was switched on before the data went up, and everything happened in one commit
    operations = [op for op, _ in hub_env.writes]
    assert operations == ["create_repo", "settings", "commit", "tag"]


def test_next_version_is_one_new_commit_and_leaves_the_old_tag_alone(
    hub_env: FakeHub, release, tmp_path
) -> None:
    sources, build = release
    assert publish(sources, build).exit_code == 0
    first = hub_env.repo(REPO).tags["v0.1.0"]
    first_files = hub_env.files_at(REPO, "v0.1.0")
    (sources / "templates" / "Age" / "age-train.yaml").unlink()
    bump_version(sources, "0.2.0")
    build2 = build_folder(sources, tmp_path / "build2")
    result = publish(sources, build2)
    assert result.exit_code == 0, result.output
    repo = hub_env.repo(REPO)
    second = repo.commits[repo.tags["v0.2.0"]]
    assert second.parents == (first,)
    assert repo.tags["v0.1.0"] == first and hub_env.files_at(REPO, "v0.1.0") == first_files
    assert {p: c for p, c in second.files.items() if p != ".gitattributes"} == build_files(build2)
    assert second.message.startswith("- Template age-library")


def test_private_flag_creates_a_private_repo(hub_env: FakeHub, release) -> None:
    sources, build = release
    assert publish(sources, build, "--private").exit_code == 0
    assert hub_env.repo(REPO).private is True


def test_dry_run_prints_every_file_with_size_and_sha256_and_writes_nothing(hub_env: FakeHub, release) -> None:
    sources, build = release
    result = publish(sources, build, "--dry-run")
    assert result.exit_code == 0, result.output
    assert hub_env.writes == []
    assert all(method in ("GET", "HEAD") or path == "/api/validate-yaml" for method, path in hub_env.requests)
    for name, content in build_files(build).items():
        line = f"{len(content):,}  {hashlib.sha256(content).hexdigest()}  {name}"
        assert line in result.stdout, line
    assert "create dataset repository lab/pub-bench (public)" in result.stdout
    assert "tag          v0.1.0 on that commit" in result.stdout
    as_json = json.loads(publish(sources, build, "--dry-run", "--format", "json").stdout)
    assert {f["path"] for f in as_json["upload"]} == set(build_files(build))
    assert as_json["tag"] == "v0.1.0" and as_json["commit_message"] == "Release v0.1.0"
    assert hub_env.writes == []


def test_the_token_is_never_printed(hub_env: FakeHub, release, caplog: pytest.LogCaptureFixture) -> None:
    sources, build = release
    caplog.set_level("DEBUG")
    outputs = [publish(sources, build, "--dry-run"), publish(sources, build), publish(sources, build)]
    outputs.append(run("verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(sources)))
    assert [r.exit_code for r in outputs] == [0, 0, 0, 0]  # the second publish finds it done
    for result in outputs:
        assert hub_env.token not in result.output
        assert hub_env.token[-12:] not in result.output
    assert hub_env.token not in caplog.text


def assert_refused(result, hub: FakeHub, code: str) -> None:
    assert result.exit_code == 1, result.output
    assert re.search(rf"\b{code}\b", result.output), result.output
    assert "nothing was pushed" in result.output
    assert hub.writes == [] and hub.commit_count() == 0


def test_refuses_an_existing_tag(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.seed_repo(REPO, {"README.md": b"# an earlier release\n"}, tags=("v0.1.0",))
    before = hub_env.files_at(REPO, "v0.1.0")
    assert_refused(publish(sources, build), hub_env, "P001")
    assert hub_env.files_at(REPO, "v0.1.0") == before


def test_refuses_a_stale_build(hub_env: FakeHub, release) -> None:
    sources, build = release
    edit(sources / "templates" / "Age" / "age-train.yaml", "路線図を見ていた", "時刻表を見ていた")
    result = publish(sources, build)
    assert_refused(result, hub_env, "P002")
    assert "stale build" in result.output
    assert only_read(hub_env)  # local refusals write nothing (the Hub is read, to report it too)


def test_refuses_a_build_of_another_version(hub_env: FakeHub, release) -> None:
    sources, build = release
    bump_version(sources, "0.2.0")
    result = publish(sources, build)
    assert_refused(result, hub_env, "P004")
    assert "the build is version 0.1.0, dataset.yaml says 0.2.0" in result.output


def test_refuses_a_build_edited_by_hand(hub_env: FakeHub, release) -> None:
    sources, build = release
    with (build / "README.md").open("a", encoding="utf-8") as card:
        card.write("\nedited\n")
    assert_refused(publish(sources, build), hub_env, "P005")


def test_refuses_unreviewed_machine_translations_with_their_position(
    hub_env: FakeHub, make_sources, tmp_path
) -> None:
    sources = make_sources()
    template = sources / "templates" / "Age" / "age-library.yaml"
    edit(
        template,
        "    text: 端末の操作に困っていたのは誰ですか？",
        "    text: {ja: 端末の操作に困っていたのは誰ですか？, en: Who had trouble?, status: machine}",
    )
    build = build_folder(sources, tmp_path / "build")  # the build itself is fresh
    result = publish(sources, build)
    assert_refused(result, hub_env, "P006")
    line = next(
        i for i, text in enumerate(template.read_text(encoding="utf-8").splitlines(), 1) if "machine" in text
    )
    assert re.search(rf"age-library\.yaml:{line}:\d+: P006", result.output), result.output
    edit(template, "status: machine", "status: reviewed")
    assert publish(sources, build_folder(sources, tmp_path / "build")).exit_code == 0


def test_refuses_a_template_no_one_reviewed(hub_env: FakeHub, make_sources, tmp_path) -> None:
    """JA118, as `build --release` says it: a plain build of a draft template builds, but no published
    version ships it (the rule's promise), whichever way the build was made."""
    sources = make_sources()
    template = sources / "templates" / "Age" / "age-library.yaml"
    edit(template, "status: reviewed", "status: draft")
    result = publish(sources, build_folder(sources, tmp_path / "build"))
    assert_refused(result, hub_env, "JA118")
    assert re.search(r"age-library\.yaml:\d+:\d+: JA118", result.output), result.output
    edit(template, "status: draft", "status: reviewed")
    assert publish(sources, build_folder(sources, tmp_path / "build")).exit_code == 0


def test_refuses_without_a_token(hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch) -> None:
    sources, build = release
    monkeypatch.delenv("HF_TOKEN")
    result = publish(sources, build)
    assert_refused(result, hub_env, "P007")
    assert hub_env.requests == []


def test_dry_run_without_a_token_reads_anonymously(
    hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources, build = release
    monkeypatch.delenv("HF_TOKEN")
    result = publish(sources, build, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "P007" in result.output and "anonymously" in result.output
    assert "v0.1.0" in result.output
    assert hub_env.writes == [] and hub_env.commit_count() == 0
    assert publish(sources, build).exit_code == 1  # the real publish still refuses


def test_refuses_without_a_changelog_section(hub_env: FakeHub, release) -> None:
    sources, build = release
    edit(sources / "CHANGELOG.md", "## 0.1.0", "## 0.0.9")
    build_folder(sources, build)
    assert_refused(publish(sources, build), hub_env, "P010")


def test_refuses_a_card_the_hub_would_reject(hub_env: FakeHub, make_sources, tmp_path) -> None:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    sources = make_sources()
    # dataset.yaml refuses a language that is no code (S002): the card is made with one all the same, as a
    # build of another tool or an older jbcompile could have it
    project = load_project(sources)
    project.dataset = project.dataset.model_copy(update={"language": ["Japanese"]})
    build = tmp_path / "build"
    write_build(compile_project(project, checks=False), build)
    result = publish(sources, build)
    assert_refused(result, hub_env, "P014")
    assert "invalid code" in result.output


def test_bad_input_exits_2_without_contacting_the_hub(hub_env: FakeHub, release, tmp_path) -> None:
    sources, _ = release
    assert publish(sources, tmp_path / "no-build").exit_code == 2
    assert run("publish", "--repo", "not a repo", "--sources", str(sources)).exit_code == 2
    assert hub_env.requests == []


def test_a_token_without_write_access_fails_cleanly_and_is_not_printed(
    hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources, build = release
    wrong = "hf_wrongTokenWrongTokenWrong42"
    monkeypatch.setenv("HF_TOKEN", wrong)
    result = publish(sources, build)
    assert result.exit_code == 1
    assert "P009" in result.output and "401" in result.output and "Traceback" not in result.output
    assert wrong not in result.output and hub_env.commit_count() == 0


def test_private_flag_on_an_existing_public_repo_warns(hub_env: FakeHub, release) -> None:
    sources, build = release
    hub_env.seed_repo(REPO, {"README.md": b"# old\n"})
    result = publish(sources, build, "--private", "--dry-run")
    assert result.exit_code == 0
    assert (
        "P011" in result.output and "use existing dataset repository lab/pub-bench (public)" in result.stdout
    )
    assert "delete       README.md" not in result.stdout  # the release replaces it, nothing to delete


def test_verify_and_diff_say_when_offline_mode_is_on(hub_env: FakeHub, release, monkeypatch) -> None:
    from huggingface_hub import constants

    sources, build = release
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    for result in (
        run("verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(sources)),
        run("diff", str(build), f"{REPO}@v0.1.0"),
    ):
        assert result.exit_code == 2 and "offline mode is on" in result.output
    assert hub_env.requests == []


def test_files_of_an_earlier_release_that_the_build_lacks_are_deleted_from_main_only(
    hub_env: FakeHub, release
) -> None:
    sources, build = release
    old = {"README.md": b"# old\n", "data/sobaco/test-00000-of-00001.parquet": b"old rows"}
    hub_env.seed_repo(REPO, old, tags=("v0.0.9",))
    dry = publish(sources, build, "--dry-run")
    assert "delete       data/sobaco/test-00000-of-00001.parquet" in dry.stdout
    assert publish(sources, build).exit_code == 0
    assert "data/sobaco/test-00000-of-00001.parquet" not in hub_env.files_at(REPO, "v0.1.0")
    assert hub_env.files_at(REPO, "v0.0.9")["data/sobaco/test-00000-of-00001.parquet"] == b"old rows"
    assert hub_env.files_at(REPO, "v0.1.0")[".gitattributes"]  # the Hub's own file stays


def test_a_release_interrupted_before_the_tag_resumes_without_a_second_commit(
    hub_env: FakeHub, release
) -> None:
    sources, build = release
    assert publish(sources, build).exit_code == 0
    repo = hub_env.repo(REPO)
    commit = repo.tags.pop("v0.1.0")  # as if the tag request had failed
    result = publish(sources, build)
    assert result.exit_code == 0, result.output
    assert repo.tags["v0.1.0"] == commit and repo.branches["main"] == commit
    assert hub_env.commit_count() == 1
