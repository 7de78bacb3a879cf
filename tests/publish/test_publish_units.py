"""The pure parts of publishing: changelog sections, Hub refs, translation scan, tag check, redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakehub import FakeHub
from jbcompile.changelog import changelog_section
from jbcompile.publish.hub import parse_hub_ref
from jbcompile.redaction import redact
from publish_helpers import REPO, build_files, build_folder, edit, publish, run

CHANGELOG = """# Changelog

Intro text.

## [1.1.0] - 2026-02-01

### Fixed
- one template

## v1.0.0

First.

## 0.9.0
"""


@pytest.mark.parametrize(
    ("version", "expected"),
    [("1.1.0", "### Fixed\n- one template"), ("1.0.0", "First."), ("0.9.0", None), ("2.0.0", None)],
)
def test_changelog_section(version: str, expected: str | None) -> None:
    assert changelog_section(CHANGELOG, version) == expected


def test_changelog_section_stops_at_the_next_version_only() -> None:
    assert changelog_section("## 1.0.0\nA\n## 1.0.0-rc.1\nB\n", "1.0.0") == "A"
    assert changelog_section("## 1.0.0-rc.1\nB\n", "1.0.0") is None
    text = "## 1.0.0\nA\n### Added\n- x\n## Unreleased\nB\n"
    assert changelog_section(text, "1.0.0") == "A\n### Added\n- x"


def test_hub_refs_and_paths() -> None:
    ref = parse_hub_ref("lab/bench@v1.2.0")
    assert ref is not None and (ref.repo_id, ref.revision) == ("lab/bench", "v1.2.0")
    assert parse_hub_ref("build/old") is None
    assert parse_hub_ref("lab/bench@") is None
    assert parse_hub_ref("a/b/c@v1") is None


def test_redaction_hides_the_token_and_anything_shaped_like_one() -> None:
    assert redact("auth hf_secretvalue failed", "hf_secretvalue") == "auth *** failed"
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in redact("x hf_abcdefghijklmnopqrstuvwxyz y", None)


def test_machine_translations_are_found_in_vocab_and_dataset_too(make_sources) -> None:
    from jbcompile.project import load_project
    from jbcompile.publish.release import unreviewed_translations

    sources = make_sources()
    edit(
        sources / "vocab" / "Age.yaml",
        "      - 若い女性",
        "      - {text: {ja: 若い女性, en: a young woman, status: machine}}",
    )
    edit(sources / "dataset.yaml", "  - 不明", "  - {ja: 不明, en: Unknown, status: machine}")
    found = unreviewed_translations(load_project(sources))
    assert sorted((Path(d.path).name, d.line, d.code) for d in found) == [
        ("Age.yaml", 12, "P006"),
        ("dataset.yaml", 11, "P006"),
    ]
    edit(sources / "dataset.yaml", "status: machine", "status: reviewed")
    assert [Path(d.path).name for d in unreviewed_translations(load_project(sources))] == ["Age.yaml"]


def test_tag_check_finds_files_that_differ_from_the_build(hub_env: FakeHub, release) -> None:
    from jbcompile.project import load_project
    from jbcompile.publish.buildfolder import open_build
    from jbcompile.publish.hub import open_session
    from jbcompile.publish.release import prepare_release, tag_mismatches

    sources, build = release
    files = build_files(build)
    files["README.md"] = files["README.md"] + b"\n"
    files["extra.txt"] = b"x"
    del files["manifest.json"]
    hub_env.seed_repo(REPO, files, tags=("v0.1.0",))
    plan = prepare_release(load_project(sources), open_build(build), REPO, private=False, token=hub_env.token)
    problems = tag_mismatches(open_session(hub_env.token), plan)
    assert sorted(problems) == [
        f"README.md has {len(files['README.md'])} bytes, expected {len(files['README.md']) - 1}",
        "extra.txt is not part of the build",
        "manifest.json is missing",
    ]


def test_verify_rebuilds_jsonl_copies_when_the_release_has_them(
    hub_env: FakeHub, make_sources, tmp_path
) -> None:
    sources = make_sources()
    build = build_folder(sources, tmp_path / "build", formats=("parquet", "jsonl"))
    assert any(name.endswith(".jsonl") for name in build_files(build))
    assert publish(sources, build).exit_code == 0
    result = run(
        "verify", "--repo", REPO, "--revision", "v0.1.0", "--sources", str(sources), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["checked_files"] == len(build_files(build))


def _tiny_build(root: Path, rows: list[dict], version: str = "1.0.0") -> Path:
    """A minimal build folder by hand: one config `main` whose rows are given."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from jbcompile.emit.manifest import file_sha256

    data = root / "data" / "main" / "test-00000-of-00001.parquet"
    data.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), data)
    manifest = {"version": version, "rows": {"main": len(rows)}, "files": {}, "compiler_version": "0.1.0"}
    manifest["files"]["data/main/test-00000-of-00001.parquet"] = file_sha256(data)  # diff verifies it
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def test_diff_rows_across_a_new_column_and_a_category_move(tmp_path: Path) -> None:
    from jbcompile.publish.buildfolder import open_build
    from jbcompile.publish.diff import diff_builds

    old = _tiny_build(
        tmp_path / "old",
        [
            {"example_id": "a", "category": "Age", "template_id": "t1", "text": "x"},
            {"example_id": "b", "category": "Age", "template_id": "t2", "text": "y"},
        ],
    )
    new = _tiny_build(
        tmp_path / "new",
        [
            {"example_id": "a", "category": "Age", "template_id": "t1", "text": "x", "note": None},
            {"example_id": "b", "category": "Gender_identity", "template_id": "t2", "text": "y", "note": "n"},
            {"example_id": "c", "category": "Age", "template_id": "t3", "text": "z", "note": None},
        ],
        version="1.1.0",
    )
    result = diff_builds(open_build(old), open_build(new), "old", "new")
    summary = result.configs["main"]
    assert (summary.added, summary.removed, summary.changed, summary.unchanged) == (1, 0, 1, 1)
    assert summary.changed_columns == {"category": 1, "note": 1}
    assert [(g.category, g.template_id, g.added, g.changed) for g in result.groups] == [
        ("Age", "t3", ("c",), ()),
        ("Gender_identity", "t2", (), ("b",)),
    ]


