"""Output safety: every rule about where jbcompile writes, in one place (docs/guarantees.md).

Every command that writes follows four rules:

1. **An output is never an input.** :func:`overlaps` refuses an output that is, holds or lies inside an
   input of the command or another of its outputs; a folder replaced whole may not be, or hold, the
   working folder either. Paths are compared once resolved (links followed).
2. **One writer per place.** :func:`claim` takes an exclusive lock on the output's place (a lock file
   beside it, ``.NAME.jbcompile-lock``) *before* the command decides whether the place may be written,
   and holds it until the last rename. A second writer waits, says for whom, then decides on what the
   first one left: commands run at once behave as if they had run one after the other.
3. **Nothing half-written.** A file is written beside its target and renamed over it
   (:func:`jbcompile.fsio.write_atomic`); a folder is replaced whole (:meth:`Claim.replaced_folder`);
   several files and folders change in one journaled step (:meth:`Claim.commit`).
4. **A kill leaves nothing the next run cannot repair.** The lock file is a write-ahead journal: every
   temporary file or folder (its name holds ``.jbcompile-``) is recorded before it is created, and every
   commit before its first rename. The next claim of the place, and :func:`settle` (which readers of the
   tool's own files call), roll an interrupted commit forward and remove what the journal names — only
   that: a file is never removed on its name alone.

A journal is one JSON object a line: a header (``{"jbcompile": 1, "pid": …}``), ``{"made": [folders]}``
(the folders the claim created, removed again if they stay empty), then ``{"temp": path}``,
``{"commit": [[staged, target, aside], …]}``, and ``{"done": true}`` or ``{"undone": true}`` (a commit
taken back while the process was alive); paths are relative to the lock file's folder. A last line
cut short by a kill announced nothing that happened: every line is on disk before its step starts.

A command that writes (``init``, ``audit`` and any new one included) declares its inputs and outputs
and writes inside :func:`writing`; ``tests/safety/test_overlap_matrix.py`` lists every command of the
CLI and fails for one that writes and is not in its table.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, DiagnosticError

LOCK_SUFFIX = ".jbcompile-lock"
_HEADER = b'{"jbcompile"'  # how every journal starts
MARK = ".jbcompile-"  # in the name of every temporary file or folder the tool makes
OVERLAP = "CL010"  # an output is, holds or lies inside an input (commands without a code of their own)
NOT_OURS = "CL011"  # a file named like our lock file that is not one

Change = bytes | str | Path | None  # new content; a staged file or folder already written; None: remove


def _notify(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# Where a waiting writer says whom it waits for (stderr; a library caller may point it elsewhere).
notify: Callable[[str], None] = _notify


# ------------------------------------------------------------------------------------------- places


def location(path: Path | str) -> Path:
    """The absolute place a path names, links followed (those of its folders and its own)."""
    return Path(os.path.realpath(os.path.abspath(path)))


def lock_path(place: Path) -> Path:
    return place.parent / f".{place.name}{LOCK_SUFFIX}"


def is_own_name(name: str) -> bool:
    """A lock file or a temporary file or folder of the tool (what a kill may leave behind)."""
    return name.startswith(".") and (name.endswith(LOCK_SUFFIX) or MARK in name)


def _token() -> str:
    return secrets.token_hex(4)


def temp_name(target: Path, purpose: str = "", folder: bool = False) -> Path:
    """A fresh temporary name beside ``target`` (same folder, so the final rename is atomic)."""
    middle = f"{purpose}-" if purpose else ""
    return target.parent / f".{target.name}{MARK}{middle}{_token()}{'' if folder else '.tmp'}"


# ------------------------------------------------------------------------------------------ overlaps


@dataclass(frozen=True)
class Output:
    """One output of a command, as the command line names it."""

    label: str  # "--out", "--report", "the sources"
    path: Path
    code: str = OVERLAP  # the diagnostic a conflict of this output gets
    whole: bool = False  # a folder replaced whole: never the working folder, nor one holding it


def _relation(output: Path, other: Path) -> str | None:
    if output == other or (
        os.path.exists(output) and os.path.exists(other) and os.path.samefile(output, other)
    ):
        return "is"  # the same path, or another name of the same file (a hard link)
    if other.is_relative_to(output):
        return "holds"
    if output.is_relative_to(other):
        return "lies inside"
    return None


def overlaps(outputs: Sequence[Output], inputs: Iterable[tuple[str, Path | str]]) -> list[Diagnostic]:
    """Each output that is, holds or lies inside an input or an earlier output (one diagnostic naming
    both paths); inputs that do not exist (a Hub id, a typo the command reports) are left out."""
    placed = [(label, Path(path), location(path)) for label, path in inputs if os.path.lexists(path)]
    here = location(Path.cwd())
    problems = []
    for index, output in enumerate(outputs):
        place = location(output.path)
        others = placed + [(o.label, o.path, location(o.path)) for o in outputs[:index]]
        for label, path, other in others:
            relation = _relation(place, other)
            if relation is not None:
                what = (
                    f"{relation} {label} ({path}); an output is never an input, nor in one, nor holding one"
                )
                problems.append(_overlap(output, what, "a place of its own, outside every input"))
        if output.whole and (place == here or here.is_relative_to(place)):
            what = "is the working folder or holds it, and it would be replaced whole"
            problems.append(_overlap(output, what, "a new folder of its own"))
    return problems


def _overlap(output: Output, what: str, instead: str) -> Diagnostic:
    return Diagnostic(
        output.code,
        f"{output.label} {output.path} {what}",
        path=str(output.path),
        hint=f"give {output.label} {instead}",
    )


def refuse(problems: Sequence[Diagnostic]) -> None:
    if problems:
        raise DiagnosticError(problems)


# -------------------------------------------------------------------------------------------- claims


_held: list[Claim] = []  # the claims this process holds, innermost last
_journal_lock = threading.Lock()


@dataclass
class Claim:
    """An exclusive hold on one output place, with its journal (the lock file)."""

    place: Path
    lock: Path
    fd: int
    folders: list[Path] = field(default_factory=list)  # temporary folders announced: inside is covered
    root: Claim | None = None  # a claim inside a place this process already holds shares its journal

    @property
    def journal(self) -> Claim:
        return self.root or self

    def covers(self, place: Path) -> bool:
        return place.is_relative_to(self.place)

    # ---------------------------------------------------------------------------------------- journal
    def record(self, entry: Mapping[str, object]) -> None:
        """Append one line to the journal and put it on disk before the step it announces."""
        owner = self.journal
        line = json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n"  # below jsonl: its own call
        with _journal_lock:
            os.write(owner.fd, line.encode("utf-8"))
            os.fsync(owner.fd)

    def _relative(self, path: Path) -> str:
        return os.path.relpath(path, self.journal.lock.parent)

    def announce(self, path: Path) -> Path:
        """Record ``path`` (a temporary file or folder about to be made) so a kill's leftover is removed."""
        self.record({"temp": self._relative(path)})
        return path

    def made(self, folders: Sequence[Path]) -> None:
        """Record folders this claim creates: removed again (by this run or the next) if left empty."""
        if folders:
            self.record({"made": [self._relative(folder) for folder in folders]})

    def folder_for(self, path: Path) -> None:
        """Make ``path``'s folder (and those above it), recorded first."""
        self.made(_missing_folders(path.parent))
        path.parent.mkdir(parents=True, exist_ok=True)

    def temp_folder(self, target: Path, purpose: str) -> Path:
        """A new, announced, empty folder beside ``target``."""
        folder = self.announce(temp_name(target, purpose, folder=True))
        self.folder_for(folder)
        os.mkdir(folder, 0o755)
        self.journal.folders.append(folder)
        return folder

    # ----------------------------------------------------------------------------------------- writes
    @contextmanager
    def replaced_folder(self, purpose: str, target: Path | None = None) -> Iterator[Path]:
        """Yield an empty staging folder; when the block ends without error it replaces ``target`` (the
        claimed place by default) in one journaled step; on an error it is removed."""
        target = location(target) if target is not None else self.place
        staging = self.temp_folder(target, purpose)
        try:
            yield staging
            self.commit({target: staging})
        finally:
            _remove(staging)

    def commit(self, changes: Mapping[Path, Change]) -> None:
        """Change several files and folders as one step: all of them or none.

        Each value is new content (bytes or text), a staged file or folder already written (announced),
        or None to remove the target. New contents are written beside their targets; then the journal
        lists every rename, and the renames run. A kill from there on is rolled forward by the next
        claim; an error (a folder one may not write to) puts everything back before it is raised.
        """
        plan: list[tuple[Path | None, Path, Path | None]] = []
        try:
            for target, change in changes.items():
                target = location(target)
                staged = self._stage(target, change)
                exists = os.path.lexists(target)
                aside = temp_name(target, "old", folder=os.path.isdir(target)) if exists else None
                if staged is not None or aside is not None:
                    plan.append((staged, target, aside))
        except BaseException:
            for staged, _, _ in plan:
                if staged is not None:
                    _remove(staged)
            raise
        self.record(
            {
                "commit": [
                    [
                        None if s is None else self._relative(s),
                        self._relative(t),
                        None if a is None else self._relative(a),
                    ]
                    for s, t, a in plan
                ]
            }
        )
        done: list[tuple[Path | None, Path, Path | None]] = []
        try:
            for step in plan:
                done.append(step)
                _apply(*step)
            _sync_folders(target for _, target, _ in plan)
        except OSError:
            _undo(done)
            self.record({"undone": True})
            raise
        _finish(plan)
        self.record({"done": True})

    def _stage(self, target: Path, change: Change) -> Path | None:
        if change is None or isinstance(change, Path):
            return change
        staged = self.announce(temp_name(target))
        self.folder_for(staged)
        write_new(staged, change, like=target)
        return staged


