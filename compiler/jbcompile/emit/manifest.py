"""``manifest.json``: what was built from what, with a hash of every file and the shortcut audit's
figures; no timestamps (builds are byte-identical)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..jsonl import dumps, read_json
from ..reading import DATA_FILE, RECORD, FileKind, iter_blocks

if TYPE_CHECKING:
    from ..compiled import Compiled

MANIFEST_SCHEMA_VERSION = 1


def file_sha256(path: Path, advance: Callable[[int], None] | None = None, kind: FileKind = DATA_FILE) -> str:
    """The file's sha256, read in blocks; ``advance`` hears how many bytes each block held. A path that
    is no regular file, or a file beyond ``kind``'s limit, raises DiagnosticError (F001/F002)."""
    digest = hashlib.sha256()
    for block in iter_blocks(path, kind):
        digest.update(block)
        if advance:
            advance(len(block))
    return digest.hexdigest()


def build_manifest(
    compiled: Compiled, folder: Path, files: list[str], digests: dict[str, str] | None = None
) -> dict:
    """The manifest of a written folder; ``digests`` are sha256 already known (the rest are read)."""
    from .. import __version__

    known = digests or {}
    project = compiled.project
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "compiler": "jbcompile",
        "compiler_version": __version__,
        "dataset": project.dataset.name,
        "version": project.dataset.version,
        "language": project.lang,
        "sources_hash": compiled.sources_hash,
        "configs": {
            name: {
                "kind": config.kind,
                "default": config.spec.default,
                "rows": config.count,
                "templates": len(config.template_ids),
            }
            for name, config in compiled.configs.items()
        },
        "rows": {name: config.count for name, config in compiled.configs.items()},
        # the shortcut audit of the data: figures per config, probe and category, and the bars
        "audit": compiled.audit.record() if compiled.audit is not None else None,
        "files": {name: known.get(name) or file_sha256(folder / name) for name in sorted(files)},
    }


def write_manifest(manifest: dict, path: Path) -> None:
    path.write_text(dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_manifest(folder: Path) -> dict:
    return read_json(Path(folder) / "manifest.json", RECORD)