def test_diff_refuses_rows_that_cannot_be_matched(tmp_path: Path) -> None:
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.publish.buildfolder import open_build
    from jbcompile.publish.diff import diff_builds

    twice = _tiny_build(tmp_path / "twice", [{"example_id": "a", "x": 1}, {"example_id": "a", "x": 2}])
    with pytest.raises(DiagnosticError) as error:
        diff_builds(open_build(twice), open_build(twice), "twice", "twice")
    assert error.value.diagnostics[0].code == "P013"
    result = run("diff", str(twice), str(twice))
    assert result.exit_code == 2 and "P013" in result.output


def test_changelog_headings_inside_code_fences_are_not_headings() -> None:
    from jbcompile.changelog import find_section

    example = "# Changelog\n\n```markdown\n## 0.6.0\n\n- an example\n```\n\n### 0.6.0\n\n- real\n"
    assert find_section(example, "0.6.0") is None  # the only `## 0.6.0` is an example
    fenced = "## 0.6.0\n\n- a\n\n~~~~\n## 0.5.0\n~~~\n~~~~\n\n- b\n\n## 0.5.0\n\n- old\n"
    assert changelog_section(fenced, "0.6.0") == "- a\n\n~~~~\n## 0.5.0\n~~~\n~~~~\n\n- b"
    empty = find_section("# Changelog\n\n## 0.6.0\n\n## 0.5.0\n\n- old\n", "0.6.0")
    assert empty is not None and (empty.line, empty.body) == (3, "")
