"""The metric names results.json promises other tools (issue 6), spelled out once for the tests.

Kept independent of the package's own list on purpose: a renamed metric must fail a test.
"""

CONTRACT = (
    "acc",
    "acc_ambig",
    "acc_disambig",
    "diff_bias_ambig",
    "diff_bias_disambig",
    "s_dis",
    "s_amb",
    "acc_diff",
    "ooc_ratio",
    "n",
    "n_valid",
    "option_share",
)
