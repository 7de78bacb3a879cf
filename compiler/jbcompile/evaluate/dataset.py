"""Loading the rows to evaluate: a build folder (as `jbcompile build` writes it), a release file, another
dataset folder, or a Hub dataset id — never rows of another folder, or of an older state of this one.

What the rows were checked against is recorded (``verification``, results.json's
``dataset.verification``):

- ``manifest``: a local build folder (its ``manifest.json`` written by jbcompile). Every data file of the
  config is read once, its sha256 compared with the manifest's, and parsed from those same bytes; a file
  changed, missing, unlisted or with other row counts stops the run (P005, P016). ``datasets`` and its
  cache are not involved.
- ``commit``: a Hub dataset at a resolved commit (the Hub names its files by their content).
- ``unverified``: anything else — a folder without a jbcompile manifest (a foreign dataset: allowed),
  a release file, a Hub dataset whose commit cannot be resolved (offline). A foreign folder is loaded
  by ``datasets`` with a cache of its own, thrown away after the load, so that no earlier load of the
  same path can answer.

``sha256`` names the content that was read wherever it lies: a release file's digest, the digest of a
build config's data files, or of a foreign folder's files.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import reading
from ..diagnostics import Diagnostic, DiagnosticError
from ..emit.manifest import file_sha256
from ..services import DATASETS, service_errors
from .formats import adapt, duplicate_ids, release_path
from .jsonfile import limited, read_json_records


@dataclass
class LoadedRows:
    rows: list[dict[str, Any]]
    columns: list[str]
    path: str
    config: str | None
    revision: str | None
    manifest: dict[str, Any] | None  # version and sources hash from the build's manifest.json
    commit: str | None = None  # the Hub commit the revision resolved to: a branch may move, a commit not
    format: str = "jbcompile"  # or a release's own format (see .formats): labels were derived at load
    ambiguous: list[dict[str, Any]] = field(default_factory=list)  # rows whose labels are not clear
    verbatim_prompt: bool = False  # each row's ``instruction`` is the release's whole prompt
    sha256: str | None = None  # the content read (a file's, a config's data files'): names it anywhere
    verification: str = "unverified"  # manifest | commit | unverified (see the module's docstring)

    def rows_for(self, task: str) -> list[dict[str, Any]]:
        """The rows a task can be evaluated on: detection needs the stereotyped option, so release rows
        where it could not be derived (listed in ``ambiguous``) sit that task out."""
        if task == "detect" and self.ambiguous:
            return [row for row in self.rows if row.get("biased_label") is not None]
        return self.rows

    def problems_for(self, task: str) -> list[Diagnostic]:
        if not self.rows_for(task):
            return [
                Diagnostic(
                    "EV140",
                    f"no row of this {self.format} dataset has a stereotyped option to detect",
                    path=self.path,
                    hint="see the listed ambiguous rows; use --task qa",
                )
            ]
        return []


def load_rows(dataset: str, config: str, revision: str | None = None) -> LoadedRows:
    """``datasets.load_dataset(dataset, config, split="test", revision=...)``; problems as diagnostics.

    A release's own file (JSONL or parquet in a format a design reads) is read as it is, and rows of a
    release format (from a file or the Hub) get our label columns derived at load (:mod:`.formats`).
    """
    local = Path(dataset).expanduser()
    if release_path(local):
        return _with_release_labels(_read_release_file(local, config))
    if local.exists() and not local.is_dir():
        reading.check_file(local, reading.RELEASE)  # a device or a FIFO: refused as such (F002)
    if local.exists() and not local.is_dir():
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV141",
                    "a file that is neither .jsonl, .json nor .parquet: no dataset format is read from it",
                    path=dataset,
                    hint="give a build folder, a release's JSONL or parquet file, or a Hub id",
                )
            ]
        )
    if local.is_dir() and _built_by_us(local):
        return _with_release_labels(_read_build(local, dataset, config))
    if not local.exists() and not _HUB_ID.fullmatch(dataset):
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV005",
                    "no such file or folder, and not a Hub dataset id (owner/name)",
                    path=dataset,
                    hint="check the path (a build is `jbcompile build`'s --out folder), or give a Hub id",
                )
            ]
        )
    if not local.exists():
        _refuse_an_unreachable_hub(dataset)
    return _with_release_labels(_load_dataset(dataset, config, revision))


# Seconds the Hub's endpoint has, in all, to answer before a Hub id is refused as unreachable (EV005).
REACH_TIMEOUT = 10.0

# The variables through which the Hub client reaches the Hub (httpx reads them, any case).
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")


def _refuse_an_unreachable_hub(dataset: str) -> None:
    """EV005 at once when the Hub's endpoint does not answer at all (no network, a refused connection, a
    name that does not resolve, no whole answer within :data:`REACH_TIMEOUT`) or answers that it is
    unavailable (5xx): its client would retry for about 25 s before failing the same way, or before
    quietly taking whatever copy of the dataset it cached, whichever revision that was. Offline mode
    (``HF_HUB_OFFLINE=1``, or ``HF_DATASETS_OFFLINE=1`` for the datasets library) asks nothing, and loads
    from the cache as the user chose."""
    import datasets.config
    from huggingface_hub import constants

    from ..redaction import redact, redact_url

    if constants.HF_HUB_OFFLINE or datasets.config.HF_HUB_OFFLINE:
        return
    status, error = _probe(constants.ENDPOINT, REACH_TIMEOUT)
    endpoint = redact_url(constants.ENDPOINT)
    proxy = _proxy_for(constants.ENDPOINT)
    if error is None and status is not None and status >= 500:
        message = f"the Hub at {endpoint} is unavailable (it answers HTTP {status})"
        hint = "try again later"
    elif error is not None and _unreachable(error):
        why = (
            f"{type(error).__name__}: {redact(_first_line(error))}"
            if _first_line(error)
            else type(error).__name__
        )
        if proxy:
            message = f"cannot reach the Hub at {endpoint} through the proxy {redact_url(proxy)} ({why})"
            hint = (
                "check the proxy, or the proxy variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY; NO_PROXY for "
                "hosts reached without it)"
            )
        else:
            message = f"cannot reach the Hub at {endpoint} ({why})"
            hint = "check the network (or HF_ENDPOINT)"
    else:
        return  # it answers: the load says what it makes of the dataset id
    raise DiagnosticError(
        [
            Diagnostic(
                "EV005",
                f"{message}, so this dataset id cannot be loaded (nor is there a file or folder so named)",
                path=dataset,
                hint=f"{hint}; to use a copy loaded before, set HF_HUB_OFFLINE=1 (the Hub client then reads "
                "its cache)",
            )
        ]
    ) from None


def _probe(url: str, deadline: float) -> tuple[int | None, BaseException | None]:
    """The status of a HEAD request to ``url``, or the error it raised; a :class:`TimeoutError` when no
    whole answer came within ``deadline`` seconds in all (a client's read timeout starts again with each
    byte, so a server that trickles bytes would hold it for ever). The request runs in a daemon thread
    left to end by itself."""
    import threading

    from huggingface_hub.utils import get_session

    outcome: list[tuple[int | None, BaseException | None]] = []

    def ask() -> None:
        try:
            outcome.append((get_session().head(url, timeout=deadline).status_code, None))
        except BaseException as error:  # noqa: BLE001 - handed to the caller, which judges it
            outcome.append((None, error))

    thread = threading.Thread(target=ask, name="jbcompile-hub-probe", daemon=True)
    thread.start()
    thread.join(deadline)
    if not outcome:
        return None, TimeoutError(f"no whole answer within {deadline:g} s")
    return outcome[0]


def _unreachable(error: BaseException) -> bool:
    """Whether a transport error says the endpoint (or the proxy to it) was not reached; the client's
    kinds of error differ by version."""
    return isinstance(error, OSError | TimeoutError) or any(
        kind.__name__ in ("TransportError", "ConnectionError", "Timeout", "ProxyError")
        for kind in type(error).__mro__
    )


def _proxy_for(url: str) -> str | None:
    """The proxy the environment routes ``url`` through (as httpx and requests read it), or None."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


