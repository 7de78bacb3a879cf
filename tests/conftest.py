"""Test-wide setup: nothing may leave the machine, whatever a test does."""

from __future__ import annotations

import os

# Set before any test imports datasets or huggingface_hub: both read these at import time.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_UPDATE_DOWNLOAD_COUNTS"] = "0"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.pop("HF_TOKEN", None)
# A datasets cache of the test session's own: a cache shared with other runs (or other checkouts) can
# hand back rows of an earlier build of a folder with the same path.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="jbcompile-tests-datasets-")
atexit.register(shutil.rmtree, os.environ["HF_DATASETS_CACHE"], True)
os.environ.pop("DEEPL_AUTH_KEY", None)

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def mini_sources(tmp_path: Path) -> Path:
    """A writable copy of the tiny three-template benchmark in tests/fixtures/mini_sources."""
    target = tmp_path / "sources"
    shutil.copytree(FIXTURES / "mini_sources", target)
    return target


@pytest.fixture(scope="session")
def bundled_sources() -> Path:
    return REPO / "sources"


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> Iterator[None]:
    """A secret a command registered (``--api-key``, a URL's user info) lasts as long as its process;
    in one pytest process it would mask its parts in every later test's output."""
    from jbcompile import redaction

    yield
    redaction._registered.clear()
