"""Command-line interface: a thin layer over the library. Every module here registers its commands; a
module is imported when one of its commands is asked for (see :class:`jbcompile.cli.app.CommandsOnDemand`),
so `jbcompile build` does not load the evaluator's backends."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .app import app

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic


def main() -> None:
    """Run the CLI; a failure no command turned into a diagnostic still ends as one (exit 2), no traceback."""
    import errno
    import signal
    import sys

    from ..diagnostics import Diagnostic, DiagnosticError
    from ..paths import file_in_the_way
    from .app import EXIT_INPUT, fail, print_diagnostics

    # Past a file size limit (ulimit -f) a write should fail with EFBIG, not kill the process.
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # SIGTERM unwinds like Ctrl-C: what a command staged is removed, a commit under way is finished.
    signal.signal(signal.SIGTERM, _terminated)
    try:
        try:
            app()
        except RuntimeError as exc:
            loop = _symlink_loop(exc)
            if loop is None:
                raise
            raise loop from exc
    except DiagnosticError as error:  # e.g. an optional dependency a command reached only late (CL008)
        sys.exit(fail(error).exit_code)
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
        where = f" {exc.filename}" if exc.filename else ""
        kept = getattr(exc, "kept", None)  # what eval or score left on disk, when they looked
        reason = f"{exc.strerror or exc} ({name})"
        hint = "check the path, its permissions and the free disk space"
        blocker = (
            file_in_the_way(exc.filename)
            if exc.errno in (errno.EEXIST, errno.ENOTDIR) and isinstance(exc.filename, str)
            else None
        )
        if blocker is not None:  # the system says "File exists" or "Not a directory", not which file
            reason = f"{blocker} is a file, not a folder"
            hint = f"give a path whose folders are folders, or move the file {blocker} away"
        print_diagnostics(
            [
                Diagnostic(
                    code="CL002",
                    message=f"cannot create{where}: {reason}"
                    if blocker is not None
                    else f"cannot read or write{where}: {reason}",
                    hint=hint + (f"; {kept}" if kept else ""),
                )
            ]
        )
        sys.exit(EXIT_INPUT)
    except (RecursionError, MemoryError) as exc:
        print_diagnostics([_exhausted(exc, [arg for arg in sys.argv[1:] if not arg.startswith("-")][:1])])
        sys.exit(EXIT_INPUT)


def _exhausted(exc: RecursionError | MemoryError, command: list[str]) -> Diagnostic:
    """CL003 for a RecursionError or MemoryError no command turned into a diagnostic: it names the command
    and the step it was in (the innermost function of ours), not a file — none may have been passed."""
    import traceback

    from ..diagnostics import Diagnostic

    ours = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "/jbcompile/" in frame.filename.replace("\\", "/") and "/jbcompile/cli/" not in frame.filename
    ]
    step = ""
    if ours:
        module = ours[-1].filename.replace("\\", "/").rsplit("/jbcompile/", 1)[1].removesuffix(".py")
        step = f" in {module.replace('/', '.')}.{ours[-1].name}"
    what = "recursed too deeply" if isinstance(exc, RecursionError) else "ran out of memory"
    name = f"`jbcompile {command[0]}`" if command else "jbcompile"
    return Diagnostic(
        code="CL003",
        message=f"{name} {what}{step}",
        hint="a file or an option asks for more than it can hold: lower the option's value (e.g. --shots, "
        "--limit) or, if you passed a file, check it; if neither is the cause, report it with the command "
        "line",
    )


def _symlink_loop(exc: RuntimeError) -> OSError | None:
    """pathlib (before Python 3.13) reports a symlink loop met while resolving a path as a RuntimeError:
    it is the file system's ELOOP, reported as every other error of the file system is (CL002)."""
    import errno
    import os

    message = str(exc)
    if message.startswith("Symlink loop from "):
        name = message.removeprefix("Symlink loop from ").strip("'\"")
        return OSError(errno.ELOOP, os.strerror(errno.ELOOP), name)
    return None


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
