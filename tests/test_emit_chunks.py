"""Data files written one row group at a time hold the same bytes as one table written at once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jbcompile.emit import data


def _rows(n: int) -> list[dict]:
    return [{"example_id": f"x-{i}", "label": i % 3, "tags": [str(i), "t"]} for i in range(n)]


SCHEMA = pa.schema([("example_id", pa.string()), ("label", pa.int64()), ("tags", pa.list_(pa.string()))])


@pytest.mark.parametrize("count", [0, 1, 7, 9])
def test_chunked_parquet_equals_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    monkeypatch.setattr(data, "ROW_GROUP", 3)
    rows = _rows(count)
    data.write_parquet(rows, SCHEMA, tmp_path / "chunked.parquet")
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    pq.write_table(
        table, tmp_path / "whole.parquet", compression="zstd", write_statistics=True, row_group_size=3
    )
    assert (tmp_path / "chunked.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert pq.read_table(tmp_path / "chunked.parquet").to_pylist() == rows


@pytest.mark.parametrize(("batch", "convert"), [(1, 2), (2, 2), (5, 2), (4, 10_000), (11, 1)])
def test_rows_in_batches_give_the_bytes_of_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int, convert: int
) -> None:
    monkeypatch.setattr(data, "ROW_GROUP", 3)
    monkeypatch.setattr(data, "CONVERT", convert)
    rows = _rows(11)
    files = data.ConfigFiles(SCHEMA, tmp_path / "streamed.parquet", tmp_path / "streamed.jsonl")
    for start in range(0, len(rows), batch):
        files.add(rows[start : start + batch])
    files.close()
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    pq.write_table(
        table, tmp_path / "whole.parquet", compression="zstd", write_statistics=True, row_group_size=3
    )
    assert (tmp_path / "streamed.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    data.write_jsonl(rows, SCHEMA.names, tmp_path / "whole.jsonl")
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()


def test_rows_without_a_column_or_with_others_give_the_bytes_of_one_write(tmp_path: Path) -> None:
    rows = _rows(5)
    del rows[1]["tags"]  # a missing column is null
    rows[2]["extra"] = "not in the schema"  # an unknown key is left out
    rows[3]["label"] = None
    for name, batch in (("ragged", rows), ("whole", [rows[0], rows[4]])):
        data.write_parquet(batch, SCHEMA, tmp_path / f"{name}.parquet")
        table = pa.Table.from_pylist(batch, schema=SCHEMA)
        pq.write_table(table, tmp_path / "expected.parquet", compression="zstd", write_statistics=True)
        assert (tmp_path / f"{name}.parquet").read_bytes() == (tmp_path / "expected.parquet").read_bytes()


def test_jsonl_keeps_every_row_in_column_order(tmp_path: Path) -> None:
    rows = _rows(5)
    data.write_jsonl(rows, ["label", "example_id", "tags"], tmp_path / "rows.jsonl")
    lines = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert [list(json.loads(line)) for line in lines] == [["label", "example_id", "tags"]] * 5
    assert [json.loads(line)["example_id"] for line in lines] == [row["example_id"] for row in rows]
