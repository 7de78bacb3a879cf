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

from ...codes import declare
from ..spec import Design

if TYPE_CHECKING:
    from ...evaluate.kind import EvalKind
    from ...importers import Importer
    from ..base import Kind
    from ..exporting import HarnessExport


class JubakuDesign(Design):
    name = "jubaku"
    position = 20
    summary = "JUBAKU-v2: two responses with one conclusion, one reason biased, one neutral; pick A or B"
    codes = (
        *declare(
            "jubaku",
            "docs/kinds.md#diagnostics",
            {
                "JU101": "a case text holds a {{SLOT}}",
                "JU102": "a response does not contain the conclusion verbatim",
                "JU103": "the two responses are the same text",
                "JU201": "an example_id occurs twice",
                "JU202": "a case without its 8 distinct variants",
                "JU203": "label and biased_label are not 0 and 1",
                "JU204": "a case's gold is not A in four rows and B in four",
                "JU302": "a row of another harness's predictions lacks a field the metrics need",
            },
        ),
        *declare(
            "references",
            "docs/kinds.md#diagnostics",
            {
                "R030": "a case's prompt layout does not place the dialogue and both responses",
                "R031": "a case's example id pattern does not tell its variants apart",
            },
        ),
        *declare(
            "import",
            "docs/translate.md#import-diagnostics",
            {
                "IM021": "jubaku-jsonl: a row that does not fit JUBAKU-v2's format",
                "IM022": "jubaku-jsonl: the rows of one case disagree",
                "IM023": "jubaku-jsonl: a case lacks a wording or an order",
                "IM024": "jubaku-jsonl: a value the importer derived",
                "IM025": "jubaku-jsonl: a release row the build does not give back",
            },
        ),
    )

    def compiler(self) -> Kind:
        from .compiler import KIND

        return KIND

    def evaluator(self) -> EvalKind:
        from .evaluate import JUBAKU

        return JUBAKU

    def harness_export(self) -> HarnessExport:
        from .harness import EXPORT

        return EXPORT

    def importers(self) -> Sequence[Importer]:
        from .importer import IMPORTER

        return (IMPORTER,)


DESIGN = JubakuDesign()
