"""JSON Schema of the source files, generated from the models (never written by hand)."""

from __future__ import annotations

from typing import Any, Union

from pydantic import TypeAdapter

SCHEMA_FILES = (
    "dataset",
    "vocab",
    "template",
    "pronouns",
    "normalization",
    "lexicon",
    "attributes",
    "glossary",
    "memory",
)


def _template_type() -> Any:
    from ..designs import all_kinds

    models = tuple(kind.template_model for kind in all_kinds())
    return models[0] if len(models) == 1 else Union[models]  # noqa: UP007 - a runtime tuple of types


def json_schema(file: str = "all") -> dict:
    from .dataset import DatasetConfig
    from .rules import AttributesFile, LexiconFile, NormalizationFile, PronounRulesFile
    from .translation import GlossaryFile, TranslationMemoryFile
    from .vocab import VocabFile

    if file == "all":
        return {name: json_schema(name) for name in SCHEMA_FILES}
    target = {
        "dataset": DatasetConfig,
        "vocab": VocabFile,
        "template": _template_type(),
        "pronouns": PronounRulesFile,
        "normalization": NormalizationFile,
        "lexicon": LexiconFile,
        "attributes": AttributesFile,
        "glossary": GlossaryFile,
        "memory": TranslationMemoryFile,
    }[file]
    schema = TypeAdapter(target).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", f"jbcompile {file} file")
    return schema
