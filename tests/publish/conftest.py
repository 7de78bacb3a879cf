"""Fixtures of the publish tests: a fake Hub on 127.0.0.1, the environment pointing at it, and fresh
sources + build folders made from ``fixtures/sources``."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the fake Hub is a helper module of this folder, not a package

from fakehub import FakeHub  # noqa: E402
from publish_helpers import build_folder  # noqa: E402

FIXTURE_SOURCES = HERE / "fixtures" / "sources"


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as hub:
        yield hub


@pytest.fixture
def hub_env(fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeHub:
    """Point huggingface_hub at the fake (the root conftest switched it offline) with the fake's token."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", fake_hub.endpoint)
    monkeypatch.setenv("HF_TOKEN", fake_hub.token)
    monkeypatch.delenv("HF_OIDC_RESOURCE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-stored-token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no-stored-tokens"))
    return fake_hub


@pytest.fixture
def make_sources(tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of the fixture sources, to edit freely."""

    def make(name: str = "sources") -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURE_SOURCES, target)
        return target

    return make


@pytest.fixture
def release(make_sources: Callable[[str], Path], tmp_path: Path) -> tuple[Path, Path]:
    """(sources, build) of version 0.1.0, freshly built."""
    sources = make_sources("sources")
    return sources, build_folder(sources, tmp_path / "build")
