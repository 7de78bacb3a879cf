"""`jbcompile verify` and `jbcompile diff` on real builds that differ by one template."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fakehub import FakeHub
from publish_helpers import (
    REPO,
    build_files,
    build_folder,
    bump_version,
    edit,
    hub_process_env,
    publish,
    run,
)

LIBRARY = Path("templates") / "Age" / "age-library.yaml"
NEW_CONTEXT = "その{{NAME2}}は慣れた手つきで目当ての本を見つけたが"


def rows(build: Path, config: str) -> dict[str, dict]:
    table = pq.read_table(build / "data" / config / "test-00000-of-00001.parquet")
    return {row["example_id"]: row for row in table.to_pylist()}


def edit_library(sources: Path) -> None:
    edit(sources / LIBRARY, "その{{NAME2}}は慣れた手つきで本を探したが", NEW_CONTEXT)


@pytest.fixture
def two_builds(make_sources, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(old sources, old build, new sources, new build): new edits one template's disambiguating context."""
    old_sources, new_sources = make_sources("old"), make_sources("new")
    edit_library(new_sources)
    return (
        old_sources,
        build_folder(old_sources, tmp_path / "old-build"),
        new_sources,
        build_folder(new_sources, tmp_path / "new-build"),
    )


def test_verify_passes_for_the_sources_of_the_release(hub_env: FakeHub, release) -> None:
    sources, build = release
    assert publish(sources, build).exit_code == 0
    result = run(
        "verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(sources), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["differences"] == []
    assert report["commit"] == hub_env.repo(REPO).tags["v0.1.0"]
    assert report["checked_files"] == len(build_files(build))
    assert {c: r["actual"] for c, r in report["rows"].items()} == {
        c: len(rows(build, c)) for c in ("full", "lite")
    }


def test_verify_names_what_differs_when_one_template_changed(hub_env: FakeHub, two_builds) -> None:
    old_sources, old_build, new_sources, _ = two_builds
    assert publish(old_sources, old_build).exit_code == 0
    result = run(
        "verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(new_sources), "--format", "json"
    )
    assert result.exit_code == 1, result.output
    differences = json.loads(result.stdout)["differences"]
    files = {d["path"] for d in differences if d["kind"] == "file"}
    assert {"data/full/test-00000-of-00001.parquet", "data/lite/test-00000-of-00001.parquet"} <= files
    assert "manifest.json:sources_hash" in {d["path"] for d in differences if d["kind"] == "manifest"}
    assert not [d for d in differences if d["kind"] == "rows"]  # same row counts, other rows
    text = run("verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(new_sources))
    assert text.exit_code == 1 and "differs from a fresh build" in text.stdout


def test_verify_catches_a_release_whose_data_does_not_match_its_manifest(
    hub_env: FakeHub, two_builds
) -> None:
    old_sources, old_build, _, new_build = two_builds
    files = build_files(old_build)
    files["data/lite/test-00000-of-00001.parquet"] = (
        new_build / "data/lite/test-00000-of-00001.parquet"
    ).read_bytes()
    hub_env.seed_repo(REPO, files, tags=("v0.1.0",))  # uploaded by hand, bypassing publish
    result = run(
        "verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(old_sources), "--format", "json"
    )
    assert result.exit_code == 1
    kinds = {(d["kind"], d["path"]) for d in json.loads(result.stdout)["differences"]}
    assert ("file", "data/lite/test-00000-of-00001.parquet") in kinds
    assert ("integrity", f"{REPO}@v0.1.0:data/lite/test-00000-of-00001.parquet") in kinds


@pytest.mark.parametrize("tampering", ["not parquet", "manifest cut short", "manifest key twice"])
def test_verify_reports_a_release_that_disagrees_with_itself_as_a_difference(
    hub_env: FakeHub, release, tampering: str
) -> None:
    """Exit 1 and a row of the table naming ORG/NAME@rev:path — never exit 2, a temporary path, or the
    advice to rebuild (the user did not build it)."""
    sources, build = release
    files = build_files(build)
    data = "data/lite/test-00000-of-00001.parquet"
    if tampering == "not parquet":
        files[data] = b"not parquet"
        where = f"{REPO}@v0.1.0:{data}"
    elif tampering == "manifest cut short":
        files["manifest.json"] = files["manifest.json"][:200]
        where = f"{REPO}@v0.1.0:manifest.json"
    else:
        files["manifest.json"] = files["manifest.json"].replace(b"{", b'{"version": "9.9.9", ', 1)
        where = f"{REPO}@v0.1.0:manifest.json"
    hub_env.seed_repo(REPO, files, tags=("v0.1.0",))
    args = ("verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(sources))
    result = run(*args, "--format", "json")
    assert result.exit_code == 1, result.output
    differences = json.loads(result.stdout)["differences"]
    assert ("integrity", where) in {(d["kind"], d["path"]) for d in differences}, differences
    text = run(*args)
    assert text.exit_code == 1 and "differs from a fresh build" in text.stdout
    for output in (result.output, text.output):
        assert "jbcompile-verify-" not in output and "rebuild" not in output


def test_verify_of_a_missing_revision_is_an_input_error(hub_env: FakeHub, release) -> None:
    sources, build = release
    assert publish(sources, build).exit_code == 0
    result = run("verify", "--repo", REPO, "--revision", "v9.9.9", "--sources", str(sources))
    assert result.exit_code == 2
    assert "P009" in result.output and "Traceback" not in result.output


def test_diff_of_two_builds_reports_only_the_edited_template(two_builds) -> None:
    _, old_build, _, new_build = two_builds
    result = run("diff", str(old_build), str(new_build), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    before, after = rows(old_build, "full"), rows(new_build, "full")
    expected_changed = sorted(i for i in after if after[i] != before[i])
    assert expected_changed and all(after[i]["template_id"] == "age-library" for i in expected_changed)
    groups = [g for g in report["groups"] if g["config"] == "full"]
    assert [(g["category"], g["template_id"]) for g in groups] == [("Age", "age-library")]
    assert groups[0]["changed"] == expected_changed and groups[0]["added"] == groups[0]["removed"] == []
    full = report["configs"]["full"]
    assert (full["added"], full["removed"], full["changed"]) == (0, 0, len(expected_changed))
    assert full["unchanged"] == len(before) - len(expected_changed)
    assert "context" in full["changed_columns"]
    assert "age-train" not in {g["template_id"] for g in report["groups"]}


def test_diff_reports_removed_and_added_rows_per_template(make_sources, tmp_path: Path) -> None:
    old_sources = make_sources("old")
    old_build = build_folder(old_sources, tmp_path / "old-build")
    (old_sources / "templates" / "Age" / "age-train.yaml").unlink()
    new_build = build_folder(old_sources, tmp_path / "new-build")
    forward = json.loads(run("diff", str(old_build), str(new_build), "--format", "json").stdout)
    train_rows = sorted(i for i, row in rows(old_build, "full").items() if row["template_id"] == "age-train")
    (group,) = [g for g in forward["groups"] if g["config"] == "full"]
    assert (group["template_id"], group["removed"], group["added"], group["changed"]) == (
        "age-train",
        train_rows,
        [],
        [],
    )
    backward = json.loads(run("diff", str(new_build), str(old_build), "--format", "json").stdout)
    (group,) = [g for g in backward["groups"] if g["config"] == "full"]
    assert group["added"] == train_rows and group["removed"] == []
    table = run("diff", str(old_build), str(new_build))
    assert table.exit_code == 0 and "age-train" in table.stdout and "changes per template" in table.stdout


def test_diff_of_identical_builds_says_so(release) -> None:
    _, build = release
    result = run("diff", str(build), str(build))
    assert result.exit_code == 0 and "no row differs" in result.stdout


@pytest.mark.parametrize("side", ["old", "new"])
def test_diff_refuses_a_build_altered_after_it_was_written(release, tmp_path: Path, side: str) -> None:
    """A data file edited after the build is an alteration to refuse (as eval refuses it), not a
    difference between two builds: no table, exit 2, the file named."""
    import shutil

    _, build = release
    altered = tmp_path / "altered"
    shutil.copytree(build, altered)
    data = altered / "data" / "lite" / "test-00000-of-00001.parquet"
    table = pq.read_table(data)
    pq.write_table(table.slice(1), data)  # one row gone, the manifest untouched
    sides = (str(altered), str(build)) if side == "old" else (str(build), str(altered))
    for fmt in ("text", "json"):
        result = run("diff", *sides, "--format", fmt)
        assert result.exit_code == 2, result.output
        assert "P005" in result.output and "data/lite/test-00000-of-00001.parquet" in result.output
        assert "changed after the build" in result.output and "rebuild" in result.output
        assert "removed" not in result.stdout and "changes per template" not in result.stdout


def test_diff_of_hub_revisions_matches_the_diff_of_the_builds(hub_env: FakeHub, two_builds, tmp_path) -> None:
    old_sources, old_build, new_sources, _ = two_builds
    assert publish(old_sources, old_build).exit_code == 0
    bump_version(new_sources, "0.2.0")
    new_build = build_folder(new_sources, tmp_path / "new-build-v2")
    assert publish(new_sources, new_build).exit_code == 0
    remote = run("diff", f"{REPO}@v0.1.0", f"{REPO}@v0.2.0", "--format", "json")
    local = run("diff", str(old_build), str(new_build), "--format", "json")
    assert remote.exit_code == 0, remote.output
    remote_report, local_report = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_report["groups"] == local_report["groups"] and remote_report["groups"]
    assert (remote_report["old"]["version"], remote_report["new"]["version"]) == ("0.1.0", "0.2.0")
    # a local build against a Hub revision works as well
    mixed = json.loads(run("diff", str(old_build), f"{REPO}@v0.2.0", "--format", "json").stdout)
    assert mixed["groups"] == local_report["groups"]


def test_diff_of_something_that_is_not_a_build_is_an_input_error(tmp_path: Path, release) -> None:
    _, build = release
    result = run("diff", str(tmp_path / "nothing"), str(build))
    assert result.exit_code == 2 and "P003" in result.output


def test_load_dataset_of_a_published_revision(hub_env: FakeHub, release, tmp_path: Path) -> None:
    """The unmodified datasets library, in a fresh process, loads the release through the fake Hub."""
    sources, build = release
    assert publish(sources, build).exit_code == 0
    bump_version(sources, "0.2.0")
    (sources / "templates" / "Age" / "age-train.yaml").unlink()
    assert publish(sources, build_folder(sources, tmp_path / "build2")).exit_code == 0  # main moves on
    code = (
        "import json, datasets\n"
        f"rows = datasets.load_dataset({REPO!r}, 'lite', split='test', revision='v0.1.0')\n"
        "print(json.dumps({'n': rows.num_rows, 'ids': sorted(rows['example_id'])}))\n"
    )
    env = hub_process_env(hub_env, tmp_path / "hf-home")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == {"n": len(rows(build, "lite")), "ids": sorted(rows(build, "lite"))}
