"""``manifest.json``: what was built from what, with a hash of every file and the shortcut audit's
figures; no timestamps (builds are byte-identical)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..build import Compiled

MANIFEST_SCHEMA_VERSION = 1


def file_sha256(path: Path, advance: Callable[[int], None] | None = None) -> str:
    """The file's sha256, read in blocks; ``advance`` hears how many bytes each block held."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
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
    path.write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def is_jbcompile_manifest(path: Path) -> bool:
    """A manifest written by jbcompile (by content, not by name: any web app may have a manifest.json)."""
    try:
        if not path.is_file() or path.stat().st_size > 16 * 1024 * 1024:
            return False
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("compiler") == "jbcompile"
        and isinstance(manifest.get("files"), dict)
        and isinstance(manifest.get("rows"), dict)
    )


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
