"""A template of the ``bbq`` kind (JBBQ / BBQ design): two persons, two contexts, two questions."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...schema.common import Identifier, Review, SlotName, StrictModel, Text


class AttributeSlot(StrictModel):
    """A person's second attribute in an intersectional template (race × occupation, race × gender).

    Its filler goes into its own slot, but it belongs to the person: the slots swap together, and the
    person's answer wording and tag carry both attributes.
    """

    slot: SlotName = Field(description="The slot its filler goes into (e.g. OCC1 for the person NAME1).")
    group: Identifier = Field(description="The vocab group of the attribute (e.g. low-income occupations).")


class PersonSlot(StrictModel):
    group: Identifier = Field(description="The vocab group whose fillers fill this slot.")
    target: bool = Field(default=False, description="True for the slot of the stereotyped group.")
    only: list[str] | None = Field(
        default=None, description="Use only these fillers of the group (by their Japanese text)."
    )
    answer: Text | None = Field(
        default=None,
        description="How an answer option names whoever fills this slot, written with the template's slots "
        "(e.g. 'The {{NAME1}} with the {{WORD2}}'); default: the filler's own option wording.",
    )
    attribute: AttributeSlot | None = Field(
        default=None,
        description="Intersectional templates: the person's second attribute, with its own slot (both "
        "persons have one; `intersections` says how the two persons' attributes are paired).",
    )


Intersection = Literal["same_group", "same_attribute", "both_differ"]


class Rewrite(StrictModel):
    """A replacement applied to every filled text of a row (contexts, questions, options).

    It carries what another generator did to its filled texts (e.g. BBQ's a → an before a vowel), as data.
    """

    pattern: str = Field(description="A Python regular expression.")
    replacement: str = Field(description="What replaces each match (\\1 … refer to its groups).")
    when_person: str | None = Field(
        default=None,
        description="Apply only to rows where a person slot's filler matches this regular expression.",
    )

    @field_validator("pattern", "when_person")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value


class Question(StrictModel):
    text: Text
    answer: SlotName = Field(description="The person slot that answers it in the disambiguated context.")
    predicate: Text | None = Field(
        default=None,
        description="What the answer did, for the rationale: 「<predicate>のは…」. Derived from the question "
        "when omitted.",
    )


class Questions(StrictModel):
    negative: Question = Field(description="The question whose stereotyped answer is the target group.")
    non_negative: Question = Field(description="The complementary question.")


class RationaleOverride(StrictModel):
    """Hand-written reasoning; placeholders are the slots plus {{ANSWER}} and {{UNKNOWN}}.

    Evidence goes in 「」: every quoted span but the last must stand verbatim in the context; the last
    quoted span is the answer.
    """

    ambig: Text | None = None
    disambig: Text | None = None


class PersonStatements(StrictModel):
    """A disambiguating context given as one statement per person, which the compiler renders in both
    orders (half of the rows each), so that sentence order tells nothing about the answer.

    Rendered as ``lead`` + the first person's statement + ``connective`` + the second person's
    statement. The lead and the connective belong to a position, not to a person: 「一方、」 opens whichever
    statement comes second.
    """

    lead: Text | None = Field(
        default=None,
        description="Opens the first statement, whichever person it is about (e.g. "
        "「防犯カメラの映像では、」); names no person.",
    )
    connective: Text | None = Field(
        default=None, description="Opens the second statement (e.g. 「一方、」); names no person."
    )
    statements: dict[SlotName, Text] = Field(
        description="Person slot → what the context says about that person: whole sentences that read "
        "the same in either position and mention their own person before the other."
    )


class BbqTemplate(StrictModel):
    kind: Literal["bbq"] = "bbq"
    id: Identifier
    category: Identifier
    subcategory: str | None = None
    origin: Literal["translated", "added"] = Field(
        description="translated: from an English BBQ template; added: written for Japanese society."
    )
    upstream: str | None = Field(default=None, description="Upstream reference, e.g. Age/12/a.")
    stereotype: Text = Field(description="The stereotype the template probes.")
    stereotyped_groups: list[str] = Field(min_length=1)
    attested: str = Field(description="Where the stereotype is attested (free text; no invented URLs).")
    persons: dict[SlotName, PersonSlot] = Field(
        description="Exactly two person slots, one of them the target."
    )
    intersections: dict[Intersection, str | None] = Field(
        default_factory=dict,
        description="Intersectional templates (persons with an `attribute`): which pairs of persons the "
        "rows contrast, each with the subcategory its rows carry (null: the template's). same_group: the "
        "other person shares the target's group filler and differs in attribute; same_attribute: shares "
        "the target's attribute filler and differs in group; both_differ: differs in both.",
    )
    words: dict[SlotName, list[Text]] = Field(
        default_factory=dict, description="Lexical slots, each with 2–3 alternatives (see max_alternatives)."
    )
    max_alternatives: int = Field(
        default=3,
        ge=2,
        description="The most alternatives a lexical slot may have; raise it only for imported templates "
        "whose generator drew from longer lists (every alternative multiplies the rows).",
    )
    rewrites: list[Rewrite] = Field(
        default_factory=list, description="Replacements applied to the filled texts, in order."
    )
    ambiguous_context: Text
    symmetric_mention: bool = Field(
        default=False,
        description="The ambiguous context introduces the two persons symmetrically "
        "(「{{NAME1}}と{{NAME2}}が…」): half of the rows show it with the two persons' first mentions "
        "exchanged, so either person is mentioned first.",
    )
    disambiguating_context: Text | PersonStatements = Field(
        description="Appended to the ambiguous context in disambiguated rows: one text, or one statement per "
        "person (`statements`), which the compiler renders in both orders."
    )
    questions: Questions
    rationale: dict[Literal["negative", "non_negative"], RationaleOverride] = Field(default_factory=dict)
    notes: str | None = None
    review: Review | None = Field(default=None, description="The last review of this template.")

    @model_validator(mode="after")
    def _shape(self) -> BbqTemplate:
        if len(self.persons) != 2:
            raise ValueError(f"a bbq template has exactly two person slots, found {len(self.persons)}")
        targets = [name for name, slot in self.persons.items() if slot.target]
        if len(targets) != 1:
            raise ValueError("exactly one person slot must have target: true")
        for name, alternatives in self.words.items():
            if not 2 <= len(alternatives) <= self.max_alternatives:
                raise ValueError(
                    f"lexical slot {name} needs 2 to {self.max_alternatives} alternatives, "
                    f"has {len(alternatives)}"
                )
        attributes = [slot.attribute.slot for slot in self.persons.values() if slot.attribute]
        clash = set(self.words) & set(self.persons)
        clash |= (set(self.words) | set(self.persons)) & set(attributes)
        if clash or len(set(attributes)) != len(attributes):
            raise ValueError(f"slot names used twice: {sorted(clash) or attributes}")
        if attributes and len(attributes) != len(self.persons):
            raise ValueError("either both person slots have an `attribute` or neither has")
        if bool(attributes) != bool(self.intersections):
            raise ValueError(
                "`intersections` goes with persons that have an `attribute`: give both or neither"
            )
        if attributes and any(slot.answer is None for slot in self.persons.values()):
            raise ValueError("a person with an `attribute` needs an `answer` wording naming both attributes")
        statements = self.statements
        if statements is not None and set(statements.statements) != set(self.persons):
            raise ValueError(
                f"`statements` needs one statement per person slot ({', '.join(self.persons)}), "
                f"has {', '.join(statements.statements) or 'none'}"
            )
        return self

    @property
    def statements(self) -> PersonStatements | None:
        """The disambiguating context as per-person statements, or None when it is one text."""
        context = self.disambiguating_context
        return context if isinstance(context, PersonStatements) else None

    @property
    def both_orders(self) -> bool:
        """True when the compiler renders the persons in both orders (either way of the format)."""
        return self.symmetric_mention or self.statements is not None

    @property
    def attribute_slots(self) -> dict[str, str]:
        """Person slot → the slot of its second attribute (intersectional templates; else empty)."""
        return {name: slot.attribute.slot for name, slot in self.persons.items() if slot.attribute}

    @property
    def target_slot(self) -> str:
        return next(name for name, slot in self.persons.items() if slot.target)

    @property
    def other_slot(self) -> str:
        return next(name for name, slot in self.persons.items() if not slot.target)