# A Hub dataset id: owner/name. Anything else that names no file or folder here is a mistyped path, told
# at once rather than after the Hub client's retries (about 25 s without a network).
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


def _built_by_us(folder: Path) -> bool:
    """Whether a folder is a jbcompile build (its manifest says so). A manifest.json that is not JSON
    cannot be told apart from a damaged build: it is refused (P003), never read as a foreign dataset."""
    from ..jsonl import read_json
    from ..publish.buildfolder import MANIFEST, open_build

    path = folder / MANIFEST
    if not reading.is_present(path, reading.RECORD):  # a FIFO or a folder there: F002
        return False
    try:
        content = read_json(path, reading.RECORD)
    except (OSError, ValueError, DiagnosticError):
        return bool(open_build(folder))  # P003, naming the manifest that cannot be read
    return isinstance(content, dict) and content.get("compiler") == "jbcompile"


def _read_build(folder: Path, dataset: str, config: str) -> LoadedRows:
    """A build's config from the bytes its manifest vouches for (:func:`verified_table`)."""
    import hashlib

    from ..publish.buildfolder import open_build, verified_table

    build = open_build(folder)
    if config not in build.rows:
        configs = ", ".join(build.rows) or "none"
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV004",
                    f"cannot load config {config!r}: this build has {configs}",
                    path=dataset,
                    hint=f"choose one with --config ({configs})",
                )
            ]
        )
    table, digests = verified_table(build, config)
    manifest = {
        key: build.manifest.get(key) for key in ("dataset", "version", "compiler_version", "sources_hash")
    }
    loaded = LoadedRows(table.to_pylist(), list(table.column_names), dataset, config, None, manifest)
    listing = "".join(f"{name}\t{digest}\n" for name, digest in sorted(digests.items()))
    loaded.sha256 = hashlib.sha256(listing.encode("utf-8")).hexdigest()
    loaded.verification = "manifest"
    return loaded


