"""Atomic writes: a reader, or a crash, sees the old file or the new one, never half of it.

Where a command may write, and how a folder or several files are replaced at once, is
:mod:`jbcompile.outputs`; the temporary file of a write inside a place a command holds is recorded in
that place's journal, so that a kill's leftover is removed by the next run.
"""

from __future__ import annotations

import os
from pathlib import Path

from .outputs import covering, location, temp_name, write_new


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` in one step (temp file in the same folder, fsync, ``os.replace``); keep its mode.

    A symbolic link is written through (its target is replaced), so a shared file stays shared.
    """
    path = location(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_name(path)
    holder, inside_temporary = covering(path)
    if holder is not None and not inside_temporary:
        holder.announce(temp)
    try:
        write_new(temp, data, like=path)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
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
