"""The compile part of a benchmark design: its source model, configs, expansion and verification.

The build, ``check``, ``stats`` and the importers' round trips call these methods and never branch on
which design answers. A design subclasses :class:`Kind` (the name its templates give in ``kind:``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import pyarrow as pa
    from pydantic import BaseModel

    from ..checks.slots import SlotFill
    from ..diagnostics import Diagnostic
    from ..loader import KeyPath
    from ..projecttypes import Project, SourceTemplate
    from ..templating import FilledText

Row = dict[str, Any]


@dataclass(frozen=True)
class ConfigSpec:
    """One dataset config a kind contributes (e.g. ``lite``), with its arrow schema."""

    name: str
    description: str
    schema_factory: Any  # () -> pa.Schema, so pyarrow is imported only when writing
    default: bool = False
    # a template's rows depend on that template alone (lite): the build then leaves out a row identical
    # to another row of the same template only, and reports one identical to another template's (AU011)
    stable: bool = False

    @property
    def schema(self) -> pa.Schema:
        return self.schema_factory()


@dataclass
class TemplateRows:
    """What one template contributes: rows per config, and problems found while building them.

    A config's rows may be made lazily (a template can make hundreds of thousands), so the pipeline
    holds only a batch of them at a time. It consumes them in one fixed order, which a kind may rely
    on: config by config in the order of ``rows``, each iterated once, to its end. ``diagnostics`` is
    complete once every config's rows have been consumed (a kind may find problems while expanding).
    """

    rows: dict[str, Iterable[Row]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


class Verifier(Protocol):
    """The invariants of one whole config (balance, coverage), checked while its rows stream past.

    ``add`` sees every row of the config once, in build order, one batch at a time, and keeps only the
    summaries its checks need (counts, cells, the ids of rows that break a rule), never the rows; so a
    build's memory does not grow with its rows. Which example ids repeat is the one check that needs
    every row: the pipeline finds those (see ``build.RepeatedIds``) and hands them to ``finish``.
    """

    def add(self, rows: Sequence[Row]) -> None:
        """Take the next rows of the config."""

    def finish(self, repeated: Mapping[str, int]) -> list[Diagnostic]:
        """Every problem of the config, given the example ids that occur more than once (id → count)."""


@dataclass(frozen=True)
class VocabPersons:
    """A template's persons drawn from vocab groups, so that checks can report at the vocab entry.

    ``slots``: person slot → (vocab group, the fillers it is limited to, or None for all);
    ``pairs``: the slots whose persons stand side by side as the options of one row;
    ``contexts``: the template fields whose text names each person (the options must occur there);
    ``answers``: person slot → where the template words the option of whoever fills it (a text with the
    template's slots, filled as the row is), for the slots whose option is not the vocab filler's.
    """

    slots: Mapping[str, tuple[str, Sequence[str] | None]]
    pairs: Sequence[tuple[str, str]]
    contexts: Sequence[KeyPath]
    answers: Mapping[str, KeyPath] = field(default_factory=dict)


class Kind(ABC):
    """How one design's templates become rows: validate, expand, split into configs, verify."""

    name: ClassVar[str]
    template_model: ClassVar[type[BaseModel]]
    configs: ClassVar[Sequence[ConfigSpec]]
    # top-level template keys whose texts hold placeholders of their own or regular expressions, not
    # ``{{SLOT}}`` texts (the stray-brace check leaves them alone)
    own_placeholder_keys: ClassVar[frozenset[str]] = frozenset()
    # the columns of a row that a model is shown (texts and options, in order): two rows of a config
    # that agree in all of them are identical, and the build emits such a row once (AU010). None: every
    # column but example_id (only rows equal in everything else are identical)
    shown_columns: ClassVar[tuple[str, ...] | None] = None
    # the columns of a row that hold its answer options: a row two of whose options read the same cannot
    # be answered, and the build refuses it (B010) whatever the lint settings say
    option_columns: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def validate(self, template: SourceTemplate, project: Project) -> list[Diagnostic]:
        """Cross-reference problems of one template (unknown slots, unknown vocab groups …)."""

    @abstractmethod
    def build(self, template: SourceTemplate, project: Project) -> TemplateRows:
        """All rows of every config this template contributes (see ``TemplateRows`` for the order they
        are consumed in); depends on this template alone."""

    @abstractmethod
    def expand(self, template: SourceTemplate, project: Project) -> list[Row]:
        """Every row of the template (the largest config)."""

    def row_count(self, template: SourceTemplate, project: Project) -> int | None:
        """How many rows ``build`` gives for this (validated) template, every config together, counted
        by arithmetic on its fillers and alternatives, never by expanding it: the build refuses a
        template or a dataset above its row limits before anything is expanded (B008). None when the
        design cannot tell; the build then counts the rows as they come and stops at the limit."""
        return None

    @abstractmethod
    def verifier(self, config: str, project: Project) -> Verifier:
        """A fresh check of a whole config's invariants; the build refuses output that breaks them."""

    @abstractmethod
    def filled_texts(self, template: SourceTemplate, project: Project) -> Iterable[FilledText]:
        """Every distinct filled variant of each template text."""

    @abstractmethod
    def language_coverage(self, template: SourceTemplate, lang: str) -> str:
        """ "all", "some" or "none" of the template's texts exist in ``lang``."""

    # ---- check hooks (``jbcompile check``) ----------------------------------------------------------

    def template_slots(self, template: SourceTemplate, project: Project) -> dict[str, SlotFill]:
        """Slot name → the distinct fillers it takes; by default collected from ``filled_texts``."""
        from ..checks.slots import SlotFill

        fillers: dict[str, dict[str, None]] = {}
        roles: dict[str, str] = {}
        for variant in self.filled_texts(template, project):
            for span in variant.spans:
                fillers.setdefault(span.slot, {})[span.filler] = None
                roles[span.slot] = span.role
        return {slot: SlotFill(slot, roles[slot], tuple(values)) for slot, values in fillers.items()}

    def vocab_persons(self, template: SourceTemplate) -> VocabPersons | None:
        """The template's persons named by their group through vocab slots; None when the design names
        people otherwise (proper names, or not at all): the option checks then read its rows."""
        return None


def alternative_problems(template: SourceTemplate, lang: str, what: str, hint: str) -> list[Diagnostic]:
    """The template's lexical alternatives (``words``; ``what`` a design calls one): R010 for one without
    a ``lang`` text (``hint`` on what to do), R001 for one that holds a slot."""
    from ..schema import text_in
    from ..templating import slots_in

    problems: list[Diagnostic] = []
    for slot, alternatives in template.model.words.items():
        for index, alternative in enumerate(alternatives):
            text = text_in(alternative, lang)
            if text is None:
                problems.append(
                    template.diagnostic(("words", slot, index), "R010", f"no {lang!r} text", hint=hint)
                )
            elif slots_in(text):
                problems.append(
                    template.diagnostic(
                        ("words", slot, index),
                        "R001",
                        f"{what} cannot hold a slot",
                        hint="write it out in words; the persons go into the texts as {{NAME1}} / {{NAME2}}",
                    )
                )
    return problems


def invariant_hint(look_at: str) -> str:
    """The hint of a failed build invariant: what in the sources to look at; when that is right, the
    compiler is at fault (an invariant holds for every source that validates)."""
    return f"{look_at}; if that is right, it is a bug of the design's compiler: please report it"


def config_problem(
    code: str,
    config: str,
    message: str,
    project: Project,
    hint: str = "the sources validate, so it is a bug of the design's compiler: please report it",
) -> Diagnostic:
    """A problem of a whole config (a build invariant), reported at the dataset file: ``[config] message``."""
    from ..diagnostics import Diagnostic

    return Diagnostic(code=code, message=f"[{config}] {message}", path=project.dataset_doc.path, hint=hint)


def repeated_id_problems(
    code: str,
    config: str,
    repeated: Mapping[str, int],
    project: Project,
    hint: str = invariant_hint("give every template an id of its own"),
) -> list[Diagnostic]:
    """One diagnostic per example id that occurs more than once in ``config``."""
    return [
        config_problem(code, config, f"example_id {example_id} occurs {count} times", project, hint)
        for example_id, count in repeated.items()
    ]
