"""Read a build folder (local, or a downloaded Hub revision): its manifest, file hashes and rows.

A build folder is what ``jbcompile build`` writes and what a release uploads: ``README.md``,
``data/<config>/*.parquet`` and ``manifest.json`` (which lists the sha256 of every other file).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..emit.manifest import file_sha256
from ..jsonl import read_json
from ..outputs import location, lock_path, settle
from ..reading import DATA_FILE, RECORD, check_file, is_present, parquet_table, read_bytes
from ..schema.common import IDENTIFIER
from ..schema.dataset import SEMVER

if TYPE_CHECKING:
    import pyarrow as pa

MANIFEST = "manifest.json"
_IDENTIFIER = re.compile(IDENTIFIER)
_SEMVER = re.compile(SEMVER)


@dataclass(frozen=True)
class BuildFolder:
    root: Path
    manifest: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.manifest.get("version", "?"))

    @property
    def rows(self) -> dict[str, int]:
        return dict(self.manifest.get("rows", {}))

    @property
    def files(self) -> dict[str, str]:
        """Path → sha256 of every file the manifest covers (all but the manifest itself)."""
        return dict(self.manifest.get("files", {}))

    def data_files(self, config: str) -> list[str]:
        prefix = f"data/{config}/"
        return sorted(p for p in self.files if p.startswith(prefix) and p.endswith(".parquet"))


def open_build(path: Path, what: str = "build folder") -> BuildFolder:
    """Read the manifest of a build folder; raise a P003 diagnostic when there is none to read."""
    path = Path(path)
    settle(path)  # a build a kill cut short is finished (or the previous one put back) first
    manifest_path = path / MANIFEST
    problem = None
    if not path.exists():
        problem = f"{what} {path} does not exist"
    elif not path.is_dir():
        problem = f"{what} {path} is a file, not a folder"
    elif not is_present(manifest_path, RECORD):  # a FIFO or folder there is F002, not "no manifest"
        problem = f"{what} {path} has no {MANIFEST}: it is not a jbcompile build"
    if problem:
        interrupted = lock_path(location(path)).exists()  # what settle could not finish: a live build?
        hint = (
            "a build is being written there, or was interrupted: wait for it, or run `jbcompile build`"
            if interrupted
            else "run `jbcompile build` first"
        )
        raise DiagnosticError([Diagnostic(code="P003", message=problem, path=str(path), hint=hint)])
    try:  # bounded; a key twice (F003) or a FIFO (F002) is reported as it is
        manifest = read_json(manifest_path, RECORD)
    except (OSError, ValueError) as exc:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P003",
                    message=f"{MANIFEST} cannot be read: {exc}",
                    path=str(manifest_path),
                    hint="rebuild with `jbcompile build`",
                )
            ]
        ) from None
    shape = manifest_shape_problem(manifest)
    if shape:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P003",
                    message=f"{MANIFEST} {shape}",
                    path=str(manifest_path),
                    hint="rebuild with `jbcompile build`",
                )
            ]
        )
    return BuildFolder(path, manifest)


def manifest_shape_problem(manifest: Any) -> str | None:
    """What makes a manifest unusable: the tables the readers rely on, with the types they expect."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return "has no 'files' table"
    for name, digest in manifest["files"].items():
        parts = name.split("/")
        if not isinstance(digest, str) or name.startswith("/") or ".." in parts or "" in parts:
            return f"lists a file that cannot be in a build folder: {name!r}"
    rows = manifest.get("rows", {})
    if not isinstance(rows, dict) or not all(isinstance(k, str) and _count(v) for k, v in rows.items()):
        return "has a 'rows' table that does not map each config to a row count"
    configs = manifest.get("configs", {})
    if not isinstance(configs, dict) or not all(
        isinstance(info, dict) and isinstance(info.get("kind"), str) and _count(info.get("rows", 0))
        for info in configs.values()
    ):
        return "has a 'configs' table that does not give each config its design ('kind') and row count"
    # names that commands print, put in paths and write into generated files: as dataset.yaml allows them
    for name in (*rows, *configs):
        if not _IDENTIFIER.fullmatch(name):
            return f"names a config that no build can have: {name!r}"
    for key, pattern in (("dataset", _IDENTIFIER), ("version", _SEMVER)):
        if key in manifest and not (isinstance(manifest[key], str) and pattern.fullmatch(manifest[key])):
            return f"has a {key!r} that dataset.yaml could not have given it: {manifest[key]!r}"
    return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@contextmanager
def _data_errors(build: BuildFolder, name: str) -> Iterator[None]:
    """A data file that is missing or not parquet is a diagnostic naming it, never a traceback."""
    try:
        yield
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, FileNotFoundError):
            first_line = "the file is missing"
        elif isinstance(exc, OSError) and exc.strerror:
            first_line = exc.strerror
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P016",
                    message=f"data file {name} of {build.root} cannot be read: {first_line}",
                    path=str(build.root / name),
                    hint="rebuild with `jbcompile build`; never edit a build folder by hand",
                )
            ]
        ) from None


