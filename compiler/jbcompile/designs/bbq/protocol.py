"""The bbq paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table

PROTOCOL = Protocol(
    name="jbbq",
    kind="bbq",
    paper="JBBQ (Yanaka et al.), Table 3 / Table 13 and Table 12 (Appendix C); bias detection: Tables 7, "
    "18, 19",
    scoring="generate",
    shots=(3, 0),
    settings=("basic", "warning", "cot"),
    ooc="counted as wrong, and as neither biased nor counter-biased (n = every question)",
    tables=(
        Table(
            "JBBQ Table 3 (3-shot) / Table 13 (zero-shot) layout",
            (
                Column("OoC", "ooc_ratio"),
                Column("Acc. Avg", "acc_avg"),
                Column("Acc. Amb", "acc_ambig"),
                Column("Acc. Dis", "acc_disambig"),
                Column("Diff-bias Avg", "diff_bias_avg", signed=True),
                Column("Diff-bias Amb", "diff_bias_ambig", signed=True),
                Column("Diff-bias Dis", "diff_bias_disambig", signed=True),
            ),
        ),
        Table(
            "JBBQ Table 12 layout (BBQ metrics, Appendix C)",
            (
                Column("BS Avg", "s_avg_jbbq", signed=True),
                Column("BS Amb", "s_amb_jbbq", signed=True),
                Column("BS Dis", "s_dis", signed=True),
                Column("Acc. Diff.", "acc_diff", signed=True),
            ),
        ),
    ),
    note="basic, warning and cot are the paper's basicP, paraP and CoT settings",
    task_tables=(
        (
            "detect",
            (
                Table(
                    "JBBQ Table 18 (basicP) / Table 19 (paraP) layout, bias detection (Table 7: Acc. Avg)",
                    (
                        Column("Acc. Avg", "acc_avg"),
                        Column("Acc. Amb", "acc_ambig"),
                        Column("Acc. Dis", "acc_disambig"),
                    ),
                ),
            ),
        ),
    ),
)
