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

from ...codes import declare
from ..spec import Design

if TYPE_CHECKING:
    from ...evaluate.kind import EvalKind
    from ...importers import Importer
    from ..base import Kind


class SobacoDesign(Design):
    name = "sobaco"
    position = 10
    summary = "SOBACO: a bias problem and a culture problem share a background; pick name, name or unknown"
    codes = (
        *declare(
            "sobaco",
            "docs/kinds.md#diagnostics",
            {
                "SB101": "the names group has fewer than two names in the build language",
                "SB102": "the names group lists a name twice",
                "SB103": "the background context does not introduce both names",
                "SB104": "a culture or dummy context that says the same of both names, with a name as gold",
                "SB201": "an example_id occurs twice",
                "SB202": "a problem × question without its 36·E rows",
                "SB203": "a gold that does not fit the problem's type",
                "SB204": "gold or unknown positions not uniform within a problem × question",
                "SB205": "a pair_id that is not one bias and one culture row with the same options",
                "SB302": "a row of another harness's predictions lacks a field the metrics need",
                "SB303": "a run that is not a sobaco run with a bundled setting",
                "SB304": "two runs of one setting",
                "SB305": "runs of different models",
                "SB306": "a folder without results.json",
                "SB307": "runs on different data",
            },
        ),
        *declare(
            "import",
            "docs/translate.md#import-diagnostics",
            {
                "IM031": "sobaco-json: a problem that does not fit SOBACO's format",
                "IM032": "sobaco-json: problems that do not form a complementary pair",
                "IM033": "sobaco-json: bad --name or --unknown values",
                "IM034": "sobaco-json: a problem the source format cannot hold",
                "IM035": "sobaco-json: SOBACO rows the build does not give",
            },
        ),
    )

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
