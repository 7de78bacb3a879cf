"""Write a compiled dataset as a Hugging Face dataset repository folder: data, card, manifest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .card import render_card
from .data import data_path, write_jsonl, write_parquet
from .manifest import build_manifest, file_sha256, write_manifest

if TYPE_CHECKING:
    from ..build import Compiled


def write_folder(
    compiled: Compiled, folder: Path, *, formats: Sequence[str] = ("parquet",), cards_dir: Path | None = None
) -> dict:
    files: list[str] = []
    digests: dict[str, str] = {}
    for name, config in compiled.configs.items():
        parquet = data_path(name, "parquet")
        write_parquet(config.rows, config.spec.schema, folder / parquet)
        digests[name] = file_sha256(folder / parquet)
        files.append(parquet)
        if "jsonl" in formats:
            jsonl = data_path(name, "jsonl")
            write_jsonl(config.rows, config.spec.schema.names, folder / jsonl)
            files.append(jsonl)
    (folder / "README.md").write_text(render_card(compiled, cards_dir, digests), encoding="utf-8")
    files.append("README.md")
    manifest = build_manifest(compiled, folder, files)
    write_manifest(manifest, folder / "manifest.json")
    return manifest


__all__ = ["build_manifest", "data_path", "render_card", "write_folder"]
