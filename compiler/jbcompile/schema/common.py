"""Building blocks shared by every source file model."""

from __future__ import annotations

import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, model_validator

IDENTIFIER = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"  # also what a build's manifest may name (publish.buildfolder)
SLOT_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
# A language code as the card's metadata and the Hub take it, BCP-47 in shape (`ja`, `en`, `ja-JP`,
# `zh-Hant`), or the Hub's own `code` and `multilingual`
LANGUAGE_CODE = r"^(?:[a-z]{2,3}(-[A-Za-z0-9]{2,8})*|code|multilingual)$"
SEMVER = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$"
REPO_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$"

# What a value of each pattern must look like, in words, and what to write instead: an S002 diagnostic
# says these, never the regular expression (which a YAML author should not have to read).
PATTERN_WORDS: dict[str, tuple[str, str]] = {
    IDENTIFIER: (
        "a name of letters, digits, '_', '.' and '-' that starts with a letter or digit",
        "write the name with ASCII letters, digits, '_', '.' or '-' only (no spaces), e.g. jbbq-lite",
    ),
    SLOT_NAME: (
        "a slot name of ASCII letters, digits and '_' that does not start with a digit",
        "write the slot name like NAME1 or AGE_GROUP",
    ),
    LANGUAGE_CODE: (
        "a language code: a BCP 47 code such as ja or en-US (or the Hub's code or multilingual)",
        "write the language's code in lower case, e.g. ja for Japanese or en for English, optionally "
        "with a region or script after '-' (en-US, zh-Hant)",
    ),
    SEMVER: (
        "a semantic version: three whole numbers joined by '.', such as 1.0.0 (optionally with -rc.1)",
        "write the version as MAJOR.MINOR.PATCH, e.g. 1.2.0, without a leading 'v' or leading zeros",
    ),
    REPO_ID: (
        "a Hub repository id: owner/name, each of letters, digits, '_', '.' and '-'",
        "write it as owner/name, e.g. my-org/jbbq-lite",
    ),
}

Identifier = Annotated[str, Field(pattern=IDENTIFIER, max_length=120)]
SlotName = Annotated[str, Field(pattern=SLOT_NAME)]
# A whole number the file writes as one: `true` is not 1, nor `"3"` or `3.0` a count (pydantic's lax mode
# would read them so, and a typo would pass unsaid).
Count = Annotated[int, Strict()]
LanguageCode = Annotated[str, Field(pattern=LANGUAGE_CODE, max_length=35)]


class StrictModel(BaseModel):
    """Source models reject unknown keys: a typo in a key must not be silently ignored. Nor does a number
    field of any of them take YAML's ``.nan`` or ``.inf``: every bound compares false with NaN, so a bar
    of NaN would let everything pass (S002, worded by :mod:`jbcompile.validation`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


class TranslationStatus(StrEnum):
    ORIGINAL = "original"  # written in the language it is used in
    MACHINE = "machine"  # machine-translated, not yet reviewed by a person
    REVIEWED = "reviewed"  # machine-translated, then checked (and fixed) by a person


class LocalizedText(StrictModel):
    """A text with its Japanese form, its English source where there is one, and how it was made."""

    ja: str | None = Field(default=None, description="The Japanese text shown to models.")
    en: str | None = Field(default=None, description="The English source text, if the text was translated.")
    status: TranslationStatus = Field(
        default=TranslationStatus.ORIGINAL,
        description="original | machine | reviewed: the state of the Japanese text.",
    )

    @model_validator(mode="after")
    def _one_language_at_least(self) -> LocalizedText:
        if self.ja is None and self.en is None:
            raise ValueError("give at least one of 'ja' and 'en'")
        return self


# A plain string is shorthand for {ja: <string>, status: original}.
Text = str | LocalizedText


def text_in(value: Text | None, lang: str) -> str | None:
    """The text in ``lang`` (``ja`` or ``en``), or None when that language is missing."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if lang == "ja" else None
    return value.ja if lang == "ja" else value.en


def status_of(value: Text | None) -> TranslationStatus:
    if isinstance(value, LocalizedText):
        return value.status
    return TranslationStatus.ORIGINAL


class Review(StrictModel):
    """Who or what last read a template as a whole, with every filled variant, and what they decided.

    ``build --release`` refuses templates that are not ``reviewed``: a release must not ship unread items.
    """

    status: Literal["draft", "reviewed", "needs_changes"] = Field(
        description="draft: not yet read; reviewed: read with all its lite variants and accepted; "
        "needs_changes: read and found wanting."
    )
    by: str = Field(min_length=1, description="Who or what reviewed it (a person, a team, a tool).")
    date: datetime.date = Field(description="When (YYYY-MM-DD).")
    note: str | None = Field(default=None, description="What was checked or changed.")
