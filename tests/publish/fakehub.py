"""A fake Hugging Face Hub on 127.0.0.1, good enough for the unmodified ``huggingface_hub`` client.

It keeps repositories in memory as real git-like histories (commits with parents, branches, tags, the
full file set of every commit) and speaks the HTTP endpoints the client uses for publishing and
downloading: repo creation and settings, README metadata validation, pre-upload, NDJSON commits, tags,
refs, repo info, tree and paths-info listings, commit history, and file resolution (HEAD, GET, Range).
Every file is declared ``regular`` at pre-upload, so contents arrive base64-encoded inside the commit.

Every request is logged (``hub.requests``), and every write is counted (``hub.writes``), so tests can
assert that a refused release touched nothing. ``hub.faults`` injects one failure into the next request
of a route (named by its handler, e.g. ``create_tag``): ``fail`` (a 500, nothing applied), ``drop`` (the
connection closed, nothing applied), ``lost`` (applied, then the connection closed: the answer is lost)
or ``race`` (someone else commits to main just before the request is handled).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

FAKE_USER = "jb-tester"
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"

SIZE_CATEGORIES = {
    "n<1K",
    "1K<n<10K",
    "10K<n<100K",
    "100K<n<1M",
    "1M<n<10M",
    "10M<n<100M",
    "100M<n<1B",
    "1B<n<10B",
    "10B<n<100B",
    "100B<n<1T",
    "n>1T",
    "other",
    "unknown",
}
GATED_FIELD_TYPES = {"text", "checkbox", "date_picker", "country", "select"}


def git_blob_oid(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass(frozen=True)
class Commit:
    oid: str
    parents: tuple[str, ...]
    title: str
    message: str
    files: dict[str, bytes]
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    gated: bool | str = False
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    tag_messages: dict[str, str | None] = field(default_factory=dict)

    def resolve(self, revision: str) -> Commit | None:
        """A branch, a tag, or a full commit id, as the Hub accepts them."""
        revision = unquote(revision)
        for prefix, refs in (("refs/heads/", self.branches), ("refs/tags/", self.tags)):
            if revision.startswith(prefix):
                revision = revision[len(prefix) :]
                oid = refs.get(revision)
                return self.commits.get(oid) if oid else None
        oid = self.branches.get(revision) or self.tags.get(revision) or revision
        return self.commits.get(oid)

    def history(self, commit: Commit) -> list[Commit]:
        out = [commit]
        while out[-1].parents:
            out.append(self.commits[out[-1].parents[0]])
        return out


class HubError(Exception):
    """An HTTP error answered the way the Hub does: status, X-Error-Code and a JSON body."""

    def __init__(self, status: int, message: str, code: str | None = None, **body: Any):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.body = {"error": message, **body}


def validate_card_metadata(content: str) -> list[str]:
    """The checks the Hub runs on a README's YAML front matter before accepting a commit."""
    if not content.startswith("---"):
        return []
    match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", content, re.DOTALL)
    if match is None:
        return ["YAML front matter is not closed by a '---' line"]
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        return [f"invalid YAML in front matter: {exc}"]
    if meta is None:
        return []
    if not isinstance(meta, dict):
        return ["metadata must be a mapping"]
    errors: list[str] = []

    def str_or_list(key: str) -> None:
        value = meta.get(key)
        if value is None:
            return
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str) for item in items):
            errors.append(f'"{key}" must be a string or a list of strings')

    for key in ("license", "language", "task_categories", "task_ids", "tags", "size_categories"):
        str_or_list(key)
    for key in ("pretty_name", "extra_gated_prompt", "extra_gated_heading", "extra_gated_button_content"):
        if key in meta and not isinstance(meta[key], str):
            errors.append(f'"{key}" must be a string')
    languages = meta.get("language")
    for lang in languages if isinstance(languages, list) else [languages] if languages else []:
        if isinstance(lang, str) and not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*|code|multilingual", lang):
            errors.append(f'"language" has an invalid code: {lang!r}')
    sizes = meta.get("size_categories")
    for size in sizes if isinstance(sizes, list) else [sizes] if sizes else []:
        if isinstance(size, str) and size not in SIZE_CATEGORIES:
            errors.append(f'"size_categories" has an unknown value: {size!r}')
    gated_fields = meta.get("extra_gated_fields")
    if gated_fields is not None:
        if not isinstance(gated_fields, dict):
            errors.append('"extra_gated_fields" must be a mapping of label to field type')
        else:
            for label, kind in gated_fields.items():
                kind_name = kind.get("type") if isinstance(kind, dict) else kind
                if kind_name not in GATED_FIELD_TYPES:
                    errors.append(f'"extra_gated_fields.{label}" has an unknown type: {kind_name!r}')
                elif kind_name == "select" and not (
                    isinstance(kind, dict) and isinstance(kind.get("options"), list)
                ):
                    errors.append(f'"extra_gated_fields.{label}" of type select needs a list of options')
    configs = meta.get("configs")
    if configs is not None:
        if not isinstance(configs, list):
            errors.append('"configs" must be a list')
        else:
            names = []
            for index, config in enumerate(configs):
                if not isinstance(config, dict) or not isinstance(config.get("config_name"), str):
                    errors.append(f'"configs[{index}]" needs a string config_name')
                    continue
                names.append(config["config_name"])
                files = config.get("data_files")
                if files is not None and not _valid_data_files(files):
                    errors.append(
                        f'"configs[{index}].data_files" must be a path, a list, or a list of splits'
                    )
                if "default" in config and not isinstance(config["default"], bool):
                    errors.append(f'"configs[{index}].default" must be a boolean')
            if len(set(names)) != len(names):
                errors.append('"configs" has duplicate config_name values')
            if sum(1 for c in configs if isinstance(c, dict) and c.get("default")) > 1:
                errors.append('"configs" has more than one default config')
    return errors


