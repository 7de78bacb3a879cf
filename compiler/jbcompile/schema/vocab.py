"""``sources/vocab/*.yaml``: named groups of person fillers, per category."""

from __future__ import annotations

from pydantic import Field

from .common import Identifier, StrictModel, Text


class Filler(StrictModel):
    """One way to name a person in a context, e.g. 七十代の男性."""

    text: Text = Field(description="The wording used in the context.")
    option: Text | None = Field(
        default=None, description="The wording used as an answer option, when it differs from `text`."
    )
    tag: str | None = Field(default=None, description="Group tag of this filler; defaults to the group's.")


class FillerGroup(StrictModel):
    tag: str = Field(description="Group tag written into answer_info, e.g. old / nonOld.")
    description: str | None = None
    fillers: list[str | Filler] = Field(min_length=1, description="A string is shorthand for {text: …}.")


class VocabFile(StrictModel):
    category: Identifier
    groups: dict[Identifier, FillerGroup] = Field(
        min_length=1, description="Group name → group; names are unique across all vocab files."
    )


def as_filler(value: str | Filler) -> Filler:
    return Filler(text=value) if isinstance(value, str) else value