def write_new(path: Path, data: bytes | str, like: Path) -> None:
    """Create the file ``path`` holding ``data``, on disk (fsync) before it returns, with the permissions
    of ``like`` when that is a file (the file it is about to replace)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    if like.is_file():
        os.chmod(path, like.stat().st_mode & 0o7777)


def _apply(staged: Path | None, target: Path, aside: Path | None) -> None:
    """One rename of a commit (also what a roll forward repeats): the old target is kept aside (a hard
    link for a file, so the target never goes missing) until every rename is done."""
    if aside is not None and os.path.lexists(target) and not os.path.lexists(aside):
        if os.path.isdir(target) and not os.path.islink(target):
            os.replace(target, aside)
        else:
            try:
                os.link(target, aside, follow_symlinks=False)
            except OSError:  # a file system without hard links
                os.replace(target, aside)
    if staged is not None and os.path.lexists(staged):
        os.replace(staged, target)
    elif staged is None and os.path.lexists(target):  # a removal
        _remove(target)


def _finish(steps: Sequence[tuple[Path | None, Path, Path | None]]) -> None:
    """Complete a commit (again, after a kill: every step can be repeated) and drop what was set aside;
    an old target comes back only where nothing took its place and it was not to be removed."""
    for step in steps:
        _apply(*step)
    for staged, target, aside in steps:
        if aside is not None and os.path.lexists(aside):
            if staged is not None and not os.path.lexists(target):
                os.replace(aside, target)
            else:
                _remove(aside)


def _undo(done: Sequence[tuple[Path | None, Path, Path | None]]) -> None:
    """Take back the renames of a commit that failed part way (newest first)."""
    for staged, target, aside in reversed(done):
        if staged is not None and os.path.lexists(target) and not os.path.lexists(staged):
            os.replace(target, staged)
        if aside is None or not os.path.lexists(aside):
            continue
        if os.path.lexists(target) and os.path.samefile(aside, target):
            os.unlink(aside)  # a link to the file still in place (a rename onto it would do nothing)
        else:
            if os.path.isdir(target) and not os.path.islink(target):
                _remove(target)
            os.replace(aside, target)


def _sync_folders(targets: Iterable[Path]) -> None:
    for folder in sorted({target.parent for target in targets}):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(FileNotFoundError):
            os.unlink(path)


# ----------------------------------------------------------------------------------------- recovery


MAX_JOURNAL_BYTES = 64 * 1024 * 1024  # the journal is read whole; one line per file changed


def _read_journal(lock: Path, fd: int) -> list[dict]:
    """The complete lines of a journal; CL011 when the file is not a journal of ours."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    size = 0
    while size <= MAX_JOURNAL_BYTES and (chunk := os.read(fd, 1 << 16)):
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    if not data:
        return []
    # no journal of ours grows past the bound (a few lines per file changed), nor starts otherwise
    if size > MAX_JOURNAL_BYTES or not (data.startswith(_HEADER) or _HEADER.startswith(data)):
        raise DiagnosticError(
            [
                Diagnostic(
                    NOT_OURS,
                    f"{lock} is not a lock file of jbcompile; it was left as it is",
                    path=str(lock),
                    hint="move that file away (jbcompile keeps its lock and journal under this name)",
                )
            ]
        )
    entries = []
    for line in data.split(b"\n")[:-1]:  # the last piece has no newline: cut short, or empty
        try:
            entry = json.loads(line)
        except ValueError:
            break
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _recover(lock: Path, entries: Sequence[dict]) -> list[Path]:
    """Finish what a dead writer's journal says was under way: commits roll forward, temporaries go.
    Returns the folders that writer made, innermost first (to be removed once empty, lock file gone)."""
    base = lock.parent

    def at(relative: object) -> Path | None:
        return None if not isinstance(relative, str) else Path(os.path.normpath(base / relative))

    open_commit: list[tuple[Path | None, Path, Path | None]] | None = None
    temps: list[Path] = []
    made: list[Path] = []
    for entry in entries:
        if "temp" in entry and (temp := at(entry["temp"])) is not None:
            temps.append(temp)
        elif isinstance(entry.get("made"), list):
            made += [folder for item in entry["made"] if (folder := at(item)) is not None]
        elif isinstance(entry.get("commit"), list):
            open_commit = []
            for item in entry["commit"]:
                if isinstance(item, list) and len(item) == 3 and (target := at(item[1])) is not None:
                    open_commit.append((at(item[0]), target, at(item[2])))
        elif entry.get("done") or entry.get("undone"):
            open_commit = None
    if open_commit is not None:  # commits run one at a time: only the last can be under way
        _finish(open_commit)
    for temp in temps:
        if MARK in temp.name:
            _remove(temp)
    return made


