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

import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from types import FrameType  # noqa: E402

import pytest  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "compiler" / "jbcompile"
# A path here (relative to the package) is let off both hint checks until every error it makes has a
# hint (tests/test_hints.py says when to remove one); none is now.
HINT_PENDING: frozenset[str] = frozenset()


def hint_pending(path: str) -> bool:
    return any(path == pending or path.startswith(pending + "/") for pending in HINT_PENDING)


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


@pytest.fixture(autouse=True)
def _every_error_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every error diagnostic the tool makes while a test runs has a hint: the test that makes one
    without fails, naming where it was made (tests/test_hints.py reads the code for the same)."""
    from jbcompile.diagnostics import Diagnostic, Severity

    made = Diagnostic.__init__
    unexplained: list[str] = []

    def checked(self: Diagnostic, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)  # type: ignore[arg-type]
        if self.severity is Severity.ERROR and not self.hint:
            where = _made_where(sys._getframe(1))
            if where is not None:
                unexplained.append(f"{where}: {self.code} {self.message}")

    monkeypatch.setattr(Diagnostic, "__init__", checked)
    yield
    assert not unexplained, "errors without a hint (pass hint= saying what to do):\n" + "\n".join(unexplained)


def _made_where(frame: FrameType | None) -> str | None:
    """``path:line`` in the package where a diagnostic was made; None when a test made it itself, when
    it is a copy (``dataclasses.replace``: the original was judged), or when the evaluator (still
    pending) is among its callers."""
    if frame is not None and Path(frame.f_code.co_filename).name == "dataclasses.py":
        return None
    first = None
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(PACKAGE):
            inside = path.relative_to(PACKAGE).as_posix()
            if hint_pending(inside):
                return None
            first = first or f"compiler/jbcompile/{inside}:{frame.f_lineno}"
        elif first is None and path.is_relative_to(REPO / "tests"):
            return None  # a test's own diagnostic
        frame = frame.f_back
    return first
