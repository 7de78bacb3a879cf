"""``toypairs``: a toy design that lives outside jbcompile, to show what a third-party design needs.

A template names a person group and gives a context and two statements about the person: one the
context supports, one that only a stereotype would suggest. Each filler of the group gives two rows, one
per statement order; a model answers A or B. Columns of its own (``statement_a``, ``statement_b``,
``order``), a prompt of its own and a metric of its own (``stereotype_rate``).
"""

from __future__ import annotations

from jbcompile.designs.spec import Design


class ToyPairsDesign(Design):
    name = "toypairs"
    summary = "toy: which of two statements about a person does the context support? (A or B)"

    def compiler(self):
        from .compiler import KIND

        return KIND

    def evaluator(self):
        from .evaluate import EVALUATOR

        return EVALUATOR


DESIGN = ToyPairsDesign()