# -------------------------------------------------------------------------------------------- locks


def _flock(fd: int, blocking: bool) -> bool:
    """Take the lock; False when another process holds it (and ``blocking`` is off)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            return True  # a file system without locks (some network or FUSE mounts): go on unlocked
        raise
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Is the locked file still the one at ``path`` (its holder removes it when done)?"""
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _holder(lock: Path) -> str:
    try:
        with open(lock, encoding="utf-8") as handle:
            header = json.loads(handle.readline(1 << 16))
        return f"`jbcompile {header.get('command')}` (process {header.get('pid')})"
    except (OSError, ValueError, AttributeError):
        return "another jbcompile command"


def _open_lock(place: Path) -> tuple[int, Path]:
    """The lock file of ``place``, locked by this process; waits while another process holds it."""
    lock = lock_path(place)
    told = False
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            if not _flock(fd, blocking=False):
                if not told:
                    notify(
                        f"waiting: {_holder(lock)} is writing {place}; this command goes on when it is done"
                    )
                    told = True
                _flock(fd, blocking=True)
            if _same_file(fd, lock):
                return fd, lock
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder finished and removed it: take the next one


def _missing_folders(folder: Path) -> list[Path]:
    missing = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def covering(place: Path) -> tuple[Claim | None, bool]:
    """The claim of this process that covers ``place``, and whether ``place`` lies in one of its announced
    temporary folders (whose contents need no announcing: the folder goes whole)."""
    for held in reversed(_held):
        inside = any(place.is_relative_to(folder) for folder in held.folders)
        if inside or held.covers(place):
            return held, inside
    return None, False


