"""The fake Hub behaves like the Hub for the unmodified huggingface_hub client."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakehub import FakeHub, git_blob_oid, validate_card_metadata

CARD = b"""---
license: cc-by-4.0
language: [ja]
configs:
- config_name: lite
  default: true
  data_files:
  - split: test
    path: data/lite/*.parquet
---
# card
"""


@pytest.fixture
def api(hub_env: FakeHub):
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub_env.endpoint, token=hub_env.token)


def _add(path: str, content: bytes):
    from huggingface_hub import CommitOperationAdd

    return CommitOperationAdd(path_in_repo=path, path_or_fileobj=content)


def test_repo_commit_tag_refs_round_trip(api, hub_env: FakeHub) -> None:
    url = api.create_repo("lab/ds", repo_type="dataset")
    assert url.repo_id == "lab/ds" and url.repo_type == "dataset"
    again = api.create_repo("lab/ds", repo_type="dataset", exist_ok=True)  # 409 → accepted
    assert again.repo_id == "lab/ds"
    head = api.dataset_info("lab/ds").sha
    commit = api.create_commit(
        "lab/ds",
        [_add("README.md", CARD), _add("data/lite/a.bin", b"\x00\x01data")],
        commit_message="Release v1.0.0",
        commit_description="notes",
        repo_type="dataset",
        parent_commit=head,
    )
    api.create_tag("lab/ds", tag="v1.0.0", revision=commit.oid, repo_type="dataset")
    refs = api.list_repo_refs("lab/ds", repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0.0", commit.oid)]
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", commit.oid)]
    history = api.list_repo_commits("lab/ds", repo_type="dataset", revision="v1.0.0")
    assert [c.title for c in history] == ["Release v1.0.0", "initial commit"]
    assert history[0].message == "notes"
    assert hub_env.files_at("lab/ds", "v1.0.0")["data/lite/a.bin"] == b"\x00\x01data"
    info = api.dataset_info("lab/ds", revision="v1.0.0")
    assert info.card_data.license == "cc-by-4.0"
    assert {s.rfilename for s in info.siblings} == {".gitattributes", "README.md", "data/lite/a.bin"}


def test_conflicts_are_refused_like_the_hub(api, hub_env: FakeHub) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    hub_env.seed_repo("lab/ds", {"a.txt": b"a"}, tags=("v1.0.0",))
    stale_parent = hub_env.repo("lab/ds").commits[hub_env.repo("lab/ds").branches["main"]].parents[0]
    with pytest.raises(HfHubHTTPError) as error:
        api.create_commit(
            "lab/ds",
            [_add("b.txt", b"b")],
            commit_message="x",
            repo_type="dataset",
            parent_commit=stale_parent,
        )
    assert error.value.response.status_code == 412
    with pytest.raises(HfHubHTTPError) as error:
        api.create_tag("lab/ds", tag="v1.0.0", repo_type="dataset")
    assert error.value.response.status_code == 409
    assert hub_env.commit_count() == 0


def test_invalid_card_metadata_is_rejected_before_any_upload(api, hub_env: FakeHub) -> None:
    api.create_repo("lab/ds", repo_type="dataset")
    broken = b"---\nlicense: [cc-by-4.0\n---\n# card\n"
    with pytest.raises(ValueError, match="Invalid metadata"):
        api.create_commit("lab/ds", [_add("README.md", broken)], commit_message="x", repo_type="dataset")
    assert hub_env.commit_count() == 0


@pytest.mark.parametrize(
    ("front_matter", "expected"),
    [
        ("license: [a\n", "invalid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("language: [japanese]\n", "invalid code"),
        ("size_categories: [tiny]\n", "size_categories"),
        ("extra_gated_fields:\n  I agree: tickbox\n", "unknown type"),
        ("configs:\n- config_name: a\n  default: true\n- config_name: a\n", "duplicate"),
        ("configs:\n- data_files: x\n", "config_name"),
        ("pretty_name: [x]\n", "pretty_name"),
    ],
)
def test_card_validation_rejects(front_matter: str, expected: str) -> None:
    errors = validate_card_metadata(f"---\n{front_matter}---\n# card\n")
    assert any(expected in e for e in errors), errors


def test_card_validation_accepts_a_real_card() -> None:
    assert validate_card_metadata(CARD.decode()) == []
    assert validate_card_metadata("# no front matter\n") == []


def test_downloads_resolve_with_headers_ranges_and_trees(api, hub_env: FakeHub, tmp_path: Path) -> None:
    from huggingface_hub import HfFileSystem, get_hf_file_metadata, hf_hub_download, hf_hub_url

    content = bytes(range(256)) * 4
    oid = hub_env.seed_repo("lab/ds", {"README.md": CARD, "data/lite/x.bin": content}, tags=("v1.0.0",))
    url = hf_hub_url(
        "lab/ds", "data/lite/x.bin", repo_type="dataset", revision="v1.0.0", endpoint=hub_env.endpoint
    )
    meta = get_hf_file_metadata(url, token=hub_env.token)
    assert (meta.commit_hash, meta.etag, meta.size) == (oid, git_blob_oid(content), len(content))
    path = hf_hub_download(
        "lab/ds",
        "data/lite/x.bin",
        repo_type="dataset",
        revision="v1.0.0",
        cache_dir=tmp_path,
        endpoint=hub_env.endpoint,
        token=hub_env.token,
    )
    assert Path(path).read_bytes() == content
    fs = HfFileSystem(endpoint=hub_env.endpoint, token=hub_env.token)
    assert fs.glob("datasets/lab/ds@v1.0.0/data/**/*.bin") == ["datasets/lab/ds@v1.0.0/data/lite/x.bin"]
    with fs.open("datasets/lab/ds@v1.0.0/data/lite/x.bin", "rb", block_size=100) as handle:
        handle.seek(300)
        assert handle.read(10) == content[300:310]  # served with HTTP Range
    tree = {
        e.path for e in api.list_repo_tree("lab/ds", repo_type="dataset", revision="v1.0.0", recursive=True)
    }
    assert tree == {".gitattributes", "README.md", "data", "data/lite", "data/lite/x.bin"}
    info = api.get_paths_info("lab/ds", ["README.md", "data"], repo_type="dataset", revision="v1.0.0")
    assert [type(i).__name__ for i in info] == ["RepoFile", "RepoFolder"]


def test_private_and_gated_repos_need_the_token(hub_env: FakeHub, tmp_path: Path) -> None:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    hub_env.seed_repo("lab/private", {"a.txt": b"a"}, private=True)
    hub_env.seed_repo("lab/gated", {"a.txt": b"a"})
    hub_env.repo("lab/gated").gated = "auto"
    anonymous = HfApi(endpoint=hub_env.endpoint, token=False)
    with pytest.raises(RepositoryNotFoundError):
        anonymous.dataset_info("lab/private")
    with pytest.raises(GatedRepoError):
        hf_hub_download(
            "lab/gated",
            "a.txt",
            repo_type="dataset",
            cache_dir=tmp_path,
            endpoint=hub_env.endpoint,
            token=False,
        )
    owner = HfApi(endpoint=hub_env.endpoint, token=hub_env.token)
    assert owner.dataset_info("lab/private").private is True
    with pytest.raises(Exception, match="401"):
        anonymous.create_repo("lab/other", repo_type="dataset")
    assert ("create_repo", "lab/other") not in hub_env.writes
