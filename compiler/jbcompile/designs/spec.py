"""The spec object of a benchmark design: one per design, registered once (see :mod:`jbcompile.designs`).

A design is one package holding everything of one benchmark format — its source model, row contract,
expansion and verification (``compiler``), its evaluator part (prompts, reading replies, metrics, the
paper's protocol, release formats, compare section), its prompt templates and card section, and its
importers. The spec only says where those parts are; each is loaded when first asked for, so a command
that never evaluates never imports the evaluator.
"""

from __future__ import annotations

import functools
import importlib
import sys
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..diagnostics import Diagnostic, DiagnosticError

if TYPE_CHECKING:
    from ..audit.probe import Probe, ProbeInputs
    from ..diagnostics import Code
    from ..evaluate.kind import EvalKind
    from ..importers.interface import Importer
    from .base import Kind
    from .exporting import HarnessExport


def _where(error: BaseException) -> str:
    """The file and line a part's import failed at (a syntax error's own, else the innermost frame)."""
    if isinstance(error, SyntaxError) and error.filename:
        return f"{error.filename}:{error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def unloadable(subject: str, error: BaseException, at: str | None = None) -> Diagnostic:
    """DS001: a design plug-in, or a part of one, that cannot be loaded (``subject`` says which, ``at``
    where it failed)."""
    where = f" (at {at})" if at else ""
    return Diagnostic(
        "DS001",
        f"{subject}: {type(error).__name__}: {error}{where}",
        hint="fix or uninstall the distribution that provides it",
    )


def _guarded(part: str, method: Callable[[Design], Any]) -> Callable[[Design], Any]:
    @functools.wraps(method)
    def load(self: Design) -> Any:
        try:
            return method(self)
        except DiagnosticError:
            raise
        except Exception as error:  # a broken plug-in part must say which one, not end in a traceback
            subject = f"the design {self.name!r} ({type(self).__module__}) cannot load its {part} part"
            raise DiagnosticError([unloadable(subject, error, _where(error))]) from error

    return load


@dataclass(frozen=True)
class Starter:
    """What `jbcompile init --kind NAME` writes for a design, beside the dataset.yaml it writes itself:
    source files (path under the sources folder → text: one template and the vocabulary it needs) and the
    categories they use (dataset.yaml declares them). The files must build and check clean."""

    files: Mapping[str, str]
    categories: tuple[str, ...]


class Design(ABC):
    """What the pipeline asks of one design. Subclass it in the design's package, set ``name`` and
    ``summary``, return the parts from ``compiler`` and ``evaluator`` (import them inside the method),
    and expose one instance through the ``jbcompile.designs`` entry-point group."""

    name: ClassVar[str]  # what the design's templates write in ``kind:``; also its results' ``kind``
    summary: ClassVar[str]  # one line for help texts and docs: the paper, and what a row asks
    # where this design's configs stand in a dataset that mixes designs, and in listings: lower first,
    # ties by name (the built-in designs take 0, 10 and 20)
    position: ClassVar[int] = 100
    # the diagnostic codes only this design reports, with their titles and docs:
    # ``codes = declare(name, "docs/….md#anchor", {code: "one-line title", …})`` (jbcompile.codes)
    codes: ClassVar[tuple[Code, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Guard the parts a design loads lazily: a plug-in whose compile or evaluator module fails to
        import stops with DS001 naming the design and the failing line, as a broken package does."""
        super().__init_subclass__(**kwargs)
        for part in ("compiler", "evaluator"):
            method = cls.__dict__.get(part)
            if callable(method) and not getattr(method, "__isabstractmethod__", False):
                setattr(cls, part, _guarded(part, method))

    @abstractmethod
    def compiler(self) -> Kind:
        """The compile part (:class:`jbcompile.designs.base.Kind`)."""

    @abstractmethod
    def evaluator(self) -> EvalKind:
        """The evaluator part (:class:`jbcompile.evaluate.kind.EvalKind`)."""

    def importers(self) -> Sequence[Importer]:
        """The release formats this design can import as sources (none by default): each a
        :class:`jbcompile.importers.Importer`, which ``jbcompile import <name>`` runs."""
        return ()

    def starter(self) -> Starter | None:
        """The starter benchmark of this design for `jbcompile init`: by default the files of the
        package's ``starter/`` folder (``templates/…``, ``vocab/…``), with the categories they name in
        ``category:``; None when the design has no ``starter/`` (then `init` does not offer it)."""
        from ..loader import parse_yaml
        from ..reading import SOURCE, read_text

        folder = self.folder / "starter"
        if not folder.is_dir():
            return None
        files = {
            path.relative_to(folder).as_posix(): read_text(path, SOURCE)
            for path in sorted(folder.rglob("*.yaml"))
        }
        categories: dict[str, None] = {}
        for text in files.values():
            data = parse_yaml(text, "starter").data
            if isinstance(data, dict) and isinstance(data.get("category"), str):
                categories[data["category"]] = None
        return Starter(files, tuple(categories))

    def harness_export(self) -> HarnessExport | None:
        """What of this design lm-evaluation-harness and inspect can run (`jbcompile export`), or None
        when they cannot run it (then its configs are left out of an export, and the docs say why)."""
        return None

    def probes(self, inputs: ProbeInputs) -> Sequence[Probe]:
        """Fresh shortcut probes for one audited config (:mod:`jbcompile.audit`): rules or small models
        that try to reach the gold without the reasoning the design tests. By default those the
        ``probes(inputs)`` function of the design's ``probes`` module makes; none without that module."""
        name = f"{type(self).__module__}.probes"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            return ()
        return tuple(module.probes(inputs))

    @property
    def folder(self) -> Path:
        """The design's package folder: its ``prompts/`` and ``card.md.j2`` live there."""
        module = sys.modules[type(self).__module__]
        return Path(module.__file__ or ".").resolve().parent

    @property
    def prompts_dir(self) -> Path:
        """The design's prompt templates (``<setting>.j2``; ``_*.j2`` are layouts to extend)."""
        return self.folder / "prompts"

    @property
    def card_section(self) -> Path | None:
        """A Jinja2 fragment the dataset card shows when the build holds this design's configs."""
        path = self.folder / "card.md.j2"
        return path if path.is_file() else None

    def __repr__(self) -> str:
        return f"<design {self.name}>"
