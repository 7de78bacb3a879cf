"""``sources/dataset.yaml``: what the dataset is, how it is published, and build-wide settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ..limits import MAX_ROWS, MAX_TEMPLATE_ROWS
from .common import REPO_ID, SEMVER, Count, Identifier, LanguageCode, StrictModel, Text, text_in

RepoId = Annotated[str, Field(pattern=REPO_ID)]
RuleSetting = Literal["error", "warning", "info", "off"]


class CardSections(StrictModel):
    """The prose of the dataset card that only the maintainers can write; the build adds the figures.

    The sections follow what readers expect of a Hugging Face card for a bias benchmark. A section left
    out is left out of the card, never filled with a placeholder. They also fill the Responsible-AI
    fields of croissant.json: creation → dataCollection, review → dataAnnotationProtocol, risks →
    dataBiases and dataLimitations (with out_of_scope), personal_data → personalSensitiveInformation,
    uses → dataUseCases, recommendations → dataSocialImpact.
    """

    uses: str | None = Field(default=None, description="What the dataset is for (direct uses).")
    out_of_scope: str | None = Field(default=None, description="Uses it is not fit for, or must not serve.")
    creation: str | None = Field(
        default=None, description="How the data was created: who wrote it, from what, and how it was built."
    )
    review: str | None = Field(
        default=None,
        description="How items are reviewed (the build adds the counts from each template's review record).",
    )
    risks: str | None = Field(default=None, description="Bias, risks and limitations of the dataset.")
    recommendations: str | None = Field(default=None, description="What users should do about those risks.")
    personal_data: str | None = Field(
        default=None,
        description="Personal or sensitive information in the data, and how it was handled (or that there is "
        "none: persons described by attributes, no real names). The card and croissant.json (RAI) carry it.",
    )


class ProbeThreshold(StrictModel):
    """The bar of one shortcut probe (``audit.probes.<name>``), in place of the dataset-wide margin."""

    margin: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="How far above chance the probe may reach, as a share (0.05 = 5 points).",
    )
    max: float | None = Field(
        default=None, ge=0.0, le=1.0, description="An absolute bar instead of chance + margin, as a share."
    )
    off: bool = Field(
        default=False, description="Report the probe's figures but never refuse a release because of them."
    )
    reason: str | None = Field(default=None, description="Why this probe has a bar of its own.")

    @model_validator(mode="after")
    def _one_bar(self) -> ProbeThreshold:
        if self.margin is not None and self.max is not None:
            raise ValueError("give margin or max, not both")
        return self


class AuditSettings(StrictModel):
    """The bars of ``jbcompile audit``'s shortcut probes (docs/audit.md).

    A probe *exceeds* its bar in a scope (a config, or one of its categories) when the lower end of its
    95% interval lies above the bar: chance + ``margin`` unless the probe sets its own. Probes that count
    a defect rather than guess the gold (attribute confounds) compare their point figure with ``max``.
    ``build --release`` and ``publish`` refuse a benchmark whose probe exceeds its bar; ``build`` warns.
    """

    margin: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="How far above chance a probe may reach, as a share (0.05 = 5 points).",
    )
    probes: dict[Identifier, ProbeThreshold] = Field(
        default_factory=dict, description="Bars of single probes, by probe name (e.g. mention-order)."
    )
    resamples: Count = Field(
        default=1000, ge=100, le=100_000, description="Bootstrap resamples (of templates) per interval."
    )


class BuildLimits(StrictModel):
    """How many rows a build may hold, counted from the templates before anything is expanded (B008).

    The defaults (jbcompile.limits) keep a mistake — a filler list pasted twice into a template with
    many lexical alternatives — from filling the disk; a benchmark that is meant to be larger says so here.
    """

    max_rows: Count = Field(default=MAX_ROWS, ge=1, description="Rows of every config of the build together.")
    max_template_rows: Count = Field(
        default=MAX_TEMPLATE_ROWS, ge=1, description="Rows one template contributes, every config together."
    )


class DatasetConfig(StrictModel):
    """The dataset as a whole: one sources folder is one dataset and one Hub repository."""

    name: Identifier = Field(description="Short machine name, used for the Hub repository name.")
    pretty_name: str = Field(description="Human-readable title shown on the dataset card.")
    version: Annotated[str, Field(pattern=SEMVER)] = Field(
        description="Semantic version of the released data; a published version is never overwritten."
    )
    license: str = Field(description="SPDX-style license id of the data, e.g. cc-by-4.0.")
    language: list[LanguageCode] = Field(default=["ja"], min_length=1)
    description: str = Field(description="A paragraph for the dataset card.")
    citation: str | None = Field(default=None, description="BibTeX to cite the dataset.")
    card: CardSections = Field(
        default_factory=CardSections, description="Prose sections of the dataset card (uses, risks …)."
    )
    homepage: str | None = None
    hub_repo: RepoId | None = Field(
        default=None, description="The Hub dataset repository (ORG/NAME) releases are published to."
    )
    terms_of_use: str = Field(
        description="Terms a user accepts before downloading (the Hub's gated access shows them)."
    )
    seed: Count = Field(description="Seed of every random choice of the build (keyed by stable ids).")
    unknown_options: list[Text] = Field(
        min_length=8,
        description="Wordings of the 'cannot be determined' option; each row picks one by a seeded hash.",
    )
    categories: list[Identifier] = Field(min_length=1, description="The categories templates may use.")
    checks: dict[str, RuleSetting] = Field(
        default_factory=dict, description="Severity override per check rule code, or 'off'."
    )
    audit: AuditSettings = Field(
        default_factory=AuditSettings,
        description="Bars of the shortcut probes of `jbcompile audit` (build --release and publish refuse "
        "a benchmark that exceeds them).",
    )
    limits: BuildLimits = Field(
        default_factory=BuildLimits,
        description="Row limits of the build (B008), checked before any template is expanded.",
    )
    keep_as_written: bool = Field(
        default=False,
        description="The texts are a published release's own (set by `jbcompile import`): `check` reports "
        "its findings, but `check --fix` rewrites nothing. Set it to false to let --fix rewrite them.",
    )

    @field_validator("categories")
    @classmethod
    def _unique_categories(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("categories must be unique")
        return value

    def unknown_texts(self, lang: str) -> list[str]:
        texts = [text_in(option, lang) for option in self.unknown_options]
        return [t for t in texts if t]
