"""The ``bbq`` kind's prompts, answer reading and metrics (JBBQ design)."""

from ..kind import register
from .kind import BbqEval

BBQ = register(BbqEval())

__all__ = ["BBQ", "BbqEval"]
