"""A template of the ``sobaco`` kind (SOBACO design): a social-bias problem and a cultural-commonsense
problem that share a background context, two complementary questions and their answer options.

One file is either a *pair* (``bias_context`` + ``culture_context``) or a *dummy* problem (``dummy``),
the validation problems whose answer needs neither a stereotype nor cultural knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from ...schema.common import Identifier, Review, SlotName, StrictModel, Text

NAME_SLOTS = ("NAME1", "NAME2")
UNKNOWN = "UNKNOWN"

NameSlot = Literal["NAME1", "NAME2"]
Answer = Literal["NAME1", "NAME2", "UNKNOWN"]

_PAIR_FIELDS = ("bias_context", "biased_answer", "culture_context", "culture_answer")
_DUMMY_FIELDS = ("dummy_context", "dummy_answer")


class ComplementaryQuestions(StrictModel):
    """Two questions where whoever answers one, the other person answers the other (年上/年下)."""

    first: Text = Field(description="The question the answers (biased_answer, culture_answer …) refer to.")
    second: Text = Field(description="Its complement: the other name answers it (UNKNOWN stays UNKNOWN).")


@dataclass(frozen=True)
class NamesSlot:
    """What the lint rules see of a name slot: the vocab group it draws from (like a bbq person slot)."""

    group: str


class SobacoTemplate(StrictModel):
    kind: Literal["sobaco"]
    id: Identifier
    category: Identifier = Field(
        description="Question category, declared in dataset.yaml (the bundled ones: Age, Gender, "
        "Hierarchical_relationship)."
    )
    subcategory: str | None = Field(default=None, description="Free-text topic, e.g. 職場.")
    names: Identifier = Field(
        default="family_names",
        description="The vocab group of names filling {{NAME1}} and {{NAME2}}: every ordered pair of two "
        "different names is used. Use common family names that do not tell gender.",
    )
    words: dict[SlotName, list[Text]] = Field(
        default_factory=dict,
        description="At most one expression slot with 2 or 3 alternatives of the same meaning.",
    )
    background_context: Text = Field(description="The context both problems of the pair start with.")
    questions: ComplementaryQuestions
    bias_context: Text | None = Field(
        default=None,
        description="Appended to the background in the social-bias problem; a stereotype suggests an "
        "answer, but the gold is always the unknown option.",
    )
    biased_answer: NameSlot | None = Field(
        default=None, description="The name a stereotype-following answer picks for the first question."
    )
    stereotype: Text | None = Field(default=None, description="The stereotype the bias problem probes.")
    culture_context: Text | None = Field(
        default=None,
        description="Appended to the background in the cultural-commonsense problem.",
    )
    culture_answer: Answer | None = Field(
        default=None,
        description="Gold of the first question in the culture problem: NAME1, NAME2 or UNKNOWN.",
    )
    commonsense: Text | None = Field(
        default=None, description="The cultural knowledge the culture problem relies on."
    )
    dummy: Literal["bias", "culture"] | None = Field(
        default=None,
        description="Marks a dummy (validation) problem and the task it imitates; it compiles into the "
        "sobaco_dummy config.",
    )
    dummy_context: Text | None = Field(
        default=None, description="Appended to the background in the dummy problem."
    )
    dummy_answer: Answer | None = Field(default=None, description="Gold of the first question of the dummy.")
    attested: str | None = Field(
        default=None, description="Where the stereotype or the custom is documented (free text)."
    )
    upstream: str | None = Field(
        default=None, description="The problems of the release it was imported from, e.g. ja/1+2."
    )
    notes: str | None = None
    review: Review | None = Field(default=None, description="The last review of this template.")

    @model_validator(mode="after")
    def _shape(self) -> SobacoTemplate:
        if self.dummy is None:
            missing = [name for name in _PAIR_FIELDS if getattr(self, name) is None]
            if missing:
                raise ValueError(f"a sobaco pair needs {', '.join(missing)} (or set `dummy:`)")
            stray = [name for name in _DUMMY_FIELDS if getattr(self, name) is not None]
            if stray:
                raise ValueError(f"{', '.join(stray)} belong to dummy problems; set `dummy: bias|culture`")
        else:
            missing = [name for name in _DUMMY_FIELDS if getattr(self, name) is None]
            if missing:
                raise ValueError(f"a dummy problem needs {', '.join(missing)}")
            stray = [name for name in _PAIR_FIELDS if getattr(self, name) is not None]
            if stray:
                raise ValueError(f"a dummy problem has no {', '.join(stray)}")
        if len(self.words) > 1:
            raise ValueError(f"a sobaco template has at most one expression slot, found {len(self.words)}")
        for name, alternatives in self.words.items():
            if name in NAME_SLOTS:
                raise ValueError(f"{name} is a name slot; call the expression slot e.g. WORD1")
            if not 2 <= len(alternatives) <= 3:
                raise ValueError(f"expression slot {name} needs 2 or 3 alternatives, has {len(alternatives)}")
        return self

    @property
    def persons(self) -> dict[str, NamesSlot]:
        """The name slots and their vocab group (read by lint rules that treat named people)."""
        return {slot: NamesSlot(self.names) for slot in NAME_SLOTS}
