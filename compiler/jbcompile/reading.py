"""Every file the tool reads goes through here: bounded before it is read, refused when it is not a file.

A command given ``/dev/zero``, a named pipe or a file of 50 GB must answer at once with a diagnostic,
not read until the machine runs out of memory or wait forever for a writer. So before any byte is read:

- the path is looked at (``stat``) and anything but a regular file — a folder, a device, a FIFO, a
  socket — is refused with F002, without opening it (opening a FIFO blocks until someone writes);
- the file is opened non-blocking and looked at again through its descriptor (it may have been swapped
  for a FIFO in between), and a size above the limit of its kind is refused with the kind's code;
- at most limit + 1 bytes are read, so a file that grows while it is read (or lies about its size, as
  files under ``/proc`` do) is still refused rather than read without end.

Each kind of file has its own limit (:mod:`jbcompile.limits`); the diagnostic names the file, the kind
and the limit. A library that opens files by path itself (pyarrow, jinja2, datasets) is handed a path
only after :func:`check_file` passed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import limits
from .diagnostics import Diagnostic, DiagnosticError

_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileKind:
    """One kind of file the tool reads, and its limit (a constant of :mod:`jbcompile.limits`)."""

    what: str  # as a message names it: "a source file"
    limit: str  # the name of its constant in jbcompile.limits
    hint: str  # what to do with a file above the limit
    code: str = "F001"

    @property
    def max_bytes(self) -> int:
        return int(getattr(limits, self.limit))


SOURCE = FileKind("a source file", "MAX_SOURCE_FILE_BYTES", "split it into several files", "Y006")
TEMPLATE_CSV = FileKind("a template CSV file", "MAX_TEMPLATE_CSV_BYTES", "split it by category")
RELEASE = FileKind("a release file", "MAX_RELEASE_BYTES", "split it into several files (one per category)")
PREDICTIONS = FileKind("a predictions file", "MAX_PREDICTIONS_BYTES", "split the run (--limit, --categories)")
RECORD = FileKind(
    "a record of the tool (run, results, manifest)",
    "MAX_RECORD_BYTES",
    "this is not a file jbcompile wrote: give the one it wrote",
)
PROMPT = FileKind("a prompt template", "MAX_PROMPT_FILE_BYTES", "a prompt template is a short text")
CARD_TEMPLATE = FileKind("a card template", "MAX_CARD_TEMPLATE_BYTES", "a card template is a short text")
DOCUMENT = FileKind("a Markdown document", "MAX_DOCUMENT_BYTES", "shorten it")
DATA_FILE = FileKind("a data file", "MAX_DATA_FILE_BYTES", "split the dataset into several configs or files")

_TYPES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _type_of(mode: int) -> str:
    return next((name for test, name in _TYPES if test(mode)), "not a regular file")


def not_a_file(shown: str, kind: FileKind, mode: int) -> Diagnostic:
    return Diagnostic(
        "F002",
        f"{_type_of(mode)}, where {kind.what} was expected: not read",
        path=shown,
        hint="give a regular file",
    )


def too_big(shown: str, kind: FileKind, size: int | None) -> Diagnostic:
    """``size`` None: the file grew past the limit while it was read."""
    limit = limits.shown(kind.max_bytes, "bytes")
    found = f"a file of {size:,} bytes" if size is not None else "a file that grew while it was read"
    return Diagnostic(
        kind.code,
        f"{found}: {kind.what} holds at most {limit} ({kind.limit})",
        path=shown,
        hint=kind.hint,
    )


def too_big_decompressed(shown: str, kind: FileKind, found: str) -> Diagnostic:
    """A small file whose contents pass the limit once decompressed (a zip or parquet bomb); ``found``
    says what was found."""
    limit = limits.shown(kind.max_bytes, "bytes")
    return Diagnostic(
        kind.code,
        f"{found}: {kind.what} holds at most {limit} once decompressed ({kind.limit})",
        path=shown,
        hint=kind.hint,
    )


PARQUET_BATCH_ROWS = 1024  # rows decoded at a time while a parquet file is measured


def parquet_batches(file: Any, kind: FileKind, shown: str) -> Iterator[Any]:
    """The record batches of a ``pyarrow.parquet.ParquetFile`` (opened on a checked path, or on its bytes),
    refused (F001) as soon as its data passes ``kind``'s limit once decoded. A parquet file of a few MB
    can hold GBs (a value repeated through a dictionary, zstd), and its footer gives only the encoded
    sizes, so the data is decoded a batch of rows at a time and counted. (pyarrow decodes the footer
    itself, within its own limits on the strings and lists that decoding allocates.)"""
    total = 0
    for batch in file.iter_batches(batch_size=PARQUET_BATCH_ROWS):
        total += batch.nbytes
        if total > kind.max_bytes:
            limit = limits.shown(kind.max_bytes, "bytes")
            found = f"a parquet file whose data decodes to more than {limit}"
            raise DiagnosticError([too_big_decompressed(shown, kind, found)])
        yield batch


def parquet_table(source: Any, kind: FileKind, shown: str) -> Any:
    """A whole parquet file (a checked path, or a pyarrow buffer) as a ``pyarrow.Table``, bounded once
    decoded as :func:`parquet_batches` is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(source)
    return pa.Table.from_batches(list(parquet_batches(file, kind, shown)), schema=file.schema_arrow)


