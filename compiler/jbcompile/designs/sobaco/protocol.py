"""The sobaco paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table
from .settings import PROTOCOL_NAME
from .settings import SETTINGS as SOBACO_SETTINGS

PROTOCOL = Protocol(
    name=PROTOCOL_NAME,
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
    max_new_tokens="the paper's (Appendix D): 1 new token at temperature 0 (300 for cot-j; 100 for cot-e's "
    "first turn); a reasoning model (--thinking) 800 for every prompt, sampled at temperature 0.6",
    temperature=0.0,
    reasoning_temperature=0.6,
    reading="strict: a reply whose first line is not one option (its number, or its text) is out of "
    "choice; cot-j reads the line after its first 「回答:」 or 「最終回答:」 that holds an answer",
)
