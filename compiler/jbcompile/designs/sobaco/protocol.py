"""The sobaco paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table
from .settings import METHODS, PROTOCOL_NAME, WORDINGS
from .settings import SETTINGS as SOBACO_SETTINGS

UNKNOWN_RATES = "Table 15 (its UNKNOWN rates: `unknown_rate_bias`, `unknown_rate_culture`)"


def _where(method: str) -> str:
    """Where the paper reports a method's numbers: basic in Table 3, every other method as change rates
    against basic (Figure 2), all of them by their UNKNOWN rates (Table 15); CoT-E's first turns in
    Table 14. The paper's values are means over the three wordings."""
    if method == "basic":
        where = "Table 3 (as the mean of the three wordings)"
    else:
        where = "Figure 2 (as change rates against basic in the same wording: `jbcompile compare`)"
    if method == "cot-e":
        where += ", Table 14 (its first turns: `first_turn_biased`)"
    return f"{where} and {UNKNOWN_RATES}"


PAPER_TABLES = tuple(
    ("qa", f"{method}-{wording}", 0, _where(method)) for method in METHODS for wording in WORDINGS
)

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
            "SOBACO Table 3 layout (the basic prompt; the paper reports the other methods as change "
            "rates, Figure 2)",
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
    "first turn); a reasoning model (--thinking) 800 for every prompt, sampled at temperature 0.6; no stop "
    "string",
    temperature=0.0,
    reasoning_temperature=0.6,
    reading="strict: a reply whose first line is not one option (its number, or its text) is out of "
    "choice; cot-j reads the line after its first 「回答:」 or 「最終回答:」 that holds an answer",
    paper_table=PAPER_TABLES,
)