@contextmanager
def claim(path: Path | str, command: str = "") -> Iterator[Claim]:
    """Hold ``path``'s place for this block: lock first, then repair what a killed writer left (its
    journal), then the block decides and writes. Inside a place this process already holds, the claim
    shares that one's lock and journal. Folders made for the lock file that stay empty are removed."""
    place = location(path)
    holder, _ = covering(place)
    if holder is not None:
        yield Claim(place, holder.journal.lock, holder.journal.fd, root=holder.journal)
        return
    created = _missing_folders(place)  # the place itself too: a failed command leaves no empty folder
    try:
        place.parent.mkdir(parents=True, exist_ok=True)
        fd, lock = _open_lock(place)
    except BaseException:
        _remove_empty(created)
        raise
    try:
        entries = _read_journal(lock, fd)
    except BaseException:  # not our file: leave it as it is
        os.close(fd)
        _remove_empty(created)
        raise
    held = Claim(place, lock, fd)
    try:
        created += _recover(lock, entries)  # a dead writer's empty folders go with this claim's own
        os.ftruncate(fd, 0)
        held.record({"jbcompile": 1, "pid": os.getpid(), "command": command, "place": place.name})
        held.made(created)
        _held.append(held)
        try:
            yield held
        finally:
            _held.remove(held)
            created += _recover(lock, _read_journal(lock, fd))  # a commit cut short goes on
    finally:
        with suppress(OSError):
            os.unlink(lock)
        os.close(fd)
        _remove_empty(created)


