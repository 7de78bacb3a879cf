"""The one place that talks to the Hugging Face Hub: sessions, refs, trees, downloads, and Hub errors
turned into diagnostics.

``huggingface_hub`` is imported inside the functions, so importing this module stays cheap. The token is
resolved once per session, passed explicitly to every call, and scrubbed from every message we print.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic
from ..redaction import redact
from ..services import HUB, service_errors, unexpected

REPO_TYPE = "dataset"
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Files the Hub manages itself; a release neither uploads nor deletes them.
HUB_MANAGED = frozenset({".gitattributes"})


@dataclass(frozen=True)
class HubRef:
    """A dataset on the Hub at one revision: ``ORG/NAME@REVISION``."""

    repo_id: str
    revision: str

    def __str__(self) -> str:
        return f"{self.repo_id}@{self.revision}"


@dataclass(frozen=True)
class RemoteFile:
    """What the Hub says about one file: enough to check it against local bytes without downloading."""

    path: str
    size: int
    git_oid: str
    sha256: str | None  # known for LFS/Xet files only


@dataclass
class HubSession:
    """An ``HfApi`` bound to the endpoint and token of this run."""

    api: Any
    endpoint: str
    token: str | None

    def redact(self, text: str) -> str:
        """Never let the token, or credentials in a URL, reach the terminal or a log."""
        return redact(text, self.token)


def parse_repo_id(value: str) -> str | None:
    return value if REPO_ID.fullmatch(value) else None


# A branch, a tag or a commit as the Hub and git name them (``v1.0.0``, ``main``, ``refs/pr/1``, a hash):
# letters, digits and ``._/-`` only, and git's rules of a ref name (git check-ref-format) on top — what
# goes into a generated file (an export's README, its task code) cannot break out of its line or string.
REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,254}")


def parse_revision(value: str) -> str | None:
    """``value`` when it is a plain git revision name (see ``REVISION``), else None."""
    bad = (
        ".." in value
        or "//" in value
        or "/." in value
        or value.endswith(("/", ".", ".lock"))
        or not REVISION.fullmatch(value)
    )
    return None if bad else value


def parse_hub_ref(value: str) -> HubRef | None:
    """``ORG/NAME@REVISION`` → HubRef; anything else (e.g. a folder path) → None."""
    repo, sep, revision = value.partition("@")
    if not sep or not revision or parse_repo_id(repo) is None:
        return None
    return HubRef(repo, revision)


def resolve_token() -> str | None:
    """HF_TOKEN, else the token saved by ``hf auth login`` (huggingface_hub's own lookup order)."""
    from huggingface_hub import get_token

    with service_errors(HUB, "reading the saved token"):
        return get_token()


def open_session(token: str | None = None) -> HubSession:
    """HF_ENDPOINT is read now (not at import time), so a process can point at another Hub."""
    from huggingface_hub import HfApi, constants

    endpoint = (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
    with service_errors(HUB, "opening a session", secrets=(token,)):
        return HubSession(HfApi(endpoint=endpoint, token=token or False), endpoint, token)


def offline_problem(command: str) -> Diagnostic | None:
    from huggingface_hub import constants

    if not constants.is_offline_mode():
        return None
    return Diagnostic(
        code="P009",
        message=f"{command} needs the Hub, but offline mode is on (HF_HUB_OFFLINE=1)",
        hint="unset HF_HUB_OFFLINE (and TRANSFORMERS_OFFLINE) for this command",
    )


def hub_problem(error: BaseException, session: HubSession, doing: str) -> Diagnostic:
    """A Hub or network failure as a diagnostic, without traceback and without the token."""
    return known_hub_problem(error, session, doing) or unexpected(
        replace(HUB, hint=f"{HUB.hint} (HF_ENDPOINT is {session.endpoint})"), doing, error, session.token
    )


def known_hub_problem(error: BaseException, session: HubSession, doing: str) -> Diagnostic | None:
    """The diagnostic of an error of the Hub client itself (None for any other type: see
    :func:`jbcompile.services.unexpected`)."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(error, OfflineModeIsEnabled):
        message, hint = f"{doing}: offline mode is on", "unset HF_HUB_OFFLINE for this command"
    elif isinstance(error, GatedRepoError):
        message = f"{doing}: the dataset is gated and this token has no access"
        hint = "accept the terms on the dataset page, or use a token of the owner"
    elif isinstance(error, RepositoryNotFoundError):
        message = f"{doing}: repository not found (or private and not visible to this token)"
        hint = "check ORG/NAME and the token (HF_TOKEN or `hf auth login`)"
    elif isinstance(error, RevisionNotFoundError):
        message, hint = f"{doing}: no such revision", "list the release tags on the dataset page"
    elif isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else "?"
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        message = f"{doing}: the Hub answered HTTP {status}: {first_line}"
        if status in (401, 403):
            hint = "the token cannot write there: use a write token of ORG (HF_TOKEN or `hf auth login`)"
        elif status == 429 or (isinstance(status, int) and status >= 500):
            hint = "the Hub is busy or failing: wait a while and run the command again"
        elif status == 412:  # the parent commit we pinned is no longer main's head
            hint = "someone pushed to the repository meanwhile: look at what they pushed, then run again"
        else:
            hint = f"check ORG/NAME, the revision and HF_ENDPOINT ({session.endpoint})"
    elif isinstance(error, OSError | ConnectionError):  # the network, as the client passes it on
        message = f"{doing}: {type(error).__name__}: {error}"
        hint = f"check the network and HF_ENDPOINT ({session.endpoint})"
    else:
        return None
    return Diagnostic(code="P009", message=session.redact(message), hint=session.redact(hint))


@contextmanager
def hub_errors(session: HubSession, doing: str) -> Iterator[None]:
    """Turn any failure of a Hub call inside the block into a P009 diagnostic (token scrubbed)."""
    with service_errors(
        HUB, doing, known=lambda error: hub_problem(error, session, doing), secrets=(session.token,)
    ):
        yield


def remote_tags(session: HubSession, repo_id: str) -> dict[str, str] | None:
    """Tag → commit id, or None when the repository does not exist (yet)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = session.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    except RepositoryNotFoundError:
        return None
    return {tag.name: tag.target_commit for tag in refs.tags}


def release_commits(session: HubSession, repo_id: str) -> list[tuple[str, str]]:
    """(commit id, title) of every commit in the history of main, newest first: a release commit keeps
    its title ``Release vX.Y.Z`` even when its tag is deleted."""
    return [
        (commit.commit_id, commit.title)
        for commit in session.api.list_repo_commits(repo_id, repo_type=REPO_TYPE, revision="main")
    ]


def answer_may_be_lost(error: BaseException) -> bool:
    """Did a write fail without a clear answer, so that it may have been applied all the same? True for a
    dropped connection or a timeout, and for a 5xx, which a gateway may send after the Hub applied it."""
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(error, HfHubHTTPError) and error.response is not None:
        return error.response.status_code >= 500
    return True


def branch_head(session: HubSession, repo_id: str, branch: str = "main") -> str | None:
    refs = session.api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    return next((b.target_commit for b in refs.branches if b.name == branch), None)


def remote_files(session: HubSession, repo_id: str, revision: str) -> dict[str, RemoteFile]:
    """Every file of a revision with its size and hashes (one tree listing, no download)."""
    from huggingface_hub.hf_api import RepoFile

    files: dict[str, RemoteFile] = {}
    for entry in session.api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=revision, recursive=True):
        if isinstance(entry, RepoFile):
            sha256 = entry.lfs.sha256 if entry.lfs is not None else None
            files[entry.path] = RemoteFile(entry.path, entry.size, entry.blob_id, sha256)
    return files


def card_rejections(session: HubSession, card_text: str) -> list[str]:
    """Ask the Hub to validate the card's YAML metadata (read-only), as it would on commit."""
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    response = get_session().post(
        f"{session.endpoint}/api/validate-yaml",
        json={"content": card_text, "repoType": REPO_TYPE},
        headers=build_hf_headers(token=session.token or False),
    )
    if response.status_code == 400:
        errors = response.json().get("errors", []) if response.content else []
        return [str(e.get("message", e)) for e in errors] or [response.text]
    hf_raise_for_status(response)
    return []


def download_revision(session: HubSession, ref: HubRef, cache_dir: Path) -> Path:
    """Download every file of ``ref`` into a private cache; return the snapshot folder."""
    from huggingface_hub import snapshot_download

    folder = snapshot_download(
        ref.repo_id,
        repo_type=REPO_TYPE,
        revision=ref.revision,
        cache_dir=str(cache_dir),
        token=session.token or False,
        endpoint=session.endpoint,
    )
    return Path(folder)


def git_blob_oid(content: bytes) -> str:
    """Git's id of a blob: what the Hub reports for files stored in git (not in LFS/Xet)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
