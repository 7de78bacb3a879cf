"""The sobaco paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table
from .settings import SETTINGS as SOBACO_SETTINGS

PROTOCOL = Protocol(
    name="sobaco",
    kind="sobaco",
    paper="SOBACO (Yamamoto et al.), Table 3; change rates and Table 4 come from `jbcompile compare`",
    scoring="generate",
    shots=(0,),
    settings=SOBACO_SETTINGS,
    ooc="left out of every denominator (n = answers that pick an option)",
    tables=(
        Table(
            "SOBACO Table 3 layout",
            (
                Column("Bias", "bias_score", percent=False),
                Column("Culture", "culture_acc", percent=False),
                Column("OoC", "ooc_ratio", percent=False),
            ),
        ),
    ),
    note="the paper averages three wordings and reports change rates against basic: run every "
    "setting and `jbcompile compare` the runs",
)