def _folder_digest(folder: Path) -> str:
    """One digest of every file of a folder (names and contents; hidden files left out)."""
    import hashlib

    from ..publish.buildfolder import folder_digests

    listing = "".join(f"{name}\t{digest}\n" for name, digest in sorted(folder_digests(folder).items()))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def _read_release_file(path: Path, config: str) -> LoadedRows:
    """Rows of one release file, each with the line it came from (parquet: its row number)."""
    if path.suffix.lower() == ".parquet":
        try:
            reading.check_file(path, reading.DATA_FILE)  # pyarrow opens it itself: a FIFO would block
            rows = bounded_parquet_rows(path, reading.RELEASE)
        except DiagnosticError:
            raise
        except Exception as error:  # noqa: BLE001 - pyarrow raises several types for a broken file
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV141",
                        f"cannot read the parquet file: {_first_line(error)}",
                        path=str(path),
                        hint="rebuild or download the dataset again; the file is damaged or not parquet",
                    )
                ]
            ) from None
        records = list(enumerate(rows, start=1))
    else:
        lines = read_json_records(path, reading.RELEASE)
        if lines.problems:
            raise DiagnosticError(limited(lines.problems))
        records = lines.records
    if not records:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV006",
                    "no rows to evaluate",
                    path=str(path),
                    hint="give a file with rows of the benchmark",
                )
            ]
        )
    adapted = adapt(records, str(path))
    if adapted.problems:
        raise DiagnosticError(limited(adapted.problems))
    problems = duplicate_ids(adapted.rows, adapted.lines, str(path))
    if problems:
        raise DiagnosticError(limited(problems))
    columns = sorted({name for row in adapted.rows for name in row})
    loaded = LoadedRows(adapted.rows, columns, str(path), None, None, None)  # a file has no configs
    loaded.sha256 = file_sha256(path)
    loaded.format, loaded.ambiguous, loaded.verbatim_prompt = (
        adapted.format,
        adapted.ambiguous,
        adapted.verbatim_prompt,
    )
    return loaded


