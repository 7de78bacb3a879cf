"""Data files: one parquet file per config and split (and optional JSONL copies).

Rows are written while the build makes them, one row group at a time (``ROW_GROUP`` rows each, however
the rows arrive), so a build holds at most one group per config (as compact Arrow arrays), never a whole
config. The same rows give the same bytes whether they come in one list or in many batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..jsonl import dumps

if TYPE_CHECKING:
    import pyarrow as pa

    from ..compiled import ProgressCallback
    from ..designs import ConfigSpec, Row

SPLIT = "test"
ROW_GROUP = 100_000  # rows per parquet row group, the unit of writing
CONVERT = 10_000  # rows turned into Arrow arrays at a time


def _columns_of(rows: Sequence[Row], names: Sequence[str]) -> list[Sequence[Any]]:
    """The rows' values column by column (None where a row lacks a column), for Arrow to convert one
    column at a time: quicker than ``pa.Table.from_pylist``, and the same arrays."""
    if not rows:
        return [[] for _ in names]
    try:
        return (
            list(zip(*map(itemgetter(*names), rows), strict=True))
            if len(names) > 1
            else [[row[names[0]] for row in rows]]
        )
    except KeyError:
        return [[row.get(name) for row in rows] for name in names]


def data_path(config: str, fmt: str) -> str:
    return f"data/{config}/{SPLIT}-00000-of-00001.{fmt}"


class ConfigFiles:
    """The data files of one config, written as its rows arrive: parquet in whole row groups, and the
    JSONL copy (one object per line, keys in the schema's column order) line by line.

    Rows become Arrow arrays ``CONVERT`` at a time, kept column by column until a row group is full; the
    group's columns are then joined one at a time (each column's pieces freed as it is joined), because
    a group written from one contiguous array per column has the same bytes however the rows came.
    """

    def __init__(self, schema: pa.Schema, parquet: Path, jsonl: Path | None = None) -> None:
        import pyarrow.parquet as pq

        self.schema = schema
        self.rows = 0  # rows taken so far
        self._pending: list[Row] = []  # rows not converted yet (fewer than CONVERT)
        self._columns: list[list[pa.Array]] = [[] for _ in schema]  # the converted part of the group
        self._held = 0  # rows in self._columns
        self._groups = 0
        self.arrow_bytes = 0  # the rows' size as Arrow in memory (the card's num_bytes)
        parquet.parent.mkdir(parents=True, exist_ok=True)
        # Fixed writer settings: the same rows give the same bytes.
        self._writer = pq.ParquetWriter(parquet, schema, compression="zstd", write_statistics=True)
        self._lines = None
        if jsonl is not None:
            self._lines = jsonl.open("w", encoding="utf-8", newline="\n", buffering=1 << 20)

    def add(self, rows: Sequence[Row]) -> None:
        if self._lines is not None:
            columns = self.schema.names
            self._lines.writelines(json_line(row, columns) for row in rows)
        self.rows += len(rows)
        self._pending.extend(rows)
        while len(self._pending) >= self._room():
            room = self._room()
            self._convert(self._pending[:room])
            del self._pending[:room]

    def _room(self) -> int:
        return min(CONVERT, ROW_GROUP - self._held)

    def _convert(self, rows: list[Row]) -> None:
        import pyarrow as pa

        for pieces, field, values in zip(
            self._columns, self.schema, _columns_of(rows, self.schema.names), strict=True
        ):
            pieces.append(pa.array(values, type=field.type))
        self._held += len(rows)
        if self._held == ROW_GROUP:
            self._write_group()

    def _write_group(self) -> None:
        import pyarrow as pa

        arrays = []
        for index, field in enumerate(self.schema):
            pieces, self._columns[index] = self._columns[index], []
            arrays.append(pa.concat_arrays(pieces) if pieces else pa.array([], type=field.type))
            del pieces
        group = pa.Table.from_arrays(arrays, schema=self.schema)
        del arrays
        self._writer.write_table(group, row_group_size=ROW_GROUP)
        self.arrow_bytes += group.nbytes
        self._held = 0
        self._groups += 1

    def close(self) -> None:
        """Write the last, partial group (or one empty group for a config without rows) and close."""
        if self._pending:
            self._convert(self._pending)
            self._pending = []
        if self._held or not self._groups:
            self._write_group()
        self.abort()

    def abort(self) -> None:
        """Close the files as they are (the build failed: its staging folder is thrown away)."""
        self._writer.close()
        if self._lines is not None:
            self._lines.close()


class DataFiles:
    """Every config's data files in a build folder, each opened when its first rows come.

    Used as the row sink of :func:`jbcompile.build.compile_project`, so the rows go to disk as they are
    made; ``close`` finishes the files and returns their paths inside the folder.
    """

    def __init__(
        self, folder: Path, formats: Sequence[str] = ("parquet",), progress: ProgressCallback | None = None
    ) -> None:
        self.folder = Path(folder)
        self.formats = tuple(formats)
        self.progress = progress
        self.total: int | None = None  # rows to write, when known in advance (for the progress bar)
        self.configs: dict[str, ConfigFiles] = {}
        self._written = 0

    def __call__(self, spec: ConfigSpec, rows: Sequence[Row]) -> None:
        files = self.configs.get(spec.name)
        if files is None:
            jsonl = self.folder / data_path(spec.name, "jsonl") if "jsonl" in self.formats else None
            files = self.configs[spec.name] = ConfigFiles(
                spec.schema, self.folder / data_path(spec.name, "parquet"), jsonl
            )
        files.add(rows)
        before, self._written = self._written, self._written + len(rows)
        if self.progress and (self._written // 10_000 != before // 10_000 or self._written == self.total):
            self.progress("write", self._written, self.total)

    def close(self) -> list[str]:
        """Finish every file; return the files written, relative to the folder."""
        files: list[str] = []
        for name, config in self.configs.items():
            config.close()
            files.append(data_path(name, "parquet"))
            if "jsonl" in self.formats:
                files.append(data_path(name, "jsonl"))
        if self.progress:
            self.progress("write", self._written, self._written)
        return files

    def abort(self) -> None:
        for config in self.configs.values():
            config.abort()

    @property
    def arrow_bytes(self) -> dict[str, int]:
        """Each config's rows' size as Arrow in memory, once closed."""
        return {name: config.arrow_bytes for name, config in self.configs.items()}


def write_parquet(rows: Iterable[Row], schema: pa.Schema, path: Path) -> None:
    """One parquet file of ``rows``, in the row groups a build writes."""
    files = ConfigFiles(schema, path)
    files.add(list(rows))
    files.close()


def write_jsonl(rows: Iterable[Row], columns: list[str], path: Path) -> None:
    """One JSON object per line, keys in ``columns``' order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n", buffering=1 << 20) as handle:
        handle.writelines(json_line(row, columns) for row in rows)


def json_line(row: Row, columns: Sequence[str]) -> str:
    return dumps({name: row[name] for name in columns}) + "\n"
