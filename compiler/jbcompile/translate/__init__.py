"""DeepL-assisted translation of the English sources into Japanese, resumable and never billed twice.

prepare (read sources, memory, glossary; decide what to bill) → run (DeepL in batches, memory saved after
each) → write back (``ja`` + ``status: machine``, pronoun rules applied, reviewed texts untouched).
The CLI (`jbcompile translate`) is a thin layer over :func:`prepare` and :func:`run`.
"""

from .client import DeepLTranslator, TranslationStopped
from .pipeline import Plan, RunResult, Settings
from .runner import Prepared, prepare, run

__all__ = [
    "DeepLTranslator",
    "Plan",
    "Prepared",
    "RunResult",
    "Settings",
    "TranslationStopped",
    "prepare",
    "run",
]
