"""A second process for the independent work of a large build: two cores, two jobs.

While this process expands the templates, a forked worker runs the lint rules, then loads the audit's
model library (scikit-learn: about a second of imports), and later fits the audit's context-free model
while this process scores the other probes. The worker is forked, so it inherits what is already loaded
(the project, the modules) and nothing is pickled on the way in but each job's own arguments. Tasks run
in the order they are given; a task's exception comes back to whoever waits for its result.

Only on Linux (fork), and only for a benchmark large enough for the fork to pay for itself; everywhere
else the same functions run in this process.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

# Below this many templates the work stays in this process: forking would cost more than it saves.
PARALLEL_MIN_TEMPLATES = 100
# What the worker was forked with (its SideProcess's ``inherit``), for submit_on_inherited's tasks.
_INHERITED: Any = None


class SideProcess:
    """One forked worker process; :meth:`submit` runs a function there, :meth:`close` ends it.

    ``inherit`` (e.g. the loaded project) is what :meth:`submit_on_inherited`'s tasks are given: it is
    there by the fork, not pickled."""

    def __init__(self, inherit: Any = None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        global _INHERITED
        self._pool = ProcessPoolExecutor(
            1,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )
        _INHERITED = inherit
        try:
            self._pool.submit(int)  # forks the worker now (ProcessPoolExecutor forks on the first submit)
        finally:
            _INHERITED = None

    @classmethod
    def for_templates(cls, templates: int, inherit: Any = None) -> SideProcess | None:
        """A worker for a benchmark of ``templates`` templates, or None where one would not pay off."""
        if templates < PARALLEL_MIN_TEMPLATES or not sys.platform.startswith("linux"):
            return None
        return cls(inherit)

    def submit(self, function: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``function(*args)`` in the worker; its arguments and result are pickled."""
        return self._pool.submit(function, *args)

    def submit_on_inherited(self, function: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``function(inherited, *args)`` in the worker, ``inherited`` being what it was forked with."""
        return self.submit(_on_inherited, function, *args)

    def close(self) -> None:
        """End the worker; work not started is dropped (a failed build does not wait for it)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


# prctl's option for "send me this signal when my parent dies" (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this worker when the build that forked it dies.

    A build killed outright (``kill -9``, the OOM killer) cannot shut the pool down, and the worker would
    wait on its task pipe forever (it holds that pipe's write end too, so it never reads an end of file).
    The signal is tied to the forking thread: the pool forks in :class:`SideProcess`'s constructor, on the
    build's own thread. Should the parent have died before the prctl took effect, nothing would send it,
    so the worker checks it is still the parent's child."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:  # pragma: no cover - Linux has it
        return
    if os.getppid() != parent:
        os._exit(1)


def _on_inherited(function: Callable[..., T], *args: Any) -> T:
    return function(_INHERITED, *args)
