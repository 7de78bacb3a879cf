"""The jubaku paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table

PROTOCOL = Protocol(
    name="jubaku",
    kind="jubaku",
    paper="JUBAKU-v2 (Shiotani et al.), Figure 1 accuracy and Table 2",
    scoring="generate",
    shots=(0,),
    settings=("basic",),
    ooc="replies other than A or B are left out of the accuracy; in fluctuation_rate such a reply is one "
    "more answer (a case is fluctuating when its replies are not all the same answer, so one whose "
    "replies are all invalid is not), and only valid replies are compared in fluctuation_rate_valid",
    max_new_tokens="10 new tokens, greedy, no stop string (the JUBAKU-v2 evaluation script's settings)",
    reading="as the JUBAKU-v2 evaluation script reads them: think blocks removed, the last A or B standing "
    "alone as a word; else a first line naming one of A and B only; anything else is not a valid reply",
    temperature=0.0,
    tables=(
        Table(
            "JUBAKU-v2 layout (accuracy, Table 2 fluctuation rate)",
            (
                Column("Accuracy (%)", "acc"),
                Column("Fluctuation Rate (%)", "fluctuation_rate"),
                Column("Fluctuation Rate, valid replies (%)", "fluctuation_rate_valid"),
                Column("Non-A/B replies", "n_invalid", percent=False),
            ),
        ),
    ),
)
