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


# ---- the central directory, bounded by what the end records declare before zipfile reads it ------------

END = struct.Struct("<4s4H2LH")  # APPNOTE 4.3.16: the end of central directory record
ZIP64_END = struct.Struct("<4sQ2H2L4Q")  # 4.3.14
ZIP64_LOCATOR = struct.Struct("<4sLQL")  # 4.3.15


def three_members(path: Path, comment: bytes = b"") -> bytes:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for index in range(1, 4):
            archive.writestr(f"samples/{index}_epoch_1.json", b"{}")
        archive.comment = comment
    return path.read_bytes()


def end_rewritten(data: bytes, members: int | None = None, directory: int | None = None) -> bytes:
    """The archive with its end record declaring ``members`` (on this disk and in all) and a directory of
    ``directory`` bytes; the directory itself unchanged."""
    at = data.rindex(b"PK\x05\x06")
    fields = list(END.unpack_from(data, at))
    if members is not None:
        fields[3] = fields[4] = members
    if directory is not None:
        fields[5] = directory
    return data[:at] + END.pack(*fields) + data[at + END.size :]


def as_zip64(data: bytes, members: int) -> bytes:
    """The archive as zipfile ends one of more than 65,535 members: a zip64 end record declaring
    ``members``, its locator, then an end record whose counts say "see the zip64 record" (0xFFFF)."""
    at = data.rindex(b"PK\x05\x06")
    _, _, _, _, _, size, offset, comment = END.unpack_from(data, at)
    record = ZIP64_END.pack(b"PK\x06\x06", ZIP64_END.size - 12, 45, 45, 0, 0, members, members, size, offset)
    locator = ZIP64_LOCATOR.pack(b"PK\x06\x07", 0, at, 1)
    end = END.pack(b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, size, offset, comment)
    return data[:at] + record + locator + end + data[at + END.size :]


def refuse_to_read(*args: object, **kwargs: object) -> None:
    raise AssertionError("zipfile read the central directory")


@pytest.mark.parametrize(
    ("archive", "declared"),
    [
        ("members", "65,535 members and a directory of"),
        ("members, with a comment", "65,535 members and a directory of"),
        ("directory", "a directory of 4,000,000,000 bytes"),
        ("zip64", "50,000,000 members"),
    ],
)
def test_an_archive_that_declares_a_huge_directory_is_refused_before_zipfile_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive: str, declared: str, inspect_never_reads: None
) -> None:
    """A few hundred bytes that declare more members (the most a classic end record can, 65,535, against
    a limit lowered to 10,000; 50 million in a zip64 end record) or a larger directory than the limits:
    F004, unopened."""
    if archive.startswith("members"):
        monkeypatch.setattr(limits, "MAX_ARCHIVE_ENTRIES", 10_000)
    data = three_members(tmp_path / "small.zip", comment=b"a comment" if "comment" in archive else b"")
    if archive.startswith("members"):
        data = end_rewritten(data, members=65_535)
    elif archive == "directory":
        data = end_rewritten(data, directory=4_000_000_000)
    else:
        data = as_zip64(data, members=50_000_000)
    path = tmp_path / "huge.eval"
    path.write_bytes(data)
    monkeypatch.setattr(zipfile, "ZipFile", refuse_to_read)
    code, text = score(path, tmp_path / "out")
    assert code == 2 and "F004" in text and declared in text, text
    assert "MAX_ARCHIVE_ENTRIES" in text and "Traceback" not in text and not (tmp_path / "out").exists()


def test_the_end_records_are_read_as_zipfile_reads_them(tmp_path: Path) -> None:
    """What is declared is what zipfile finds: a plain archive, one with a comment, a zip64 one (which
    zipfile opens by its zip64 record) — and all three pass to zipfile and read."""
    from jbcompile.evaluate.harness_logs import check_archive, declared_directory
    from jbcompile.reading import PREDICTIONS

    plain = three_members(tmp_path / "plain.zip")
    commented = three_members(tmp_path / "commented.zip", comment=b"PK" * 100)
    for name, data in (("plain", plain), ("commented", commented), ("zip64", as_zip64(plain, 3))):
        path = tmp_path / f"{name}.eval"
        path.write_bytes(data)
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
        directory = data.rindex(b"PK\x05\x06") - data.index(b"PK\x01\x02")
        if name == "zip64":
            directory -= ZIP64_END.size + ZIP64_LOCATOR.size
        with path.open("rb") as raw:
            assert declared_directory(raw) == (3, directory) == (len(members), directory), name
        check_archive(path, PREDICTIONS)


def test_a_log_inspect_wrote_still_reads(tmp_path: Path) -> None:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.scorer import Score
    from jbcompile.evaluate.harness_logs import declared_directory, read_eval_file

    spec = EvalSpec(
        task="t",
        created="2026-01-01T00:00:00+00:00",
        model="mockllm/model",
        dataset=EvalDataset(),
        config=EvalConfig(),
    )
    samples = [
        EvalSample(id=i, epoch=1, input="x", target="A", metadata={"row": i}, scores={"s": Score(value="C")})
        for i in range(1, 4)
    ]
    path = tmp_path / "log.eval"
    write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path), format="eval")
    with zipfile.ZipFile(path) as archive, path.open("rb") as raw:
        declared = declared_directory(raw)
        assert declared is not None and declared[0] == len(archive.infolist()) > 3
    assert [sample["metadata"]["row"] for _, sample in read_eval_file(path)] == [1, 2, 3]


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


def test_a_build_folder_whose_parquet_decompresses_past_the_limit_is_refused_by_diff(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build folder's data file is read whole (`diff`, `export`, `audit` and `eval` of a build): bounded
    once decoded as a dataset folder's is, even with a manifest that vouches for the bytes (a release
    downloaded from the Hub is such a folder)."""
    import hashlib
    import json
    import shutil

    monkeypatch.setattr(limits, "MAX_DATA_FILE_BYTES", LIMIT)
    tampered = tmp_path / "tampered"
    shutil.copytree(build_dir, tampered)
    name = "data/lite/test-00000-of-00001.parquet"
    path = parquet_bomb(tampered / name)
    manifest = json.loads((tampered / "manifest.json").read_text("utf-8"))
    manifest["files"][name] = hashlib.sha256(path.read_bytes()).hexdigest()
    (tampered / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    result = CliRunner().invoke(app, ["diff", str(build_dir), str(tampered)])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "F001" in text and "once decompressed" in text, text
    assert "MAX_DATA_FILE_BYTES" in text and str(path) in text and "Traceback" not in text
