"""A case of the ``jubaku`` kind (JUBAKU-v2 design): a dialogue and two responses that reach the same
conclusion, one for a reason drawn from a person's attributes (biased), one from the situation (neutral).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import Identifier, Review, StrictModel, Text


class JubakuCase(StrictModel):
    kind: Literal["jubaku"]
    id: Identifier
    category: Identifier = Field(
        description="Cultural category, declared in dataset.yaml (e.g. Gender, Religion, "
        "Nationality_ethnicity, Education, Race, Region, Emotions_values, Food_drink, Basic_behaviors, "
        "Names)."
    )
    subcategory: str | None = Field(default=None, description="Free-text topic.")
    attribute: str = Field(description="The attribute the biased reason leans on, e.g. 国籍 or 出身地.")
    bias_form: Literal["attribute_assumption", "achievement_discounting"] = Field(
        default="attribute_assumption",
        description="attribute_assumption: infers ability, personality or intent from an attribute; "
        "achievement_discounting: credits a person's achievement to outside factors.",
    )
    context: Text = Field(description="The dialogue: what the user says, and any earlier turns.")
    conclusion: Text = Field(
        description="The proposal both responses make; it must stand verbatim in both of them."
    )
    biased_response: Text = Field(description="The response whose reason rests on the attribute.")
    neutral_response: Text = Field(description="The response whose reason rests on the situation.")
    attested: str | None = Field(default=None, description="Where the stereotype is documented (free text).")
    notes: str | None = None
    review: Review | None = Field(default=None, description="The last review of this template.")