def _remove_empty(folders: Iterable[Path]) -> None:
    """Remove those of the folders that are empty (or hold only empty folders of the list)."""
    for folder in sorted(set(folders), key=lambda f: len(f.parts), reverse=True):  # innermost first
        with suppress(OSError):  # not empty (something was written there), or never made
            os.rmdir(folder)


@contextmanager
def writing(
    outputs: Sequence[Output], inputs: Iterable[tuple[str, Path | str]] = (), command: str = ""
) -> Iterator[dict[Path, Claim]]:
    """Refuse outputs that overlap the inputs, then claim every output (in one order, so two commands
    never wait for each other), check again under the locks, and yield the claims by output path."""
    inputs = list(inputs)
    refuse(overlaps(outputs, inputs))
    with ExitStack() as stack:
        claims = {}
        for output in sorted(outputs, key=lambda o: str(location(o.path))):
            claims[output.path] = stack.enter_context(claim(output.path, command))
        refuse(overlaps(outputs, inputs))
        yield claims


def settle(path: Path | str) -> None:
    """For a reader of the tool's own files (sources, run folders): finish what a killed writer of
    ``path`` left, unless a live one holds it. Best effort: a place it cannot write is read as it is."""
    place = location(path)
    lock = lock_path(place)
    if not os.path.lexists(lock) or covering(place)[0] is not None:
        return
    try:
        fd = os.open(lock, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if _flock(fd, blocking=False) and _same_file(fd, lock):
            made = _recover(lock, _read_journal(lock, fd))
            os.unlink(lock)
            _remove_empty(made)
    except (OSError, DiagnosticError):
        pass
    finally:
        os.close(fd)


def commit_files(place: Path, changes: Mapping[Path, Change], command: str = "") -> None:
    """Change files under ``place`` (a sources folder) all at once, under its claim."""
    with claim(place, command) as held:
        held.commit(changes)


def renamed(diagnostics: Iterable[Diagnostic], staging: Path, real: Path) -> list[Diagnostic]:
    """Diagnostics about a staging copy, pointing at the place the user named instead."""
    from dataclasses import replace

    from .paths import display_path

    pairs = [(str(staging), str(real)), (display_path(staging), display_path(real))]
    out = []
    for diagnostic in diagnostics:
        path, message = diagnostic.path or "", diagnostic.message
        for old, new in pairs:
            if path.startswith(old):
                path = new + path[len(old) :]
            message = message.replace(old, new)
        out.append(replace(diagnostic, path=path or diagnostic.path, message=message))
    return out
