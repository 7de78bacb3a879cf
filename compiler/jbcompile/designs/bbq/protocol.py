"""The bbq paper's evaluation protocol (``--protocol``): see :mod:`jbcompile.evaluate.protocols`."""

from __future__ import annotations

from ...evaluate.kind import Column, Protocol, Table

PROTOCOL = Protocol(
    name="jbbq",
    kind="bbq",
    paper="JBBQ (Yanaka et al.), Tables 3, 13, 14 and 5, and Table 12 (Appendix C); bias detection: "
    "Tables 7, 18, 19",
    scoring="generate",
    shots=(3, 0),
    settings=("basic", "warning", "cot"),
    ooc="counted as wrong, and as neither biased nor counter-biased (n = every question)",
    tables=(
        Table(
            "JBBQ Table 3 (basicP, 3-shot) / Table 13 (basicP, zero-shot) / Table 14 (paraP, 3-shot) / "
            "Table 5 (CoT, 3-shot) layout",
            (
                Column("OoC", "ooc_ratio"),
                Column("Acc. Avg", "acc_avg"),
                Column("Acc. Amb", "acc_ambig"),
                Column("Acc. Dis", "acc_disambig"),
                Column("Diff-bias Avg", "diff_bias_avg"),
                Column("Diff-bias Amb", "diff_bias_ambig"),
                Column("Diff-bias Dis", "diff_bias_disambig"),
            ),
        ),
        Table(
            "JBBQ Table 12 layout (BBQ metrics, Appendix C)",
            (
                Column("BS Avg", "s_avg_jbbq"),
                Column("BS Amb", "s_amb_jbbq"),
                Column("BS Dis", "s_dis"),
                Column("Acc. Diff.", "acc_diff"),
            ),
            covers=(("basic", 3),),  # its caption: the 3-shot settings with the basic prompt
        ),
    ),
    note="basic and warning are the paper's basicP and paraP settings (cot, in the QA task only, its CoT)",
    paper_table=(
        ("qa", "basic", 3, "Table 3 (and Table 12 for the BBQ metrics)"),
        ("qa", "basic", 0, "Table 13"),
        ("qa", "warning", 3, "Table 14"),
        ("qa", "cot", 3, "Table 5"),
        ("detect", "basic", 0, "Table 18, left half (zero-shot; Table 7 shows its Acc. Avg)"),
        ("detect", "basic", 3, "Table 18, right half (3-shot; Table 7 shows its Acc. Avg)"),
        ("detect", "warning", 0, "Table 19, left half (zero-shot; Table 7 shows its Acc. Avg)"),
        ("detect", "warning", 3, "Table 19, right half (3-shot; Table 7 shows its Acc. Avg)"),
    ),
    task_tables=(
        (
            "detect",
            (
                Table(
                    "JBBQ Table 18 (basicP) / Table 19 (paraP) layout, bias detection (left: zero-shot, "
                    "right: 3-shot; Table 7: Acc. Avg)",
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
