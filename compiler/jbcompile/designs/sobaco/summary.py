"""Comparing sobaco runs of one model: what debiasing prompts gain on bias and lose on culture.

Input: the ``results.json`` of runs with the bundled settings (``basic-1`` … ``cot-r-3``). Output, per
scope (overall and each category):

- ``scores``: each method's metric in each wording, their mean and standard deviation (sample standard
  deviation, ``ddof=1``, over the wordings present; null with one wording), and how many wordings the
  mean covers (``n_wordings``: the paper's means are over all three, SOBACO §4.1.2, and the tables mark
  a mean over fewer);
- ``change_rates``: CR = (S_d − S_b) / S_b × 100 of each debiasing method d against ``basic`` in the
  same wording, then mean and standard deviation over the wordings (undefined where S_b = 0);
- ``correlation``: Spearman's ρ between the mean CRs of the bias score and of the culture accuracy over
  the debiasing methods, with an exact upper-tailed permutation p-value (every ordering of the methods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from ...diagnostics import Diagnostic, DiagnosticError
from ...evaluate.bootstrap import to_json_value
from ...evaluate.compare import same_data
from ...evaluate.compare.render import WARNED
from ...evaluate.results import Results
from ...evaluate.tables import ROUNDING_NOTE, fmt_number, fmt_p, md_text
from ...jsonl import read_json
from ...reading import RECORD, is_present
from .settings import METHODS, WORDINGS, split_setting

SUMMARY_METRICS = ("bias_score", "culture_acc", "unknown_rate_bias", "unknown_rate_culture")
CHANGE_METRICS = ("bias_score", "culture_acc")
SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
NOT_RECORDED = "model not recorded"  # a score run given no --model


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (``ddof=1``; None with one value)."""
    if not values:
        return None, None
    mean = to_json_value(np.mean(values))
    if len(values) < 2:
        return mean, None
    return mean, to_json_value(np.std(values, ddof=1))


def change_rate(debiased: float | None, basic: float | None) -> float | None:
    """CR = (S_d − S_b) / S_b × 100; None when either score is missing or S_b is 0. A rate of zero is
    0.0 (a negative S_b would make it −0.0)."""
    if debiased is None or basic is None or basic == 0:
        return None
    return to_json_value((debiased - basic) / basic * 100.0)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ (ties share their average rank); None for fewer than 2 points or a constant side."""
    if len(x) != len(y) or len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return to_json_value(stats.spearmanr(x, y).statistic)


def _rank_correlations(rank_x: np.ndarray, rank_y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Pearson's r of ``rank_x`` with each ordering of ``rank_y`` along ``axis`` (Spearman's ρ of ranks)."""
    rank_y = np.moveaxis(rank_y, axis, -1)
    centred_x = rank_x - rank_x.mean()
    centred = rank_y - rank_y.mean(axis=-1, keepdims=True)
    return centred @ centred_x / np.sqrt((centred**2).sum(axis=-1) * (centred_x**2).sum())


def permutation_p(
    x: Sequence[float], y: Sequence[float], limit: int = 8, resamples: int = 9999, seed: int = 0
) -> float | None:
    """Upper-tailed permutation p-value of Spearman's ρ: the share of orderings of ``y`` with ρ ≥ the
    observed one.

    Up to ``limit`` points every ordering is tried (exact, ``scipy.stats.permutation_test``; SOBACO Table
    4's per-model p-values over four methods are multiples of 1/24). Beyond, ``resamples`` seeded random
    orderings, with the observed one counted in: (hits + 1) / (resamples + 1), the convention that gives
    Table 4's pooled p of 0.0001 (drawn with numpy as before, so that a seed gives the p-values it gave).
    """
    if spearman(x, y) is None or len(x) < 3:
        return None
    rank_x, rank_y = stats.rankdata(x), stats.rankdata(y)
    if len(x) <= limit:
        result = stats.permutation_test(
            (rank_y,),
            lambda ranks, axis: _rank_correlations(rank_x, ranks, axis),
            permutation_type="pairings",
            vectorized=True,
            n_resamples=np.inf,
            alternative="greater",
        )
        return float(result.pvalue)
    observed = _rank_correlations(rank_x, rank_y)
    rng = np.random.default_rng(seed)
    shuffled = rank_y[np.argsort(rng.random((resamples, len(y))), axis=1)]
    hits = int(np.sum(_rank_correlations(rank_x, shuffled) >= observed - 1e-12))
    return (hits + 1) / (resamples + 1)


