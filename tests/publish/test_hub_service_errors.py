"""An unexpected error inside huggingface_hub (a malformed answer, a client bug) is a P009 diagnostic that
names the Hub, what was being done and the message — token scrubbed — never a traceback."""

from __future__ import annotations

import pytest
from fakehub import FakeHub
from publish_helpers import publish, run


@pytest.mark.parametrize("error_type", [TypeError, KeyError, AttributeError, ValueError])
def test_publish_and_verify_name_the_hub_when_its_client_fails_inside(
    hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch, error_type: type[Exception]
) -> None:
    from huggingface_hub import HfApi

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise error_type(f"inside huggingface_hub, token {hub_env.token}")

    monkeypatch.setattr(HfApi, "list_repo_refs", broken)
    monkeypatch.setattr(HfApi, "list_repo_tree", broken)
    sources, build = release
    result = publish(sources, build, "--dry-run")
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert (
        f"P009 the Hugging Face Hub failed while reading lab/pub-bench on the Hub ({error_type.__name__}:"
        in text
    )
    assert "Traceback" not in result.output and hub_env.token not in result.output
    assert hub_env.writes == []


def test_a_failing_download_is_named_too(hub_env: FakeHub, release, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AttributeError("'NoneType' object has no attribute 'sha'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", broken)
    result = run("diff", "lab/pub-bench@v0.1.0", "lab/pub-bench@v0.1.0")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "P009 the Hugging Face Hub failed while downloading" in " ".join(result.output.split())
