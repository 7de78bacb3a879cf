"""The one interface every importer implements.

An importer is one foreign release format a design can bring in as sources: ``jbcompile import <name>
INPUT… [options]``. It declares its command line as data (:class:`Input`, :class:`Option`), so that the
CLI builds the command from it; it reads the input into a :class:`SourcesDraft` and an
:class:`ImportReport` of everything it could not bring in (``read``); and, once the draft is written, it
builds the sources and counts the input rows they give back (``verify_round_trip``). A design lists its
importers in ``Design.importers()``; :func:`.registry.all_importers` gathers them. The steps every
import shares — the checks before writing, the atomic write, the round trip — are
:func:`jbcompile.importers.run.run_import`.

This module is light on purpose: the CLI reads the declarations at start-up, and an importer's reading
code is loaded only when its command runs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .draft import SourcesDraft
    from .report import ImportReport

Tick = Callable[[int, int], None]  # (done, in all): how far a long step has come
ProgressBar = Callable[[str], AbstractContextManager[Tick]]  # shows a step, described, while it runs


@contextmanager
def no_progress(description: str) -> Iterator[Tick]:
    """A progress bar that shows nothing (the default, and for library callers)."""
    yield lambda done, total: None


@dataclass(frozen=True)
class Input:
    """The files an import reads: its command's one positional argument."""

    name: str  # the argument's name (``{folder}`` in --help)
    help: str
    many: bool = False  # several files (``FILES…``) or one


@dataclass(frozen=True)
class Option:
    """An option of one import command, besides those every import has (--out, --force, --report,
    --strict, --keep-going, --verbose, --diagnostics)."""

    name: str  # the key ``read`` finds the value under (a Python identifier)
    flags: tuple[str, ...]  # ("--names-from",), ("--categories", "-c")
    help: str
    type: type = str  # str, or Path for files (a file given twice, or inside --out, is refused)
    many: bool = False  # repeatable: the value is a list, empty when the option is not given
    default: Any = None


@dataclass
class Imported:
    """What ``read`` brought in: the draft to write, the report so far, and the input as the round trip
    compares it with the build (each importer's own record, e.g. the parsed release rows)."""

    draft: SourcesDraft
    report: ImportReport
    release: Any = None


class Importer(ABC):
    """One release format a design can import as sources. Subclass it in the design's package, declare
    the command line, implement ``read`` and ``verify_round_trip``, and return an instance from the
    design's ``importers()``."""

    name: ClassVar[str]  # the command: ``jbcompile import <name>``
    summary: ClassVar[str]  # one line: the command's help
    input: ClassVar[Input]
    options: ClassVar[tuple[Option, ...]] = ()
    unit: ClassVar[str] = "rows reproduced"  # what the coverage in the closing line counts
    # An error finding means input was left out even where the coverage counts none lost (a template or
    # a whole file the import could not read), so it fails the import like a row not reproduced.
    errors_lose: ClassVar[bool] = False

    @abstractmethod
    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        """Read ``inputs`` into a draft; ``options`` holds every declared option by name (a repeatable
        one as a list). A problem that stops the import raises DiagnosticError, before anything is
        written; everything else the import cannot bring in goes into the report."""

    @abstractmethod
    def verify_round_trip(
        self, sources: Path, imported: Imported, progress: ProgressBar = no_progress
    ) -> None:
        """Build the written ``sources`` and count, in ``imported.report``, the input rows they give
        back; report the others. ``progress`` shows a long comparison."""

    def option_values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every declared option's value, as ``read`` finds it: the given ones, else the defaults (a
        repeatable option: a list, empty when not given)."""
        values = {}
        for option in self.options:
            value = given.get(option.name)
            if option.many:
                values[option.name] = list(value or [])
            else:
                values[option.name] = option.default if value is None else value
        return values

    def __repr__(self) -> str:
        return f"<importer {self.name}>"
