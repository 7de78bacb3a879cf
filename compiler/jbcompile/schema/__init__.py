"""Pydantic models of the source files every design shares: the single definition of the source format.

A design's template model lives in its own package (``designs/<name>/schema.py``).

Validation, the JSON Schema (``jbcompile schema``) and the format docs all come from these models.
"""

from .common import LocalizedText, StrictModel, Text, TranslationStatus, status_of, text_in
from .dataset import DatasetConfig
from .rules import AttributesFile, LexiconFile, NormalizationFile, PronounRule, PronounRulesFile, TokenPattern
from .translation import GlossaryFile, MemoryEntry, TranslationMemoryFile, TranslationOptions, memory_key
from .vocab import Filler, FillerGroup, VocabFile, as_filler

__all__ = [
    "AttributesFile",
    "DatasetConfig",
    "Filler",
    "GlossaryFile",
    "FillerGroup",
    "LexiconFile",
    "LocalizedText",
    "MemoryEntry",
    "NormalizationFile",
    "PronounRule",
    "PronounRulesFile",
    "StrictModel",
    "Text",
    "TokenPattern",
    "TranslationMemoryFile",
    "TranslationOptions",
    "TranslationStatus",
    "VocabFile",
    "as_filler",
    "memory_key",
    "status_of",
    "text_in",
]
