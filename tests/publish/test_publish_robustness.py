"""`jbcompile publish` never burns a version on an empty release, and never prints a URL's credentials."""

from __future__ import annotations

import json

from fakehub import FakeHub
from publish_helpers import publish


def _empty_the_manifest_rows(build) -> None:
    """What an empty build would have recorded (builds refuse to be empty since; older ones were not)."""
    manifest_path = build / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["rows"] = {name: 0 for name in manifest["rows"]}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")


def test_an_empty_release_is_refused_before_the_hub_is_contacted(hub_env: FakeHub, release) -> None:
    sources, build = release
    _empty_the_manifest_rows(build)
    result = publish(sources, build)
    assert result.exit_code == 1, result.output
    assert "P015" in result.output and "an empty release is refused" in result.output
    assert hub_env.requests == [] and hub_env.writes == [] and hub_env.commit_count() == 0


def test_the_hub_endpoints_credentials_are_never_printed(hub_env: FakeHub, release, monkeypatch) -> None:
    sources, build = release
    monkeypatch.setenv("HF_ENDPOINT", "http://maintainer:hunter2@127.0.0.1:9")  # nothing listens there
    for fmt in ("text", "json"):
        result = publish(sources, build, "--dry-run", "--format", fmt)
        assert result.exit_code == 1, result.output
        assert "http://***@127.0.0.1:9" in result.output  # the endpoint is named, its credentials are not
        assert "hunter2" not in result.output and "maintainer" not in result.output
