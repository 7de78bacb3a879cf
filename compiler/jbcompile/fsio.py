"""Atomic writes: a reader, or a crash, sees the old file (or folder) or the new one, never half of it.

A folder is replaced in three steps (``out`` → ``.out.old-*``, staging → ``out``, remove the old one)
under an exclusive lock on its parent folder, so two writers never collide. A process killed between two steps
leaves a state the next writer repairs before it starts (:func:`recover_folder`): the old folder is put
back when ``out`` is missing, and leftover staging and old folders are removed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

OLD = "old"


def taken_with(out: Path, kept: Sequence[tuple[str, Path]]) -> str | None:
    """What replacing the folder ``out`` would take with it: the working folder, or one of ``kept``
    ((name, path): the sources, the input files …) lying in it; None when nothing."""
    resolved = Path(os.path.abspath(out)).resolve()
    here = Path.cwd().resolve()
    if resolved == here or here.is_relative_to(resolved):
        return "is the working folder or holds it"
    for name, path in kept:
        if Path(os.path.abspath(path)).resolve().is_relative_to(resolved):
            return f"holds {name} ({path})"
    return None


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` in one step (temp file in the same folder, fsync, ``os.replace``); keep its mode.

    A symbolic link is written through (its target is replaced), so a shared file stays shared.
    """
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def rewrite_between(path: Path, start: str, end: str, content: str) -> bool:
    """Replace the part of a text file from the line ``start`` to the line ``end`` (both included) by
    ``content`` (a generated section of a doc), atomically; True when the file changed."""
    text = path.read_text("utf-8")
    first, last = text.index(start), text.index(end) + len(end)
    new = text[:first] + content.rstrip("\n") + text[last:]
    if new != text:
        write_atomic(path, new)
    return new != text


def staging_folder(out: Path, purpose: str) -> Path:
    """An empty folder beside ``out`` (same file system, so the final rename is atomic)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.{purpose}-", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the result is meant to be shared
    return staging


def swap_folder(staging: Path, out: Path) -> None:
    """Put ``staging`` where ``out`` is; the old folder is removed only once the new one is in place."""
    backup = None
    if out.exists():
        backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.{OLD}-", dir=out.parent))
        os.rmdir(backup)
        os.replace(out, backup)
    try:
        os.replace(staging, out)
    except BaseException:
        if backup is not None:
            os.replace(backup, out)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


@contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock for replacing ``out``; waits while another process holds it.

    The lock is on the parent folder itself (``flock`` on a directory), so no lock file is left behind;
    two outputs in one folder are written one after the other.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # a file system without locks (some network or FUSE mounts): go on unlocked
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
        yield
    finally:
        os.close(fd)  # closing releases the lock


def recover_folder(out: Path, purpose: str) -> None:
    """Repair what a killed writer left beside ``out``; call with the lock held.

    Staging folders are never complete (the swap renames them away), so they go. An old folder is the
    previous ``out`` itself, renamed whole: it comes back when ``out`` is missing, else it goes.
    """
    for staging in out.parent.glob(f".{out.name}.{purpose}-*"):
        shutil.rmtree(staging, ignore_errors=True)
    olds = sorted(out.parent.glob(f".{out.name}.{OLD}-*"), key=lambda p: p.stat().st_mtime_ns)
    if olds and not out.exists() and not out.is_symlink():
        os.replace(olds.pop(), out)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def replaced_folder(out: Path, purpose: str, *, before: Callable[[], None] = lambda: None) -> Iterator[Path]:
    """Yield an empty staging folder; when the block ends without error, it replaces ``out``.

    The whole write holds ``out``'s lock, after repairing an interrupted earlier write; ``before`` runs
    then (e.g. to refuse a folder that is not ours). On any error the staging folder is removed and
    ``out`` is left as it was.
    """
    out = Path(out)
    with folder_lock(out):
        recover_folder(out, purpose)
        before()
        staging = staging_folder(out, purpose)
        try:
            yield staging
            swap_folder(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
