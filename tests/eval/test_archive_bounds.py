"""An inspect ``.eval`` log is a zip archive: bounded once decompressed, not only on disk (issue 23 §9).
A few kB that decompress to many MB (a zip bomb), or members whose declared sizes lie, are refused with
the predictions file's limit before inspect's reader opens the archive."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest
from jbcompile import limits
from jbcompile.cli import app
from typer.testing import CliRunner

pytest.importorskip("inspect_ai")
LIMIT = 1 << 20  # the predictions limit, lowered so that a bomb of a few MB passes it
INFLATED = 8 * LIMIT


@pytest.fixture(autouse=True)
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_PREDICTIONS_BYTES", LIMIT)


@pytest.fixture
def inspect_never_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_ai.log

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("inspect's reader opened the archive")

    monkeypatch.setattr(inspect_ai.log, "read_eval_log", refuse)


def zstd() -> int:
    from inspect_ai._util.zipfile import zipfile_compress_kwargs  # registers zstd with zipfile

    return int(zipfile_compress_kwargs["compression"])


def bomb(path: Path, compression: int, declared: int | None = None) -> Path:
    """An archive whose header.json is INFLATED zero bytes; ``declared``: the size its headers claim."""
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        archive.writestr("header.json", b"0" * INFLATED)
        archive.writestr("samples/1_epoch_1.json", b"{}")
    if declared is not None:  # rewrite the uncompressed size in the local and the central header
        data = bytearray(path.read_bytes())
        local = data.index(b"PK\x03\x04")
        struct.pack_into("<I", data, local + 22, declared)
        central = data.index(b"PK\x01\x02")
        struct.pack_into("<I", data, central + 24, declared)
        path.write_bytes(bytes(data))
    assert path.stat().st_size < LIMIT // 4
    return path


def score(path: Path, out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["score", str(path), "--out", str(out)])
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize("method", ["deflate", "zstd"])
def test_an_eval_log_that_decompresses_past_the_limit_is_refused_before_inspect_reads_it(
    tmp_path: Path, method: str, inspect_never_reads: None
) -> None:
    compression = zipfile.ZIP_DEFLATED if method == "deflate" else zstd()
    path = bomb(tmp_path / "bomb.eval", compression)
    code, text = score(path, tmp_path / "y5")
    assert code == 2 and "F001" in text and f"decompress to {INFLATED + 2:,} bytes" in text, text
    assert "MAX_PREDICTIONS_BYTES" in text and "Traceback" not in text
    assert not (tmp_path / "y5").exists()


@pytest.mark.parametrize("method", ["deflate", "zstd"])
def test_an_eval_log_whose_declared_sizes_lie_is_refused_by_what_it_decompresses_to(
    tmp_path: Path, method: str, inspect_never_reads: None
) -> None:
    compression = zipfile.ZIP_DEFLATED if method == "deflate" else zstd()
    path = bomb(tmp_path / "liar.eval", compression, declared=100)
    with zipfile.ZipFile(path) as archive:  # the headers claim next to nothing
        assert sum(member.file_size for member in archive.infolist()) < LIMIT
    code, text = score(path, tmp_path / "y5")
    assert code == 2 and "F001" in text and "though they declare 102 bytes" in text, text
    assert not (tmp_path / "y5").exists()


def test_an_archive_below_the_limit_reaches_inspect_and_a_damaged_one_is_ev142(tmp_path: Path) -> None:
    """The check lets a small archive through to inspect's reader (which refuses this one: it is not a
    log) and reads a damaged one as unreadable, not as a traceback."""
    small = tmp_path / "small.eval"
    with zipfile.ZipFile(small, "w", compression=zstd()) as archive:
        archive.writestr("header.json", b"{}")
    code, text = score(small, tmp_path / "out")
    assert code == 2 and "EV142" in text and "Traceback" not in text, text
    damaged = tmp_path / "damaged.eval"
    with zipfile.ZipFile(damaged, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", b'{"status": "success"} ' * 1000)
    data = bytearray(damaged.read_bytes())
    start = data.index(b"header.json") + len("header.json")
    data[start + 10 : start + 40] = b"\xff" * 30  # the compressed stream spoilt
    damaged.write_bytes(bytes(data))
    code, text = score(damaged, tmp_path / "out")
    assert code == 2 and "EV142" in text and "Traceback" not in text, text


# ---- parquet: a --dataset file and the data files of a dataset folder --------------------------------


def parquet_bomb(path: Path) -> Path:
    """A parquet file of a few kB whose one column holds INFLATED bytes of one repeated value."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = INFLATED // 1024
    table = pa.table({"example_id": [f"r{i}" for i in range(rows)], "context": ["x" * 1024] * rows})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < LIMIT // 4
    return path


def test_a_parquet_dataset_file_that_decompresses_past_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.evaluate.dataset import load_rows

    monkeypatch.setattr(limits, "MAX_RELEASE_BYTES", LIMIT)
    path = parquet_bomb(tmp_path / "bomb.parquet")
    with pytest.raises(DiagnosticError) as refused:
        load_rows(str(path), "default")
    (problem,) = refused.value.diagnostics
    assert problem.code == "F001" and "once decompressed" in problem.message, problem
    assert "MAX_RELEASE_BYTES" in problem.message and problem.path == str(path)


def test_a_dataset_folder_whose_parquet_decompresses_past_the_limit_is_refused_before_datasets_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.evaluate.dataset import load_rows

    monkeypatch.setattr(limits, "MAX_DATA_FILE_BYTES", LIMIT)
    folder = tmp_path / "foreign"
    path = parquet_bomb(folder / "data" / "default" / "test-00000-of-00001.parquet")
    with pytest.raises(DiagnosticError) as refused:
        load_rows(str(folder), "default")
    (problem,) = refused.value.diagnostics
    assert problem.code == "F001" and "MAX_DATA_FILE_BYTES" in problem.message, problem
    assert problem.path == str(path)