def _scopes(metrics: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {"overall": metrics.get("overall", {}), **dict(metrics.get("by_category", {}))}


def summarize(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The comparison of runs (results.json contents) of one model; raises on runs it cannot compare."""
    table: dict[tuple[str, int], dict[str, Mapping[str, Any]]] = {}
    warned: dict[str, list[dict[str, str]]] = {}
    problems = []
    for run in runs:
        setting = Results.of(run).setting or ""  # eval's prompt setting, or the one score read as
        parsed = split_setting(setting)
        if run.get("kind") != "sobaco" or parsed is None:
            problems.append(
                Diagnostic(
                    "SB303",
                    f"not a sobaco run with a bundled setting: {setting!r}",
                    hint="pass runs of `jbcompile eval --setting …` on a sobaco build, or of `jbcompile "
                    "score --setting …` (the setting the replies were asked with: it reads a column of "
                    "replies as that setting's, and names the setting of jbcompile predictions whose "
                    "run.json is not beside them)",
                )
            )
        elif parsed in table:
            problems.append(
                Diagnostic(
                    "SB304",
                    f"two runs with the setting {setting!r}",
                    hint="pass one run per setting (the table has one column per setting); runs of "
                    "`jbcompile score` are told apart by the model each names (`score --model NAME`)",
                )
            )
        else:
            table[parsed] = _scopes(run["metrics"])
            kept = Results.of(run).warnings
            if kept:  # the run's figures carry a warning: every figure that pools them is marked
                warned[setting] = [{"code": w.code, "message": w.message} for w in kept]
    models = {Results.of(run).model_name for run in runs}
    if len(models) > 1:
        problems.append(
            Diagnostic(
                "SB305", "the runs are of different models", hint="summarise one model's runs at a time"
            )
        )
    if not same_data(runs):
        problems.append(
            Diagnostic(
                "SB307",
                "the runs are on different data (another config, build or Hub commit)",
                hint="rerun the settings on one dataset version; results.json `dataset` tells each run's",
            )
        )
    if problems:
        raise DiagnosticError(problems)
    methods = [m for m in METHODS if any(key[0] == m for key in table)]
    wordings = sorted({key[1] for key in table})
    scopes = sorted(
        {scope for values in table.values() for scope in values}, key=lambda s: (s != "overall", s)
    )

    def value(method: str, wording: int, scope: str, metric: str) -> float | None:
        found = table.get((method, wording), {}).get(scope, {}).get(metric)
        return float(found) if isinstance(found, int | float) else None

    def summary_of(per_wording: dict[int, float | None]) -> dict[str, Any]:
        present = [v for v in per_wording.values() if v is not None]
        mean, std = mean_std(present)
        values = {str(w): v for w, v in per_wording.items()}
        return {"values": values, "mean": mean, "std": std, "n_wordings": len(present)}

    scores = {
        method: {
            scope: {
                metric: summary_of(
                    {w: value(method, w, scope, metric) for w in wordings if (method, w) in table}
                )
                for metric in SUMMARY_METRICS
            }
            for scope in scopes
        }
        for method in methods
    }

    def rates_of(method: str, scope: str, metric: str) -> dict[str, Any]:
        """CR per wording, mean and std over the wordings where it is defined, and the wordings of the
        comparison that the mean leaves out (``left_out``: one of the two methods was not run in it,
        basic scored 0 there — also listed in ``basic_zero`` —, or a score is undefined): the mean then
        says so."""
        paired = [w for w in wordings if (method, w) in table and ("basic", w) in table]
        summary = summary_of(
            {
                w: change_rate(value(method, w, scope, metric), value("basic", w, scope, metric))
                for w in paired
            }
        )
        summary["basic_zero"] = [w for w in paired if value("basic", w, scope, metric) == 0]
        summary["left_out"] = [w for w in wordings if summary["values"].get(str(w)) is None]
        return summary

    change_rates = {
        method: {
            scope: {metric: rates_of(method, scope, metric) for metric in CHANGE_METRICS} for scope in scopes
        }
        for method in methods
        if method != "basic"
    }
    correlation = {}
    for scope in scopes:
        points = [
            (
                method,
                change_rates[method][scope]["bias_score"]["mean"],
                change_rates[method][scope]["culture_acc"]["mean"],
            )
            for method in change_rates
        ]
        points = [(m, b, c) for m, b, c in points if b is not None and c is not None]
        bias_cr, culture_cr = [b for _, b, _ in points], [c for _, _, c in points]
        correlation[scope] = {
            "methods": [m for m, _, _ in points],
            "bias_score_cr": bias_cr,
            "culture_acc_cr": culture_cr,
            "spearman": spearman(bias_cr, culture_cr),
            "p_value": permutation_p(bias_cr, culture_cr),
        }
    return {
        "kind": "sobaco",
        "model": Results.of(runs[0]).model_name if runs else None,
        "settings": [f"{m}-{w}" for (m, w) in sorted(table, key=lambda k: (METHODS.index(k[0]), k[1]))],
        "scores": scores,
        "change_rates": change_rates,
        "correlation": correlation,
        "warnings": warned,  # each warned run's (results.json ``warnings``), by setting
    }


def read_runs(folders: Sequence[Path]) -> list[dict[str, Any]]:
    runs = []
    for folder in folders:
        path = Path(folder) / "results.json"
        if not is_present(path, RECORD):  # a FIFO or a folder there: F002, not "no results.json"
            raise DiagnosticError(
                [
                    Diagnostic(
                        "SB306", "no results.json here", path=str(folder), hint="pass run folders of eval"
                    )
                ]
            )
        try:
            runs.append(read_json(path, RECORD))
        except (OSError, ValueError) as error:
            message = f"results.json cannot be read: {error}"
            hint = "rerun the eval that wrote it, or leave this folder out"
            raise DiagnosticError([Diagnostic("SB306", message, path=str(path), hint=hint)]) from None
    return runs


def _fmt(value: float | None, digits: int = 3) -> str:
    return fmt_number(value, digits)


BASIC_ZERO_MARK = "¶"  # not †, which marks a run whose figures carry a warning
BASIC_ZERO_NOTE = (
    f"{BASIC_ZERO_MARK} a wording has no change rate — basic scored 0 there (the rate is undefined), a "
    "score is undefined (every answer out of choice), or basic or the method was not run in it: the mean "
    "covers the other wordings only (`left_out` in summary.json lists them, `basic_zero` those where "
    "basic scored 0)."
)


FEW_WORDINGS_MARK = "‡"
FEW_WORDINGS_NOTE = (
    f"{FEW_WORDINGS_MARK}n the mean (and std) is over n wordings, not the paper's {len(WORDINGS)}: SOBACO "
    "averages every score and change rate over its three prompt wordings (§4.1.2); run the missing "
    "wordings' settings for a figure like the paper's (`n_wordings` in summary.json)."
)


def wordings_covered(entry: Mapping[str, Any]) -> int:
    """How many wordings a mean is over (``n_wordings``; a summary written before it, from its values)."""
    if isinstance(entry.get("n_wordings"), int):
        return int(entry["n_wordings"])
    return sum(value is not None for value in (entry.get("values") or {}).values())


def few_wordings(entry: Mapping[str, Any]) -> bool:
    """Is a mean over fewer wordings than the paper's (an entry with no mean is no figure to mark)?"""
    return entry.get("mean") is not None and wordings_covered(entry) < len(WORDINGS)


def few_mark(entry: Mapping[str, Any]) -> str:
    return f" {FEW_WORDINGS_MARK}{wordings_covered(entry)}" if few_wordings(entry) else ""


def left_out(entry: Mapping[str, Any]) -> bool:
    """Does a change rate's mean leave a wording out? (``basic_zero``: summaries written before
    ``left_out`` was.)"""
    return bool(entry.get("left_out") or entry.get("basic_zero"))


def warned_methods(summary: Mapping[str, Any]) -> set[str]:
    """The methods some of whose runs carry a warning (results.json ``warnings``)."""
    return {parsed[0] for setting in summary.get("warnings") or {} if (parsed := split_setting(setting))}


def warned_label(label: str, warned: bool) -> str:
    """A row's label, marked † (as compare marks a run) where its figures pool a warned run's."""
    return f"{label} {WARNED}" if warned else label


def warning_notes(summary: Mapping[str, Any], who: str = "") -> list[str]:
    """The warned runs, each warning's code and message: the footnote of the † marks."""
    return [
        f"- {who}{setting}: `{w['code']}` {md_text(w['message'])}"
        for setting, found in (summary.get("warnings") or {}).items()
        for w in found
    ]


def score_cell(entry: Mapping[str, Any]) -> str:
    """A score over wordings as the tables show it: mean ± std."""
    return f"{_fmt(entry.get('mean'))} ± {_fmt(entry.get('std'))}" + few_mark(entry)


def rate_cell(entry: Mapping[str, Any], *, with_std: bool = True) -> str:
    """A change rate as the tables show it: signed (a change: +0.0 is none), marked when its mean leaves a
    wording out."""
    text = fmt_number(entry.get("mean"), 1, signed=True)
    text += f" ± {_fmt(entry.get('std'), 1)}" if with_std else ""
    return text + (f" {BASIC_ZERO_MARK}" if left_out(entry) else "") + few_mark(entry)


def any_basic_zero(change_rates: Mapping[str, Any]) -> bool:
    return any(
        left_out(entry)
        for scopes in change_rates.values()
        for metrics in scopes.values()
        for entry in metrics.values()
    )


def any_few_wordings(entries: Sequence[Mapping[str, Any]]) -> bool:
    return any(few_wordings(entry) for entry in entries)


def overall_entries(
    summary: Mapping[str, Any], metrics: Sequence[str] | None = None
) -> list[Mapping[str, Any]]:
    """Every overall score and change-rate entry of a summary (of ``metrics`` only, where given)."""
    return [
        entry
        for part in ("scores", "change_rates")
        for scopes in summary[part].values()
        for metric, entry in scopes["overall"].items()
        if metrics is None or metric in metrics
    ]


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The overall numbers as tables: scores (mean ± std), change rates (%), and the correlation; a row
    that pools a warned run's figures is marked †, and a footnote says the warnings."""
    warned_settings = summary.get("warnings") or {}
    lines = [
        f"# sobaco comparison ({summary.get('model') or NOT_RECORDED})",
        "",
        "Settings: " + ", ".join(warned_label(s, s in warned_settings) for s in summary["settings"]),
        "",
    ]
    lines += [
        "## Scores (mean ± std over wordings, overall)",
        "",
        "| method | " + " | ".join(SUMMARY_METRICS) + " |",
    ]
    lines.append("|---|" + "---:|" * len(SUMMARY_METRICS))
    warned = warned_methods(summary)
    for method, scopes in summary["scores"].items():
        cells = [score_cell(scopes["overall"][m]) for m in SUMMARY_METRICS]
        lines.append(f"| {warned_label(method, method in warned)} | " + " | ".join(cells) + " |")
    lines += ["", "## Change rate against basic (%, mean ± std over wordings, overall)", ""]
    lines += ["| method | " + " | ".join(CHANGE_METRICS) + " |", "|---|" + "---:|" * len(CHANGE_METRICS)]
    for method, scopes in summary["change_rates"].items():
        cells = [rate_cell(scopes["overall"][m]) for m in CHANGE_METRICS]
        label = warned_label(method, bool({method, "basic"} & warned))  # a rate pools basic's runs too
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if any_basic_zero({m: {"overall": s["overall"]} for m, s in summary["change_rates"].items()}):
        lines += ["", BASIC_ZERO_NOTE]
    if any_few_wordings(overall_entries(summary)):
        lines += ["", FEW_WORDINGS_NOTE]
    lines += ["", "## Spearman correlation of the change rates (bias score vs culture accuracy)", ""]
    lines += ["| scope | methods | ρ | p (permutation, upper-tailed) |", "|---|---|---:|---:|"]
    for scope, entry in summary["correlation"].items():
        methods = ", ".join(warned_label(m, bool({m, "basic"} & warned)) for m in entry["methods"]) or "—"
        lines.append(f"| {scope} | {methods} | {_fmt(entry['spearman'])} | {fmt_p(entry['p_value'])} |")
    if warned:
        lines += [
            "",
            f"{WARNED} pools the figures of runs whose figures carry a warning (their report.md "
            "heads its figures with them):",
            "",
            *warning_notes(summary),
        ]
    lines += [
        "",
        "Undefined values (an empty denominator, or a basic score of 0 for a change rate) show as —.",
        f"{ROUNDING_NOTE} `summary.json` holds them unrounded.",
        "",
    ]
    return "\n".join(lines)


def write_summary(out: Path, summary: Mapping[str, Any]) -> None:
    from ...evaluate.predictions import dump_json, write_atomic

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / SUMMARY_JSON, dump_json(summary))
    write_atomic(out / SUMMARY_MD, summary_markdown(summary))