def _with_release_labels(loaded: LoadedRows) -> LoadedRows:
    """Hub or folder rows in a release's format get the same derivation as a release file."""
    if loaded.format != "jbcompile" or not loaded.rows:
        return loaded
    from .registered import all_eval_kinds

    if any(kind.whole_prompts(loaded.rows) for kind in all_eval_kinds()):
        loaded.verbatim_prompt = True
        return loaded
    adapted = adapt(list(enumerate(loaded.rows, start=1)), loaded.path)
    if adapted.format == "other":
        return loaded
    problems = adapted.problems + duplicate_ids(adapted.rows, adapted.lines, loaded.path)
    if problems:
        raise DiagnosticError(limited(problems))
    loaded.rows, loaded.format = adapted.rows, adapted.format
    loaded.columns = sorted({name for row in adapted.rows for name in row})
    loaded.ambiguous, loaded.verbatim_prompt = adapted.ambiguous, adapted.verbatim_prompt
    return loaded


def _load_dataset(dataset: str, config: str, revision: str | None) -> LoadedRows:
    """A Hub dataset, or a folder that is no jbcompile build, through ``datasets``. A local folder gets
    a cache of its own for this one load, and its files' digest before and after (a folder changed
    while it was read is refused)."""
    import tempfile

    import datasets

    local = Path(dataset)
    data_files = any(local.glob("data/*")) or any(release_path(file) for file in local.glob("*.*"))
    if local.exists() and not (local / "README.md").is_file() and not data_files:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV003",
                    "this folder is not a dataset (no README.md with configs, no data/, no data files)",
                    path=dataset,
                    hint="run `jbcompile build` and pass its --out folder",
                )
            ]
        )
    if local.is_dir():
        _check_folder_files(local)  # no FIFO or huge file reaches datasets
    before = _folder_digest(local) if local.exists() else None
    with tempfile.TemporaryDirectory(prefix="jbcompile-load-") as cache:
        own_cache = cache if local.exists() else None  # a Hub dataset's cache is keyed by its commit
        with service_errors(DATASETS, "loading the dataset", known=_load_problem(dataset, config)):
            split = _load_split(datasets, dataset, config, None if local.exists() else revision, own_cache)
            rows, columns = split.to_list(), list(split.column_names)
    if local.exists():
        commit, manifest = None, _manifest(local / "manifest.json")
        if _folder_digest(local) != before:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV005",
                        "the dataset folder changed while it was read",
                        path=dataset,
                        hint="run again once nothing writes to it",
                    )
                ]
            )
    else:
        commit, manifest = _hub_release(dataset, revision)
    loaded = LoadedRows(
        rows=rows,
        columns=columns,
        path=dataset,
        config=config,
        revision=revision,
        manifest=manifest,
        commit=commit,
    )
    loaded.sha256 = before
    loaded.verification = "commit" if commit else "unverified"
    return loaded


def _check_folder_files(folder: Path) -> None:
    """Every file of a dataset folder that ``datasets`` may open is a regular file within bounds: a
    FIFO among them would keep the load waiting, a huge file would fill the memory (F001/F002), and a
    parquet file is within them once decoded too (F001)."""
    candidates = [*folder.glob("*"), *folder.glob("data/**/*")]
    for path in sorted(candidates):
        if path.name.startswith(".") or path.is_dir():
            continue
        try:
            reading.check_file(path, reading.DATA_FILE)
        except OSError:  # a broken link: datasets says what it misses
            continue
        if path.suffix.lower() == ".parquet":
            try:
                bounded_parquet_rows(path, reading.DATA_FILE, keep=False)
            except DiagnosticError:
                raise
            except Exception:  # noqa: BLE001 - not parquet: datasets says so when it loads it
                continue


