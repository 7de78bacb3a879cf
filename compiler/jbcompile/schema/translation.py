"""``sources/translations/``: the EN→JA glossary and the translation memory of ``jbcompile translate``.

Both files are part of the sources: the glossary is reviewed like any other source, and the memory is
what makes a re-run free — every text DeepL already translated (with the options that shaped it) is
looked up there before anything is billed.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import Field, field_validator

from .common import Count, StrictModel


class GlossaryFile(StrictModel):
    """``sources/translations/glossary.yaml``: terms DeepL must translate one fixed way."""

    source_lang: str = Field(default="EN", description="DeepL source language code of the terms.")
    target_lang: str = Field(default="JA", description="DeepL target language code of the translations.")
    entries: dict[str, str] = Field(
        default_factory=dict,
        description="Source term → target term, e.g. they: かれら. Matched as whole words, any case.",
    )

    @field_validator("entries")
    @classmethod
    def _no_blank_terms(cls, value: dict[str, str]) -> dict[str, str]:
        for source, target in value.items():
            if not source.strip() or not target.strip():
                raise ValueError(f"glossary terms must not be blank ({source!r}: {target!r})")
            if any(ch in source + target for ch in "\t\n\r"):
                raise ValueError(f"glossary terms must not contain tabs or line breaks ({source!r})")
        return value


class TranslationOptions(StrictModel):
    """Everything besides the text itself that shapes DeepL's output; part of the memory key."""

    source_lang: str
    target_lang: str
    context: str | None = Field(default=None, description="Surrounding text sent with short strings.")
    glossary: dict[str, str] = Field(
        default_factory=dict,
        description="The glossary entries that occur in the text (others cannot matter).",
    )
    formality: str | None = None


def memory_key(source: str, options: TranslationOptions) -> str:
    """A stable key of (source text, options): equal keys mean DeepL would be asked the same thing."""
    payload = json.dumps(
        {"source": source, **options.model_dump(mode="json")}, ensure_ascii=False, sort_keys=True
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


class MemoryEntry(StrictModel):
    """One text DeepL translated: the source, the options, and the raw output with slots restored."""

    source: str = Field(description="The source text with {{SLOT}} placeholders.")
    options: TranslationOptions
    translation: str = Field(description="DeepL's output with {{SLOT}} placeholders, before pronoun rules.")
    billed_characters: Count = Field(default=0, ge=0, description="Characters DeepL counted for it.")
    problem: str | None = Field(
        default=None, description="Why the output cannot be used as is (e.g. a slot DeepL dropped)."
    )

    @property
    def key(self) -> str:
        return memory_key(self.source, self.options)


class TranslationMemoryFile(StrictModel):
    """``sources/translations/memory.yaml``: every DeepL result, so that a re-run bills nothing twice."""

    version: Count = Field(default=1, description="Format version of this file.")
    entries: list[MemoryEntry] = Field(default_factory=list)
