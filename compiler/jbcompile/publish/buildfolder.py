"""Read a build folder (local, or a downloaded Hub revision): its manifest, file hashes and rows.

A build folder is what ``jbcompile build`` writes and what a release uploads: ``README.md``,
``data/<config>/*.parquet`` and ``manifest.json`` (which lists the sha256 of every other file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..emit.manifest import file_sha256

MANIFEST = "manifest.json"


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
    manifest_path = path / MANIFEST
    problem = None
    if not path.exists():
        problem = f"{what} {path} does not exist"
    elif not path.is_dir():
        problem = f"{what} {path} is a file, not a folder"
    elif not manifest_path.is_file():
        problem = f"{what} {path} has no {MANIFEST}: it is not a jbcompile build"
    if problem:
        raise DiagnosticError(
            [Diagnostic(code="P003", message=problem, path=str(path), hint="run `jbcompile build` first")]
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
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
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P003",
                    message=f"{MANIFEST} has no 'files' table",
                    path=str(manifest_path),
                    hint="rebuild with `jbcompile build`",
                )
            ]
        )
    return BuildFolder(path, manifest)


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


def integrity_problems(build: BuildFolder) -> list[Diagnostic]:
    """Files missing, changed or unlisted since the build wrote its manifest."""
    on_disk = folder_digests(build.root)
    on_disk.pop(MANIFEST, None)
    problems = []
    for name, digest in sorted(build.files.items()):
        if name not in on_disk:
            problems.append(f"{name} is listed in the manifest but missing")
        elif on_disk[name] != digest:
            problems.append(f"{name} was changed after the build (sha256 differs from the manifest)")
    problems.extend(
        f"{name} is not listed in the manifest" for name in sorted(set(on_disk) - set(build.files))
    )
    return [
        Diagnostic(
            code="P005",
            message=f"build folder {build.root} does not match its manifest: {problem}",
            path=str(build.root / MANIFEST),
            hint="rebuild with `jbcompile build`; never edit a build folder by hand",
        )
        for problem in problems
    ]


def read_columns(build: BuildFolder, config: str) -> dict[str, list[Any]]:
    """A config's data as Python lists per column (column-wise conversion is the fast one)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pq.read_table(build.root / name) for name in build.data_files(config)]
    if not tables:
        return {}
    return pa.concat_tables(tables, promote_options="default").to_pydict()


def count_rows(build: BuildFolder, config: str) -> int:
    """Row count from the parquet footers (no data read)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(build.root / name).metadata.num_rows for name in build.data_files(config))
