"""Data files: one parquet file per config and split (and optional JSONL copies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

SPLIT = "test"


def data_path(config: str, fmt: str) -> str:
    return f"data/{config}/{SPLIT}-00000-of-00001.{fmt}"


def write_parquet(rows: list[dict[str, Any]], schema: pa.Schema, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=schema)
    # Fixed writer settings: the same rows give the same bytes.
    pq.write_table(table, path, compression="zstd", write_statistics=True, row_group_size=100_000)


def write_jsonl(rows: list[dict[str, Any]], columns: list[str], path: Path) -> None:
    """One JSON object per line, keys in the schema's column order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps({name: row[name] for name in columns}, ensure_ascii=False) + "\n")