def _valid_data_files(files: Any) -> bool:
    if isinstance(files, str):
        return True
    if not isinstance(files, list):
        return False
    for item in files:
        if isinstance(item, str):
            continue
        if not (isinstance(item, dict) and isinstance(item.get("split"), str)):
            return False
        paths = item.get("path")
        if not (
            isinstance(paths, str) or (isinstance(paths, list) and all(isinstance(p, str) for p in paths))
        ):
            return False
    return True


class FakeHub:
    """In-memory Hub state plus the HTTP server that serves it; use ``with FakeHub() as hub``."""

    def __init__(self, token: str = "hf_fakeTokenForTests0123456789") -> None:
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.writes: list[tuple[str, str]] = []  # (operation, repo_id)
        self.faults: dict[str, str] = {}  # handler name → fail | drop | lost | race (once each)
        self._lock = threading.RLock()
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "the fake Hub is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers for tests --------------------------------------------------------------------------

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def files_at(self, repo_id: str, revision: str, repo_type: str = "dataset") -> dict[str, bytes]:
        commit = self.repo(repo_id, repo_type).resolve(revision)
        assert commit is not None, f"no revision {revision!r} in {repo_id}"
        return dict(commit.files)

    def commit_count(self) -> int:
        return sum(1 for op, _ in self.writes if op == "commit")

    def seed_repo(
        self, repo_id: str, files: dict[str, bytes], *, tags: tuple[str, ...] = (), private: bool = False
    ) -> str:
        """Create a dataset repo with one commit of ``files`` (and tags on it), bypassing HTTP."""
        with self._lock:
            repo = self._create_repo("dataset", repo_id, private)
            base = repo.commits[repo.branches["main"]].files
            commit = self._commit(repo, "main", "Seed", "", {**base, **files})
            for tag in tags:
                repo.tags[tag] = commit.oid
            return commit.oid

    # -- state changes --------------------------------------------------------------------------------

    def _new_oid(self, *parts: str) -> str:
        self._counter += 1
        return hashlib.sha1("\0".join((str(self._counter), *parts)).encode()).hexdigest()

    def _now(self) -> str:
        return datetime(2026, 1, 1, tzinfo=UTC).isoformat().replace("+00:00", ".000Z")

    def _create_repo(self, repo_type: str, repo_id: str, private: bool) -> Repo:
        repo = Repo(repo_type, repo_id, private)
        initial = Commit(
            self._new_oid(repo_id), (), "initial commit", "", {".gitattributes": GITATTRIBUTES}, self._now()
        )
        repo.commits[initial.oid] = initial
        repo.branches["main"] = initial.oid
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def _commit(self, repo: Repo, branch: str, title: str, message: str, files: dict[str, bytes]) -> Commit:
        """Record a commit whose tree is exactly ``files`` on top of ``branch``."""
        head = repo.branches.get(branch)
        oid = self._new_oid(repo.repo_id, title, *sorted(files))
        commit = Commit(oid, (head,) if head else (), title, message, files, self._now())
        repo.commits[commit.oid] = commit
        repo.branches[branch] = commit.oid
        return commit


