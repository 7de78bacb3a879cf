"""`jbcompile publish` never burns a version on an empty release, and never prints a URL's credentials."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from fakehub import FakeHub
from publish_helpers import only_read, publish, run


def _empty_the_manifest_rows(build) -> None:
    """What an empty build would have recorded (builds refuse to be empty since; older ones were not)."""
    manifest_path = build / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["rows"] = {name: 0 for name in manifest["rows"]}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")


def test_an_empty_release_is_refused_before_anything_is_written(hub_env: FakeHub, release) -> None:
    sources, build = release
    _empty_the_manifest_rows(build)
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P015" in result.output and "an empty release is refused" in result.output
    assert only_read(hub_env) and hub_env.commit_count() == 0


def test_the_hub_endpoints_credentials_are_never_printed(hub_env: FakeHub, release, monkeypatch) -> None:
    sources, build = release
    monkeypatch.setenv("HF_ENDPOINT", "http://maintainer:hunter2@127.0.0.1:9")  # nothing listens there
    for fmt in ("text", "json"):
        result = publish(sources, build, "--dry-run", "--format", fmt)
        assert result.exit_code == 1, result.output
        assert "http://***@127.0.0.1:9" in result.output  # the endpoint is named, its credentials are not
        assert "hunter2" not in result.output and "maintainer" not in result.output


def _rewrite_manifest(build, change) -> None:
    path = build / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.update(rows="x"),
        lambda m: m.update(rows={"lite": "36"}),
        lambda m: m["files"].update({"../../etc/passwd": "0" * 64}),
        lambda m: m["files"].update({"/abs": "0" * 64}),
        lambda m: m.update(dataset='x"""\nimport os\n"""'),  # written into generated code by export
        lambda m: m.update(version="1.0.0\nimport os"),
        lambda m: m.update(version="1.0.0\n"),  # a pattern's $ would let the line break through
        lambda m: m.update(dataset="bench\u202e"),
        lambda m: m.update(configs=[1]),
        lambda m: m["configs"].update({"../x": {"kind": "bbq", "rows": 1}}),
        lambda m: m["rows"].update({"a/b": 1}),
        lambda m: next(iter(m["configs"].values())).update(rows="many"),
    ],
)
def test_a_malformed_manifest_is_a_diagnostic_in_publish_and_diff(hub_env: FakeHub, release, change) -> None:
    sources, build = release
    _rewrite_manifest(build, change)
    for result in (publish(sources, build, "--dry-run"), run("diff", str(build), str(build))):
        assert result.exit_code == 2 and "P003" in result.output, result.output
        assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_unreadable_data_files_are_diagnostics_in_diff_and_publish(
    hub_env: FakeHub, release, tmp_path
) -> None:
    sources, build = release
    other = tmp_path / "other"
    shutil.copytree(build, other)
    data = next((other / "data").rglob("*.parquet"))
    data.write_bytes(b"not parquet")
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    _rewrite_manifest(other, lambda m: m["files"].update({data.relative_to(other).as_posix(): digest}))
    result = run("diff", str(build), str(other))
    assert result.exit_code == 2 and "P016" in result.output, result.output
    refused = publish(sources, other, "--dry-run")
    assert refused.exit_code == 1 and "P016" in refused.output
    data.unlink()
    missing = run("diff", str(build), str(other))
    assert missing.exit_code == 2 and "P005" in missing.output and "missing" in missing.output


def test_diff_prints_names_from_a_foreign_build_as_text_not_markup(release, tmp_path) -> None:
    import pyarrow.parquet as pq

    _sources, build = release
    other = tmp_path / "foreign"
    shutil.copytree(build, other)
    data = next((other / "data").rglob("*.parquet"))
    table = pq.read_table(data)
    categories = ["[/bad]" if i == 0 else c for i, c in enumerate(table.column("category").to_pylist())]
    column = table.schema.get_field_index("category")
    pq.write_table(table.set_column(column, "category", [categories]), data)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    _rewrite_manifest(other, lambda m: m["files"].update({data.relative_to(other).as_posix(): digest}))
    result = run("diff", str(build), str(other))
    assert result.exit_code == 0, result.output
    assert "[/bad]" in result.output


def test_a_json_dry_run_is_one_document_with_its_warnings(hub_env: FakeHub, release, monkeypatch) -> None:
    sources, build = release
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("jbcompile.publish.hub.resolve_token", lambda: None)
    result = publish(sources, build, "--dry-run", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # one JSON document: the warnings are inside it
    assert document["dry_run"] is True and [d["code"] for d in document["diagnostics"]] == ["P007"]
