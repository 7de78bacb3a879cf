"""Command-line interface: a thin layer over the library. Every module here registers its commands; a
module is imported when one of its commands is asked for (see :class:`jbcompile.cli.app.CommandsOnDemand`),
so `jbcompile build` does not load the evaluator's backends."""

from __future__ import annotations

from .app import app


def main() -> None:
    """Run the CLI; a failure no command turned into a diagnostic still ends as one (exit 2), no traceback."""
    import errno
    import signal
    import sys

    from ..diagnostics import Diagnostic, DiagnosticError
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
        print_diagnostics(
            [
                Diagnostic(
                    code="CL002",
                    message=f"cannot read or write{where}: {exc.strerror or exc} ({name})",
                    hint="check the path, its permissions and the free disk space"
                    + (f"; {kept}" if kept else ""),
                )
            ]
        )
        sys.exit(EXIT_INPUT)
    except (RecursionError, MemoryError) as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else "too large for memory"
        print_diagnostics(
            [Diagnostic(code="CL003", message=f"the input is {what}", hint="check the file you passed")]
        )
        sys.exit(EXIT_INPUT)


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