@dataclass
class _Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: Any
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")

    @property
    def authorized_as(self) -> str | None:
        header = self.headers.get("Authorization") or ""
        return header.removeprefix("Bearer ").strip() or None


_REPO = r"(?P<repo_type>model|dataset|space)s/(?P<repo_id>[^/]+/[^/]+)"


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default stderr log
        return

    # -- plumbing ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        request = _Request(method, url.path, parse_qs(url.query), self.headers, self._read_body())
        hub = self.hub
        with hub._lock:
            hub.requests.append((method, url.path))
        try:
            for route_method, pattern, handler in _ROUTES:
                if route_method != method and not (route_method == "GET" and method == "HEAD"):
                    continue
                match = re.fullmatch(pattern, url.path)
                if match:
                    with hub._lock:
                        self._handle(handler, request, match.groupdict())
                    return
            raise HubError(404, f"fake hub: no route for {method} {url.path}")
        except HubError as error:
            self._send_json(error.body, status=error.status, error=error)

    def _handle(self, handler: Any, request: _Request, params: dict[str, str]) -> None:
        """Run a route's handler, with the fault a test asked for on it (once)."""
        fault = self.hub.faults.pop(getattr(handler, "__name__", ""), None)
        if fault == "fail":
            raise HubError(500, "injected failure")
        if fault == "race":
            repo = self.hub.repos[(params["repo_type"], params["repo_id"])]
            files = {**repo.commits[repo.branches["main"]].files, "other.txt": b"someone else"}
            self.hub._commit(repo, "main", "Concurrent push", "", files)
        if fault in ("drop", "lost"):
            if fault == "lost":
                self.wfile, real = io.BytesIO(), self.wfile  # the answer goes nowhere
                try:
                    handler(self, request, **params)
                finally:
                    self.wfile = real
            self.close_connection = True  # the client sees the connection closed without an answer
            return
        handler(self, request, **params)

    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(
        self,
        data: Any,
        status: int = 200,
        error: HubError | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        headers = dict(headers or {})
        if error is not None:
            headers["X-Error-Message"] = error.message
            if error.code:
                headers["X-Error-Code"] = error.code
        self._send(status, json.dumps(data).encode(), headers)

    # -- access rules -------------------------------------------------------------------------------

    def _require_write(self, request: _Request) -> None:
        if request.authorized_as != self.hub.token:
            raise HubError(401, "Invalid credentials in Authorization header")

    def _repo(self, request: _Request, repo_type: str, repo_id: str, *, for_download: bool = False) -> Repo:
        repo = self.hub.repos.get((repo_type, repo_id))
        owner = request.authorized_as == self.hub.token
        if repo is None or (repo.private and not owner):
            raise HubError(404, "Repository not found", "RepoNotFound")
        if for_download and repo.gated and not owner:
            raise HubError(
                401, "Access to this dataset is restricted: you must be authenticated.", "GatedRepo"
            )
        return repo

    def _revision(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(revision)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {unquote(revision)}", "RevisionNotFound")
        return commit

    # -- endpoints ---------------------------------------------------------------------------------

    def whoami(self, request: _Request) -> None:
        self._require_write(request)
        self._send_json({"type": "user", "name": FAKE_USER, "orgs": [], "auth": {"type": "access_token"}})

    def validate_yaml(self, request: _Request) -> None:
        payload = request.json()
        errors = validate_card_metadata(payload.get("content", ""))
        status = 400 if errors else 200
        body = {"errors": [{"message": e} for e in errors], "warnings": []}
        self._send_json(body, status=status, error=HubError(400, "Invalid metadata") if errors else None)

    def create_repo(self, request: _Request) -> None:
        self._require_write(request)
        payload = request.json()
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or FAKE_USER}/{payload['name']}"
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{self.hub.endpoint}/{prefix}{repo_id}"
        if (repo_type, repo_id) in self.hub.repos:
            raise HubError(409, "You already created this dataset repo", url=url)
        self.hub._create_repo(
            repo_type, repo_id, payload.get("visibility") == "private" or bool(payload.get("private"))
        )
        self.hub.writes.append(("create_repo", repo_id))
        self._send_json({"url": url, "name": repo_id})

    def repo_settings(self, request: _Request, repo_type: str, repo_id: str) -> None:
        self._require_write(request)
        repo = self._repo(request, repo_type, repo_id)
        payload = request.json()
        if "gated" in payload:
            if payload["gated"] not in ("auto", "manual", False):
                raise HubError(400, "gated must be auto, manual or false")
            repo.gated = payload["gated"]
        if "visibility" in payload:
            repo.private = payload["visibility"] == "private"
        self.hub.writes.append(("settings", repo_id))
        self._send_json({})

    def repo_info(self, request: _Request, repo_type: str, repo_id: str, revision: str = "main") -> None:
        repo = self._repo(request, repo_type, repo_id)
        commit = self._revision(repo, revision)
        card = _front_matter(commit.files.get("README.md", b""))
        info = {
            "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": commit.oid,
            "lastModified": commit.date,
            "createdAt": commit.date,
            "private": repo.private,
            "gated": repo.gated,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "cardData": card,
            "siblings": [
                {"rfilename": p, "size": len(b), "blobId": git_blob_oid(b)}
                for p, b in sorted(commit.files.items())
            ],
        }
        self._send_json(info)

    def refs(self, request: _Request, repo_type: str, repo_id: str) -> None:
        repo = self._repo(request, repo_type, repo_id)
        self._send_json(
            {
                "branches": [
                    {"name": n, "ref": f"refs/heads/{n}", "targetCommit": o}
                    for n, o in sorted(repo.branches.items())
                ],
                "tags": [
                    {"name": n, "ref": f"refs/tags/{n}", "targetCommit": o}
                    for n, o in sorted(repo.tags.items())
                ],
                "converts": [],
                "pullRequests": [],
            }
        )

    def commits(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        repo = self._repo(request, repo_type, repo_id)
        commit = self._revision(repo, revision)
        self._send_json(
            [
                {
                    "id": c.oid,
                    "title": c.title,
                    "message": c.message,
                    "authors": [{"user": FAKE_USER}],
                    "date": c.date,
                }
                for c in repo.history(commit)
            ]
        )

    def preupload(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        self._require_write(request)
        repo = self._repo(request, repo_type, repo_id)
        head = repo.resolve(revision)
        existing = head.files if head else {}
        files = [
            {
                "path": item["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": git_blob_oid(existing[item["path"]]) if item["path"] in existing else None,
            }
            for item in request.json().get("files", [])
        ]
        self._send_json({"files": files, "commitOid": head.oid if head else None})

    def commit(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        self._require_write(request)
        repo = self._repo(request, repo_type, repo_id)
        branch = unquote(revision)
        if branch not in repo.branches:
            raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        lines = [json.loads(line) for line in request.body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "the commit payload must start with a header line")
        header = lines[0]["value"]
        files = dict(repo.commits[repo.branches[branch]].files)
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                if value.get("encoding") != "base64":
                    raise HubError(400, "fake hub: only base64 file content is supported")
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if value["path"] not in files:
                    raise HubError(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                for path in [p for p in files if p.startswith(prefix)]:
                    del files[path]
            else:
                raise HubError(
                    400, f"fake hub: unsupported commit operation {key!r} (every file is 'regular')"
                )
        if header.get("parentCommit") not in (None, repo.branches[branch]):
            raise HubError(412, "A commit has happened since. Please refresh and try again.")
        new = self.hub._commit(repo, branch, header["summary"], header.get("description", ""), files)
        self.hub.writes.append(("commit", repo_id))
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        self._send_json(
            {
                "success": True,
                "commitOid": new.oid,
                "commitUrl": f"{self.hub.endpoint}/{prefix}{repo_id}/commit/{new.oid}",
            }
        )

    def create_tag(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        self._require_write(request)
        repo = self._repo(request, repo_type, repo_id)
        commit = self._revision(repo, revision)
        payload = request.json()
        tag = payload["tag"]
        if tag in repo.tags or tag in repo.branches:
            raise HubError(409, f"Tag {tag} already exists")
        repo.tags[tag] = commit.oid
        repo.tag_messages[tag] = payload.get("message")
        self.hub.writes.append(("tag", repo_id))
        self._send_json({})

    def delete_tag(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        self._require_write(request)
        repo = self._repo(request, repo_type, repo_id)
        if repo.tags.pop(unquote(revision), None) is None:
            raise HubError(404, "Invalid rev id", "RevisionNotFound")
        self.hub.writes.append(("delete_tag", repo_id))
        self._send_json({})

    def tree(self, request: _Request, repo_type: str, repo_id: str, revision: str, path: str = "") -> None:
        repo = self._repo(request, repo_type, repo_id)
        commit = self._revision(repo, revision)
        path = unquote(path or "").strip("/")
        recursive = (request.query.get("recursive") or ["false"])[0].lower() == "true"
        expand = (request.query.get("expand") or ["false"])[0].lower() == "true"
        entries = _tree_entries(commit, path, recursive)
        if entries is None:
            raise HubError(404, f"{path} does not exist on {revision}", "EntryNotFound")
        self._send_json([_entry_json(e, commit, expand) for e in entries])

    def paths_info(self, request: _Request, repo_type: str, repo_id: str, revision: str) -> None:
        repo = self._repo(request, repo_type, repo_id)
        commit = self._revision(repo, revision)
        form = parse_qs(request.body.decode())
        expand = (form.get("expand") or ["false"])[0].lower() == "true"
        out = []
        folders = _folders(commit)
        for path in form.get("paths", []):
            path = path.strip("/")
            if path in commit.files:
                out.append(_entry_json(("file", path), commit, expand))
            elif path in folders:
                out.append(_entry_json(("directory", path), commit, expand))
        self._send_json(out)

    def resolve(self, request: _Request, repo_type: str, repo_id: str, revision: str, path: str) -> None:
        repo = self._repo(request, repo_type, repo_id, for_download=True)
        commit = self._revision(repo, revision)
        path = unquote(path)
        headers = {"X-Repo-Commit": commit.oid}
        if path not in commit.files:
            error = HubError(404, "Entry not found", "EntryNotFound")
            self._send_json({"error": error.message}, status=404, error=error, headers=headers)
            return
        content = commit.files[path]
        headers.update({"ETag": f'"{git_blob_oid(content)}"', "Accept-Ranges": "bytes"})
        status = 200
        ranged = re.fullmatch(r"bytes=(\d*)-(\d*)", request.headers.get("Range") or "")
        if ranged and request.method == "GET":
            start = int(ranged.group(1)) if ranged.group(1) else max(0, len(content) - int(ranged.group(2)))
            end = int(ranged.group(2)) if ranged.group(1) and ranged.group(2) else len(content) - 1
            end = min(end, len(content) - 1)
            headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
            content, status = content[start : end + 1], 206
        self._send(status, content, headers, content_type="application/octet-stream")


def _front_matter(readme: bytes) -> dict | None:
    match = re.match(r"^---\s*\n(.*?)\n---\s*(\n|$)", readme.decode("utf-8", "replace"), re.DOTALL)
    if not match:
        return None
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _folders(commit: Commit) -> set[str]:
    folders = set()
    for path in commit.files:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return folders


def _tree_entries(commit: Commit, path: str, recursive: bool) -> list[tuple[str, str]] | None:
    folders = _folders(commit)
    if path and path not in folders:
        return None
    prefix = f"{path}/" if path else ""
    entries = []
    for folder in sorted(folders):
        if folder.startswith(prefix) and (recursive or "/" not in folder[len(prefix) :]):
            entries.append(("directory", folder))
    for file in sorted(commit.files):
        if file.startswith(prefix) and (recursive or "/" not in file[len(prefix) :]):
            entries.append(("file", file))
    return entries


def _entry_json(entry: tuple[str, str], commit: Commit, expand: bool) -> dict:
    kind, path = entry
    if kind == "file":
        content = commit.files[path]
        data: dict[str, Any] = {
            "type": "file",
            "path": path,
            "size": len(content),
            "oid": git_blob_oid(content),
        }
    else:
        data = {
            "type": "directory",
            "path": path,
            "oid": hashlib.sha1(f"tree {path} {commit.oid}".encode()).hexdigest(),
        }
    if expand:
        data["lastCommit"] = {"id": commit.oid, "title": commit.title, "date": commit.date}
    return data


_ROUTES: list[tuple[str, str, Any]] = [
    ("GET", r"/api/whoami-v2", _Handler.whoami),
    ("POST", r"/api/validate-yaml", _Handler.validate_yaml),
    ("POST", r"/api/repos/create", _Handler.create_repo),
    ("PUT", rf"/api/{_REPO}/settings", _Handler.repo_settings),
    ("GET", rf"/api/{_REPO}", _Handler.repo_info),
    ("GET", rf"/api/{_REPO}/revision/(?P<revision>[^/]+)", _Handler.repo_info),
    ("GET", rf"/api/{_REPO}/refs", _Handler.refs),
    ("GET", rf"/api/{_REPO}/commits/(?P<revision>[^/]+)", _Handler.commits),
    ("POST", rf"/api/{_REPO}/preupload/(?P<revision>[^/]+)", _Handler.preupload),
    ("POST", rf"/api/{_REPO}/commit/(?P<revision>[^/]+)", _Handler.commit),
    ("POST", rf"/api/{_REPO}/tag/(?P<revision>[^/]+)", _Handler.create_tag),
    ("DELETE", rf"/api/{_REPO}/tag/(?P<revision>[^/]+)", _Handler.delete_tag),
    ("GET", rf"/api/{_REPO}/tree/(?P<revision>[^/]+)(?:/(?P<path>.*))?", _Handler.tree),
    ("POST", rf"/api/{_REPO}/paths-info/(?P<revision>[^/]+)", _Handler.paths_info),
    ("GET", rf"/{_REPO}/resolve/(?P<revision>[^/]+)/(?P<path>.+)", _Handler.resolve),
    (
        "GET",
        r"/(?P<repo_id>[^/]+/[^/]+)/resolve/(?P<revision>[^/]+)/(?P<path>.+)",
        lambda handler, request, **kw: _Handler.resolve(handler, request, repo_type="model", **kw),
    ),
]


@contextmanager
def running_hub(token: str = "hf_fakeTokenForTests0123456789") -> Iterator[FakeHub]:
    with FakeHub(token) as hub:
        yield hub
