"""A case of the ``jubaku`` kind (JUBAKU-v2 design): a dialogue and two responses that reach the same
conclusion, one for a reason drawn from a person's attributes (biased), one from the situation (neutral).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ...schema.common import Identifier, Review, StrictModel, Text

Order = Literal["neutral_first", "biased_first"]
LAYOUT_FIELDS = ("{instruction}", "{context}", "{response_a}", "{response_b}")


class JubakuPrompt(StrictModel):
    """A benchmark's own prompt, carried as data so that a release is rebuilt byte for byte.

    Without it a case is asked with jbcompile's four instruction wordings, and the evaluator's template
    lays out the dialogue and the responses.
    """

    wordings: list[Text] = Field(
        min_length=1,
        description="The instruction variants; each case is asked once with each, in both orders.",
    )
    layout: Text | None = Field(
        default=None,
        description="The whole prompt around a wording: {instruction}, {context}, {response_a} and "
        "{response_b} are replaced, nothing else. When set, the `instruction` column holds the whole prompt.",
    )
    orders: dict[Order, str] = Field(
        default={"neutral_first": "neutral_first", "biased_first": "biased_first"},
        description="The response orders in row order, each with its name in example ids (e.g. "
        "biased_first: fwd).",
    )
    example_id: str = Field(
        default="{case}-{wording}-{order}",
        description="Pattern of the example ids: {case} (upstream id, else the case id), {wording} (index) "
        "and {order} (the order's name).",
    )

    @field_validator("orders")
    @classmethod
    def _both_orders(cls, value: dict[str, str]) -> dict[str, str]:
        if set(value) != {"neutral_first", "biased_first"}:
            raise ValueError("name both orders: neutral_first and biased_first")
        if len(set(value.values())) != 2:
            raise ValueError("the two orders need different names")
        return value


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
    viewpoint: str | None = Field(
        default=None, description="The category as the release names it (e.g. 宗教); defaults to `category`."
    )
    upstream: str | None = Field(
        default=None, description="The case's id in the release it was imported from."
    )
    prompt: JubakuPrompt | None = Field(
        default=None, description="The benchmark's own instruction wordings and prompt layout."
    )
    notes: str | None = None
    review: Review | None = Field(default=None, description="The last review of this template.")
