"""Write a compiled dataset as a Hugging Face dataset repository folder: data, card, Croissant file,
manifest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .card import render_card
from .croissant import CROISSANT, croissant, write_croissant
from .data import ROW_GROUP, DataFiles, data_path, write_jsonl, write_parquet
from .features import dataset_info
from .manifest import build_manifest, file_sha256, write_manifest

if TYPE_CHECKING:
    from ..compiled import Compiled, ProgressCallback
    from ..sidework import SideProcess


def write_folder(
    compiled: Compiled,
    folder: Path,
    *,
    formats: Sequence[str] = ("parquet",),
    cards_dir: Path | None = None,
    progress: ProgressCallback | None = None,
) -> dict:
    """Write the data of a compile that kept its rows in memory, then the card and the manifest."""
    data = DataFiles(folder, formats, progress)
    data.total = sum(config.count for config in compiled.configs.values())
    try:
        for config in compiled.configs.values():
            for start in range(0, max(len(config.rows), 1), ROW_GROUP):
                data(config.spec, config.rows[start : start + ROW_GROUP])
        files = data.close()
    except BaseException:
        data.abort()
        raise
    return finish_folder(
        compiled, folder, files, cards_dir=cards_dir, progress=progress, arrow_bytes=data.arrow_bytes
    )


def finish_folder(
    compiled: Compiled,
    folder: Path,
    files: list[str],
    *,
    cards_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    release: bool = False,
    arrow_bytes: dict[str, int] | None = None,
    side: SideProcess | None = None,
) -> dict:
    """Audit the data files written into ``folder``, then add the card, the Croissant file and the
    manifest (the card and the manifest carry the audit's figures); return the manifest. A probe above its
    bar is a warning, or with ``release`` an error that stops here (AU001). ``arrow_bytes``: each config's
    size as Arrow (:attr:`DataFiles.arrow_bytes`), for the card's dataset_info. ``side``: the build's
    second process (:mod:`jbcompile.sidework`), where the audit fits its models.
    """
    from ..audit.run import audit_compiled

    compiled.diagnostics.extend(audit_compiled(compiled, folder, release=release, side=side))
    digests = _digests(folder, files, progress)
    parquet = {name: digests[data_path(name, "parquet")] for name in compiled.configs}
    info = dataset_info(compiled, folder, arrow_bytes or {})
    (folder / "README.md").write_text(render_card(compiled, cards_dir, parquet, info), encoding="utf-8")
    write_croissant(croissant(compiled, folder, digests), folder / CROISSANT)
    manifest = build_manifest(compiled, folder, [*files, "README.md", CROISSANT], digests)
    write_manifest(manifest, folder / "manifest.json")
    return manifest


def _digests(folder: Path, files: list[str], progress: ProgressCallback | None) -> dict[str, str]:
    """sha256 of each data file (read once, for the card and the manifest), with progress in bytes."""
    total = sum((folder / name).stat().st_size for name in files)
    done = 0

    def advance(size: int) -> None:
        nonlocal done
        done += size
        if progress:
            progress("hash", done, total)

    return {name: file_sha256(folder / name, advance) for name in files}


__all__ = [
    "DataFiles",
    "build_manifest",
    "data_path",
    "finish_folder",
    "render_card",
    "write_folder",
    "write_jsonl",
    "write_parquet",
]
