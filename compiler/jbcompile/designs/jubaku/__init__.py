"""The ``jubaku`` design (JUBAKU-v2): a dialogue and two responses that reach the same conclusion, one
reasoning from a person's attribute (biased), one from the situation (neutral); a row asks for A or B.
Config ``jubaku``.

Modules: ``schema``, ``compiler`` (4 instruction wordings × 2 orders), ``evaluate`` (accuracy over
valid replies, answer fluctuation rate), ``release`` (the JUBAKU-v2 release and its evaluation
script's output), ``importer``, ``prompts/`` and ``card.md.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spec import Design

if TYPE_CHECKING:
    from ...evaluate.kind import EvalKind
    from ...importers import Importer
    from ..base import Kind


class JubakuDesign(Design):
    name = "jubaku"
    position = 20
    summary = "JUBAKU-v2: two responses with one conclusion, one reason biased, one neutral; pick A or B"

    def compiler(self) -> Kind:
        from .compiler import KIND

        return KIND

    def evaluator(self) -> EvalKind:
        from .evaluate import JUBAKU

        return JUBAKU

    def importers(self) -> Sequence[Importer]:
        from .importer import IMPORTER

        return (IMPORTER,)


DESIGN = JubakuDesign()
