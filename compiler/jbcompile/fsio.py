"""Atomic writes: a reader, or a crash, sees the old file (or folder) or the new one, never half of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` in one step (temp file in the same folder, fsync, ``os.replace``); keep its mode."""
    path = Path(path)
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
        backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
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