def folder_files(root: Path) -> dict[str, Path]:
    """Every file of a folder by its repo path (POSIX), hidden files and folders left out."""
    root = Path(root)
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        out[relative.as_posix()] = path
    return out


def folder_digests(root: Path) -> dict[str, str]:
    return {name: file_sha256(path) for name, path in folder_files(root).items()}


def integrity_findings(build: BuildFolder) -> list[tuple[str, str]]:
    """(file, what is wrong) for every file missing, changed or unlisted since the build wrote its
    manifest: the one reading behind P005 (a local build) and verify's integrity differences (a release)."""
    on_disk = folder_digests(build.root)
    on_disk.pop(MANIFEST, None)
    found = []
    for name, digest in sorted(build.files.items()):
        if name not in on_disk:
            is_present(build.root / name, DATA_FILE)  # a FIFO or a folder in its place is F002, not missing
            found.append((name, f"{name} is listed in the manifest but missing"))
        elif on_disk[name] != digest:
            found.append((name, f"{name} was changed after the build (sha256 differs from the manifest)"))
    found.extend(
        (name, f"{name} is not listed in the manifest") for name in sorted(set(on_disk) - set(build.files))
    )
    return found


def integrity_problems(build: BuildFolder) -> list[Diagnostic]:
    """Files missing, changed or unlisted since the build wrote its manifest."""
    return [_mismatch(build, problem) for _, problem in integrity_findings(build)]


def _mismatch(build: BuildFolder, problem: str) -> Diagnostic:
    return Diagnostic(
        code="P005",
        message=f"build folder {build.root} does not match its manifest: {problem}",
        path=str(build.root / MANIFEST),
        hint="rebuild with `jbcompile build`; never edit a build folder by hand",
    )


def verified_file(build: BuildFolder, name: str) -> bytes | None:
    """A file of the build read from the very bytes whose sha256 its manifest lists, as publish verifies
    every file it uploads: one edited after the build, missing or not listed is refused (P005), never
    trusted; None for a build that has no such file at all."""
    import hashlib

    path, listed = build.root / name, build.files.get(name)
    if listed is None and not path.exists():
        return None
    data = read_bytes(path, RECORD) if listed is not None and path.exists() else None
    if listed is None:
        problem = f"{name} is not listed in the manifest"
    elif data is None:
        problem = f"{name} is listed in the manifest but missing"
    elif hashlib.sha256(data).hexdigest() != listed:
        problem = f"{name} was changed after the build (sha256 differs from the manifest)"
    else:
        return data
    raise DiagnosticError([_mismatch(build, problem)])


def verified_table(build: BuildFolder, config: str) -> tuple[pa.Table, dict[str, str]]:
    """A config's rows read from the very bytes whose sha256 matched the manifest, and those digests
    (repo path → sha256). Each data file is read once, hashed and parsed from memory: nothing can change
    between the check and the read, and no cache is involved. P005 for a data file changed, missing or
    not listed; P016 for one that is not parquet, or rows that are not as many as the manifest says."""
    import hashlib

    import pyarrow as pa

    listed = build.data_files(config)
    folder = build.root / "data" / config
    found = sorted(f"data/{config}/{p.name}" for p in folder.glob("*.parquet")) if folder.is_dir() else []
    problems = [
        _mismatch(build, f"{name} is not listed in the manifest") for name in found if name not in listed
    ]
    if not listed or config not in build.rows:
        problems.append(_mismatch(build, f"it lists no data file or no row count of config {config!r}"))
    tables, digests = [], {}
    for name in listed:
        if not (build.root / name).exists():
            problems.append(_mismatch(build, f"{name} is listed in the manifest but missing"))
            continue
        with _data_errors(build, name):  # bounded; a FIFO or a device in its place is refused (F002)
            data = read_bytes(build.root / name, DATA_FILE)
        digests[name] = hashlib.sha256(data).hexdigest()
        if digests[name] != build.files[name]:
            problems.append(
                _mismatch(build, f"{name} was changed after the build (sha256 differs from the manifest)")
            )
            continue
        with _data_errors(build, name):  # bounded once decoded too (F001): a few MB may hold GBs
            tables.append(parquet_table(pa.BufferReader(data), DATA_FILE, str(build.root / name)))
    if problems:
        raise DiagnosticError(problems)
    table = pa.concat_tables(tables, promote_options="default")
    expected = build.rows.get(config)
    if expected is not None and table.num_rows != expected:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P016",
                    message=f"config {config!r} of {build.root} holds {table.num_rows} rows; "
                    f"its manifest says {expected}",
                    path=str(build.root / MANIFEST),
                    hint="rebuild with `jbcompile build`; never edit a build folder by hand",
                )
            ]
        )
    return table, digests


def count_rows(build: BuildFolder, config: str) -> int:
    """Row count from the parquet footers (no data read)."""
    import pyarrow.parquet as pq

    total = 0
    for name in build.data_files(config):
        with _data_errors(build, name):
            check_file(build.root / name, DATA_FILE)
            total += pq.ParquetFile(build.root / name).metadata.num_rows
    return total
