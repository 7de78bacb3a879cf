"""Pydantic models of every source file: the single definition of the source format.

Validation, the JSON Schema (``jbcompile schema``) and the format docs all come from these models.
"""

from .bbq import BbqTemplate, PersonSlot, Question, Questions, RationaleOverride
from .common import LocalizedText, StrictModel, Text, TranslationStatus, status_of, text_in
from .dataset import DatasetConfig
from .rules import LexiconFile, NormalizationFile, PronounRule, PronounRulesFile, TokenPattern
from .translation import GlossaryFile, MemoryEntry, TranslationMemoryFile, TranslationOptions, memory_key
from .vocab import Filler, FillerGroup, VocabFile, as_filler

__all__ = [
    "BbqTemplate",
    "DatasetConfig",
    "Filler",
    "GlossaryFile",
    "FillerGroup",
    "LexiconFile",
    "LocalizedText",
    "MemoryEntry",
    "NormalizationFile",
    "PersonSlot",
    "PronounRule",
    "PronounRulesFile",
    "Question",
    "Questions",
    "RationaleOverride",
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
