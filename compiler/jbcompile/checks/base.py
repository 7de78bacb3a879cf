"""What a rule is: metadata on the class, a ``check`` that returns findings, and ``@register``.

A rule never writes, prints or raises on purpose: it yields :class:`Finding` values anchored at a text
(document, key path, character offset), each with typed edits when it can be fixed. The runner turns
findings into :class:`~jbcompile.diagnostics.Diagnostic` values (positions, severity overrides,
suppressions) and a crashing rule into one coded diagnostic.

The class docstring is the rule's documentation (``jbcompile check --explain CODE`` and
docs/checks.md): its first line is the description, and it has an ``Anti-pattern:`` and a ``Better:``
section.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..diagnostics import Edit, Severity

if TYPE_CHECKING:
    from ..loader import KeyPath, LoadedDocument
    from .corpus import CheckContext, SourceText


@dataclass(frozen=True)
class Finding:
    """One problem a rule found, anchored at character ``offset`` of the scalar at ``key_path``, or, for
    what stands outside the values (a comment, a key), at its own ``position`` in the file."""

    doc: LoadedDocument
    key_path: KeyPath
    message: str
    offset: int | None = None  # None: the scalar (or mapping) itself
    hint: str | None = None
    edits: tuple[Edit, ...] = ()
    severity: Severity | None = None  # only when the rule decides (e.g. under --release)
    position: tuple[int, int] | None = None  # (line, col) of a finding outside any value (a comment, a key)

    @classmethod
    def at(cls, text: SourceText, offset: int | None, message: str, **kwargs: object) -> Finding:
        return cls(text.doc, text.key_path, message, offset, **kwargs)  # type: ignore[arg-type]


class Rule:
    """Base class of the check rules; subclasses set the metadata and implement :meth:`check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    fixable: ClassVar[bool] = False
    japanese: ClassVar[bool] = True  # analyses Japanese text (skipped when a project is checked in English)
    release_error: ClassVar[bool] = False  # an error under --release, whatever dataset.yaml's checks say

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def description(cls) -> str:
        return cls.doc().splitlines()[0] if cls.doc() else ""


RULES: dict[str, type[Rule]] = {}  # code → rule, filled as checks/rules/ registers its modules


def register(rule: type[Rule]) -> type[Rule]:
    """Class decorator: add a rule to the registry under its code."""
    if rule.code in RULES and RULES[rule.code] is not rule:
        raise ValueError(f"rule code {rule.code} registered twice")
    RULES[rule.code] = rule
    return rule
