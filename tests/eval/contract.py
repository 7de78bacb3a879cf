"""The metric names results.json promises other tools (issues 6 and 14), spelled out once for the tests.

Kept independent of the package's own list on purpose: a renamed metric must fail a test. Schema 2
(issue 14) replaced ``s_amb`` by ``s_amb_bbq`` / ``s_amb_jbbq`` and made the unsuffixed accuracies and
diff-bias scores count out-of-choice rows (JBBQ); the ``_valid`` names keep the former meaning.
"""

SCHEMA_VERSION = 2

CONTRACT = (
    "acc",
    "acc_ambig",
    "acc_disambig",
    "acc_avg",
    "acc_valid",
    "acc_ambig_valid",
    "acc_disambig_valid",
    "acc_avg_valid",
    "diff_bias_ambig",
    "diff_bias_disambig",
    "diff_bias_avg",
    "diff_bias_ambig_valid",
    "diff_bias_disambig_valid",
    "diff_bias_avg_valid",
    "s_dis",
    "s_amb_bbq",
    "s_amb_jbbq",
    "s_avg_jbbq",
    "acc_diff",
    "acc_diff_valid",
    "ooc_ratio",
    "ooc_ratio_ambig",
    "ooc_ratio_disambig",
    "n",
    "n_valid",
    "option_share",
)

SOBACO_CONTRACT = (
    "bias_score",
    "culture_acc",
    "acc",
    "bias_score_all",
    "culture_acc_all",
    "acc_all",
    "ooc_ratio",
)
JUBAKU_CONTRACT = (
    "acc",
    "acc_all",
    "n_invalid",
    "invalid_rate",
    "fluctuation_rate",
    "fluctuation_rate_valid",
)
