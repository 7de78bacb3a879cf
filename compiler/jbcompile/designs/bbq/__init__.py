"""The ``bbq`` design (JBBQ, after English BBQ): a template with two person slots, an ambiguous and a
disambiguating context, a negative and a non-negative question; a row asks to pick one of three options
(person 1, person 2, unknown). Configs ``full`` and ``lite`` (the default).

Modules: ``schema`` (source model), ``compiler`` (row contract, expansion, lite, verification),
``rationale`` (gold rationales), ``evaluate`` / ``metrics`` / ``shots`` (evaluator part), ``release``
(BBQ/JBBQ release rows and lm-evaluation-harness samples), ``harness`` (what `jbcompile export` writes
for lm-eval and inspect), ``importers/`` (BBQ's CSVs and JSONL),
``prompts/`` and ``card.md.j2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..spec import Design

if TYPE_CHECKING:
    from ...evaluate.kind import EvalKind
    from ...importers import Importer
    from ..base import Kind
    from ..exporting import HarnessExport


class BbqDesign(Design):
    name = "bbq"
    position = 0
    summary = "JBBQ (after BBQ): two persons, ambiguous or disambiguated context; pick person 1, 2 or unknown"

    def compiler(self) -> Kind:
        from .compiler import KIND

        return KIND

    def evaluator(self) -> EvalKind:
        from .evaluate import BBQ

        return BBQ

    def importers(self) -> Sequence[Importer]:
        from .importers import jsonl, templates

        return (templates.IMPORTER, jsonl.IMPORTER)

    def harness_export(self) -> HarnessExport:
        from .harness import EXPORT

        return EXPORT


DESIGN = BbqDesign()
