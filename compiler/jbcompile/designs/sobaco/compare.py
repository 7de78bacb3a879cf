"""SOBACO's part of `jbcompile compare`: each model's summary over settings (:mod:`.summary`) and
Spearman's ρ of the change rates pooled over all models (SOBACO Table 4, last row)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...evaluate.compare import Run
from ...evaluate.compare.render import WARNED
from ...evaluate.tables import fmt_number, fmt_p, md_table
from .summary import (
    BASIC_ZERO_NOTE,
    FEW_WORDINGS_NOTE,
    NOT_RECORDED,
    SUMMARY_JSON,
    SUMMARY_MD,
    any_few_wordings,
    left_out,
    overall_entries,
    permutation_p,
    rate_cell,
    score_cell,
    spearman,
    summarize,
    warned_label,
    warning_notes,
    write_summary,
)


def compare_section(runs: Sequence[Run], seed: int) -> dict[str, Any]:
    """Each model's summary over settings, and the change-rate correlation pooled over all models."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        groups.setdefault(run.results.model_name or NOT_RECORDED, []).append(run.results.to_json())
    models = {model: summarize(group) for model, group in groups.items()}
    points = [
        (model, method, entry["bias_score"]["mean"], entry["culture_acc"]["mean"])
        for model, summary in models.items()
        for method, scopes in summary["change_rates"].items()
        for entry in [scopes["overall"]]
        if entry["bias_score"]["mean"] is not None and entry["culture_acc"]["mean"] is not None
    ]
    bias_cr, culture_cr = [p[2] for p in points], [p[3] for p in points]
    pooled = {
        "points": [
            {"model": m, "method": d, "bias_score_cr": b, "culture_acc_cr": c} for m, d, b, c in points
        ],
        "spearman": spearman(bias_cr, culture_cr),
        "p_value": permutation_p(bias_cr, culture_cr, seed=seed),
    }
    return {"models": models, "pooled_correlation": pooled}


def compare_markdown(section: Mapping[str, Any]) -> list[str]:
    """One row per model: basic scores (mean ± std over wordings), mean change rates, ρ and its p."""
    methods = [
        m
        for m in ("debias", "cot-j", "cot-e", "cot-r")
        if any(m in s["change_rates"] for s in section["models"].values())
    ]
    lines = ["## SOBACO: models over settings", ""]
    rows = []
    marked = False
    for model, summary in section["models"].items():
        basic = (summary["scores"].get("basic") or {}).get("overall") or {}
        cells = [score_cell(basic.get(m) or {}) for m in ("bias_score", "culture_acc")]
        for method in methods:
            rates = (summary["change_rates"].get(method) or {}).get("overall") or {}
            cells.append(
                " / ".join(
                    rate_cell(rates.get(m) or {}, with_std=False) for m in ("bias_score", "culture_acc")
                )
            )
            marked = marked or any(left_out(rates.get(m) or {}) for m in ("bias_score", "culture_acc"))
        corr = summary["correlation"]["overall"]
        rows.append(
            [
                warned_label(model, bool(summary.get("warnings"))),
                *cells,
                fmt_number(corr["spearman"]),
                fmt_p(corr["p_value"]),
            ]
        )
    header = [
        "model",
        "Bias (basic, mean ± std)",
        "Culture (basic, mean ± std)",
        *(f"CR {m} (bias / culture, %)" for m in methods),
    ]
    lines += md_table([*header, "ρ Bias-Culture", "p"], rows)
    if marked:
        lines += ["", BASIC_ZERO_NOTE]
    # the figures the table shows: basic's scores and every method's change rates
    shown = [
        entry
        for summary in section["models"].values()
        for entry in overall_entries(
            {**summary, "scores": {"basic": summary["scores"].get("basic") or {"overall": {}}}},
            ("bias_score", "culture_acc"),
        )
    ]
    if any_few_wordings(shown):
        lines += ["", FEW_WORDINGS_NOTE]
    notes = [
        note for model, summary in section["models"].items() for note in warning_notes(summary, f"{model}, ")
    ]
    if notes:  # the runs table's rule: a warned run's figures are marked wherever they appear
        lines += ["", f"{WARNED} pools the figures of runs whose figures carry a warning:", "", *notes]
    pooled, pooled_mark = section["pooled_correlation"], f" {WARNED}" if notes else ""
    lines += [
        "",
        f"All models pooled{pooled_mark} ({len(pooled['points'])} model × method points): "
        f"ρ = {fmt_number(pooled['spearman'])}, "
        f"upper-tailed permutation p = {fmt_p(pooled['p_value'])}.",
        "",
    ]
    return lines


def write_compare_files(out: Path, section: Mapping[str, Any]) -> list[str]:
    """A comparison of one model's runs also gets that model's summary (summary.json and .md)."""
    models = section.get("models") or {}
    if len(models) != 1:
        return []
    write_summary(out, next(iter(models.values())))
    return [SUMMARY_JSON, SUMMARY_MD]
