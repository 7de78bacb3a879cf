"""The ``sobaco`` design (SOBACO): pairs of problems sharing a background and two complementary
questions, one with a bias-inducing context (gold: unknown), one with a cultural context (gold: usually
a name); a row asks to pick one of three options (name, name, unknown). Configs ``sobaco`` and
``sobaco_dummy``.

Modules: ``schema``, ``compiler``, ``evaluate`` (settings basic/debias/cot-j/cot-e/cot-r × 3 wordings,
bias score, culture accuracy), ``summary`` (change rates over settings, Table 4), ``importer``
(SOBACO's template set), ``prompts/`` and ``card.md.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spec import Design

if TYPE_CHECKING:
    from ...evaluate.kind import EvalKind
    from ...importers import Importer
    from ..base import Kind


class SobacoDesign(Design):
    name = "sobaco"
    position = 10
    summary = "SOBACO: a bias problem and a culture problem share a background; pick name, name or unknown"

    def compiler(self) -> Kind:
        from .compiler import KIND

        return KIND

    def evaluator(self) -> EvalKind:
        from .evaluate import SOBACO

        return SOBACO

    def importers(self) -> Sequence[Importer]:
        from .importer import IMPORTER

        return (IMPORTER,)


DESIGN = SobacoDesign()