def parquet_row_count(path: Path | str, kind: FileKind, shown: str | None = None) -> int:
    """The rows a parquet file's footer declares, read from a checked regular file within ``kind``'s
    limit (the data itself is not decoded: a count, not the rows)."""
    import pyarrow.parquet as pq

    check_file(path, kind, shown)
    return int(pq.ParquetFile(path).metadata.num_rows)


def check_file(path: Path | str, kind: FileKind, shown: str | None = None) -> int:
    """The size of the regular file ``path``; DiagnosticError when it is not one, or above ``kind``'s
    limit. OSError (missing, no permission) is left to the caller, which knows what the file was for."""
    shown = shown or str(path)
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise DiagnosticError([not_a_file(shown, kind, info.st_mode)])
    if info.st_size > kind.max_bytes:
        raise DiagnosticError([too_big(shown, kind, info.st_size)])
    return info.st_size


def is_present(path: Path | str, kind: FileKind, shown: str | None = None) -> bool:
    """Is there a file to read at ``path``? False when nothing is there (no entry, or a link to nothing),
    True for a regular file, and F002 (DiagnosticError) for anything else — a folder, a FIFO, a device,
    or a link to one. The one existence check of an input: a caller that said "no such file" of a FIFO
    would go on without it (skip a test, fall back to a default) where the user meant it to be read."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISREG(info.st_mode):
        raise DiagnosticError([not_a_file(shown or str(path), kind, info.st_mode)])
    return True


def _open(path: Path | str, kind: FileKind, shown: str) -> int:
    """A descriptor of the regular file ``path``, checked before and after opening."""
    check_file(path, kind, shown)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped between the two looks
            raise DiagnosticError([not_a_file(shown, kind, info.st_mode)])
        if info.st_size > kind.max_bytes:
            raise DiagnosticError([too_big(shown, kind, info.st_size)])
    except BaseException:
        os.close(fd)
        raise
    return fd


def iter_blocks(
    path: Path | str, kind: FileKind, shown: str | None = None, block: int = _BLOCK
) -> Generator[bytes, None, None]:
    """The bytes of a file in blocks (hashing a large file); DiagnosticError as soon as it passes the
    limit of its kind."""
    shown = shown or str(path)
    fd = _open(path, kind, shown)
    try:
        total = 0
        while chunk := os.read(fd, min(block, kind.max_bytes + 1 - total)):
            total += len(chunk)
            if total > kind.max_bytes:
                raise DiagnosticError([too_big(shown, kind, None)])
            yield chunk
    finally:
        os.close(fd)


def read_bytes(path: Path | str, kind: FileKind, shown: str | None = None) -> bytes:
    """The whole file, refused (DiagnosticError) when it is no regular file or above ``kind``'s limit."""
    return b"".join(iter_blocks(path, kind, shown))


def read_text(path: Path | str, kind: FileKind, shown: str | None = None, encoding: str = "utf-8") -> str:
    """The whole file as text (UnicodeDecodeError, a ValueError, when it is not ``encoding``)."""
    return read_bytes(path, kind, shown).decode(encoding)


def template_loader(folder: Path | str, kind: FileKind):  # -> jinja2.FileSystemLoader
    """A jinja2 loader of ``folder`` that bounds each template file it reads (an include too), and
    refuses one that holds a character a reader cannot see (:func:`refuse_hidden_characters`)."""
    return _bounded_loader_class()(str(folder), kind)


def refuse_hidden_characters(text: str, path: str, kind: FileKind) -> None:
    """F005 for each control character, bidirectional override or tag character written in a template
    (a prompt, a card): it changes what a model reads or what a published card shows while the file
    looks the same to whoever reviews it. Zero-width characters pass (a variation selector or a joiner
    may belong to the text); the sources' own files are the lint rules' (JA120, JA121)."""
    from .text import describe, hidden, line_and_column, unseen_in_file

    found = [(index, char) for index, char in unseen_in_file(text) if hidden(char)]
    if not found:
        return
    problems: list[Diagnostic] = []
    for index, char in found[:_HIDDEN_SHOWN]:
        line, column = line_and_column(text, index)
        problems.append(
            Diagnostic(
                "F005",
                f"{kind.what} holds a character a reader of the file cannot see: {describe(char)}"
                + (f" ({len(found)} such characters in all)" if len(found) > 1 and not problems else ""),
                path=str(path),
                line=line,
                col=column,
                hint="delete it; if the text needs it, write it where it shows, as a Jinja string: "
                f'{{{{ "\\u{ord(char):04x}" }}}}',
            )
        )
    raise DiagnosticError(problems)


_HIDDEN_SHOWN = 10  # characters reported by position; the first message gives the count


@cache
def _bounded_loader_class():  # jinja2 is imported only by the commands that render templates
    import jinja2
    from jinja2.loaders import split_template_path

    class BoundedFileSystemLoader(jinja2.FileSystemLoader):
        def __init__(self, searchpath: str, kind: FileKind) -> None:
            super().__init__(searchpath)
            self.kind = kind

        def get_source(self, environment, template):
            pieces = split_template_path(template)
            for folder in self.searchpath:
                candidate = os.path.join(folder, *pieces)
                if os.path.isfile(candidate):
                    check_file(candidate, self.kind)
                    break
            source, filename, uptodate = super().get_source(environment, template)
            refuse_hidden_characters(source, filename, self.kind)
            return source, filename, uptodate

    return BoundedFileSystemLoader