def bounded_parquet_rows(path: Path, kind: reading.FileKind, keep: bool = True) -> list[dict[str, Any]]:
    """The rows of a parquet file (none unless ``keep``: only measured), refused (F001) as soon as its
    data passes ``kind``'s limit once decoded (:func:`jbcompile.reading.parquet_batches`)."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for batch in reading.parquet_batches(pq.ParquetFile(path), kind, str(path)):
        if keep:
            rows += batch.to_pylist()
    return rows


def _load_problem(dataset: str, config: str) -> Callable[[Exception], Diagnostic | None]:
    """The diagnostic of an error ``datasets`` raises for a config it cannot load (else None)."""

    from datasets.exceptions import DatasetsError
    from huggingface_hub.errors import HfHubHTTPError

    def known(error: Exception) -> Diagnostic | None:
        if isinstance(error, ValueError) and not isinstance(
            error, DatasetsError
        ):  # unknown config, bad split
            return Diagnostic(
                "EV004",
                f"cannot load config {config!r}: {_first_line(error)}",
                path=dataset,
                hint="choose a config the dataset has with --config (its card lists them)",
            )
        if isinstance(error, OSError | DatasetsError | HfHubHTTPError):  # a missing repo or file, the network
            here = "" if Path(dataset).expanduser().exists() else " (nor is there a file or folder so named)"
            return Diagnostic(
                "EV005",
                f"cannot load the dataset: {type(error).__name__}: {_first_line(error)}{here}",
                path=dataset,
                hint=DATASETS.hint,
            )
        return None  # anything else is unexpected: named as the library's failure

    return known


def _load_split(datasets: Any, dataset: str, config: str, revision: str | None, cache: str | None) -> Any:
    """The ``test`` split of ``config``. A release published as plain data files (one unnamed config,
    often one ``train`` split, e.g. a folder holding BBQ's data/) is taken whole: its only config, and
    its ``test`` split or else its only split. ``cache``: a cache folder of this load alone (the rows
    are then held in memory, not mapped from it)."""
    own = {"cache_dir": cache, "keep_in_memory": True} if cache else {}
    try:
        return datasets.load_dataset(dataset, config, split="test", revision=revision, **own)
    except ValueError as error:
        message = str(error)
        unnamed = "BuilderConfig" in message and "Available: ['default']" in message
        if not (unnamed or message.startswith("Unknown split")):
            raise
    whole = datasets.load_dataset(dataset, None if unnamed else config, revision=revision, **own)
    if "test" in whole or len(whole) == 1:
        return whole["test"] if "test" in whole else next(iter(whole.values()))
    raise ValueError(f"no test split, and more than one other: {', '.join(whole)}")


def _hub_release(repo_id: str, revision: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """The commit a Hub revision points at, and that commit's manifest, so that results name the exact
    data they were computed on. Unknown (None) when the Hub cannot be asked, e.g. offline from a cache."""
    from huggingface_hub import HfApi, hf_hub_download

    try:
        commit = HfApi().dataset_info(repo_id, revision=revision).sha
    except Exception:  # noqa: BLE001 - offline, gated or a non-Hub loader: the rows are loaded regardless
        return None, None
    try:
        path = hf_hub_download(repo_id, "manifest.json", repo_type="dataset", revision=commit)
    except Exception:  # noqa: BLE001 - a dataset not built by jbcompile has no manifest
        return commit, None
    return commit, _manifest(Path(path))


def _manifest(path: Path) -> dict[str, Any] | None:
    from ..jsonl import read_json

    if not path.is_file():
        return None
    try:
        data = read_json(path, reading.RECORD)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {key: data.get(key) for key in ("dataset", "version", "compiler_version", "sources_hash")}


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else ""
