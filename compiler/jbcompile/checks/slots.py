"""What each slot of a template can hold: the persons of its vocab groups and its lexical alternatives.

Each design answers through ``Kind.template_slots`` (which the check corpus asks): by default from its
filled texts (the distinct filler of each slot over its filled variants); a design may read its model
directly (fast: no expansion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..schema import as_filler, text_in

if TYPE_CHECKING:
    from ..loader import KeyPath, LoadedDocument
    from ..projecttypes import Project


@dataclass(frozen=True)
class SlotFill:
    """The distinct fillers one slot takes, in order, and whether it names a person."""

    slot: str
    role: str  # "person" | "word"
    fillers: tuple[str, ...]


@dataclass(frozen=True)
class Person:
    """A person filler as the context names it (``text``) and as an answer option (``option``)."""

    text: str
    option: str
    explicit_option: bool
    doc: LoadedDocument
    key_path: KeyPath  # the filler entry in its vocab file
    option_key_path: KeyPath  # where the option wording is written (the entry itself when implicit)


def people(project: Project, group_name: str, only: Sequence[str] | None = None) -> list[Person]:
    """The fillers of a vocab group in the project's language, with where each is written."""
    group = project.vocab.get(group_name)
    if group is None:
        return []
    found: list[Person] = []
    for index, raw in enumerate(group.group.fillers):
        filler = as_filler(raw)
        if only is not None and text_in(filler.text, "ja") not in only:
            continue
        text = text_in(filler.text, project.lang) or ""
        option = text_in(filler.option, project.lang) if filler.option is not None else None
        entry = group.key_path + ("fillers", index)
        option_path = entry + ("option",) if option is not None else entry
        if option is not None and not isinstance(filler.option, str):
            option_path += (project.lang,)
        found.append(Person(text, option or text, option is not None, group.doc, entry, option_path))
    return found
