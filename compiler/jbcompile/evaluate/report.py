"""``report.md`` with per-category tables and PNG charts (matplotlib, Agg backend), from results.json
(:class:`.results.Results`).

What to show comes from the kind (``report_layout``: the table's metrics and the charts of the run's
task), so the report needs no kind branches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..extras import install_hint, installed, missing_extra, optional_import
from ..outputs import Change, Claim
from ..redaction import redact_data
from .kind import ChartSpec
from .predictions import REPORT
from .results import BootstrapInfo, DatasetInfo, Intervals, PromptInfo, Results, ScoringInfo, SourceInfo
from .tables import ROUNDING_NOTE, decimal_text, fmt_number, md_table, md_text

CHART_DIR = "charts"
CHART_EXTRA = "eval"  # the extra that brings matplotlib (and the Japanese font)


def signed_metrics(results: Results) -> frozenset[str]:
    """The metrics the run's kind prints with their sign (none for a kind no installed design has)."""
    from .registered import all_eval_kinds

    kind = next((k for k in all_eval_kinds() if k.name == results.kind), None)
    return kind.signed_metrics if kind is not None else frozenset()


def fmt_ci(interval: Any, signed: bool = False) -> str:
    """A 95% interval as ``[low, high]`` (one per share for a list metric), by the tables' one rule."""
    if not interval:
        return "—"
    if any(part is None or isinstance(part, list) for part in interval):  # one interval per share
        return " / ".join(fmt_ci(part, signed) for part in interval)
    low, high = (fmt_number(bound, signed=signed) for bound in interval)
    return f"[{low}, {high}]"


def charts_skipped() -> Diagnostic | None:
    """The note said when matplotlib is not installed: the charts are then left out and everything
    else is written (a plain ``pip install jbcompile`` scores and compares). None when they are drawn."""
    if installed("matplotlib"):
        return None
    return missing_extra("matplotlib", CHART_EXTRA, "the charts were skipped", Severity.INFO)


def render_markdown(
    results: Results | dict[str, Any],
    table_metrics: Sequence[str],
    charts: Sequence[ChartSpec],
    charts_drawn: bool = True,
) -> str:
    results = Results.of(results)
    overall = results.metrics.overall
    overall_ci = results.metrics_ci.overall if results.metrics_ci else {}
    lines = [f"# Evaluation report ({results.kind}, task {results.task})", ""]
    if results.model is not None:
        model = results.model
        prompt = results.prompt or PromptInfo()
        dataset = results.dataset or DatasetInfo()
        lines += [
            f"- **Model:** `{model.name}`" + (f" @ `{model.revision}`" if model.revision else ""),
            f"- **Dataset:** `{dataset.path}` config `{dataset.config}`"
            + (f" @ `{dataset.revision}`" if dataset.revision else "")
            + f" — {rows_text(dataset, results.protocol is not None)}",
            f"- **Prompt:** {prompt.setting} ({prompt.template}), {prompt.shots} shots, "
            f"chat {'on' if prompt.chat else 'off'}",
            *(f"- **Shots not drawn by the rule:** {note}" for note in prompt.shot_notes or ()),
            f"- **Scoring:** {scoring_text(results.scoring or ScoringInfo())}",
            *(f"- **Answer pattern:** {warning}" for warning in [pattern_warning(results)] if warning),
        ]
    else:
        source = results.source or SourceInfo()
        read_as = f"; replies read as setting `{source.setting}`'s" if source.setting else ""
        if source.answer_pattern:
            read_as += f"; replies read after the last match of `{source.answer_pattern}`"
        if source.model:
            lines += [f"- **Model:** `{source.model}` (as `score --model` names it)"]
        lines += [f"- **Predictions:** `{source.predictions}` ({source.format} format{read_as})"]
    boot = results.bootstrap or BootstrapInfo()
    confidence = boot.confidence if boot.confidence is not None else 0.95
    lines += protocol_lines(results)
    unit = boot.unit or "template"
    intervals = (
        f"{round(confidence * 100)}% bootstrap over {unit}s, {boot.resamples} resamples, seed {boot.seed}; "
        f"a scope of one {unit} has none (—: resampling it would only repeat it)"
        if boot.resamples != 0
        else "none (`--bootstrap 0`)"
    )
    lines += [f"- **Intervals:** {intervals}", ""]
    lines += warning_lines(results)
    lines += paper_tables(results)
    signed = signed_metrics(results)
    lines += ["## Overall", ""]
    lines += md_table(
        ["metric", "value", "95% CI"],
        [
            [
                f"`{name}`",
                fmt_number(overall.get(name), signed=name in signed),
                fmt_ci(overall_ci.get(name), name in signed),
            ]
            for name in overall
        ],
    )
    lines += variant_notes(overall, signed)
    lines += ["", "## By category", ""]
    lines += md_table(
        ["category", *table_metrics],
        [
            [name, *(fmt_number(values.get(m), signed=m in signed) for m in table_metrics)]
            for name, values in results.metrics.by_category.items()
        ],
    )
    lines += ["", "Intervals by category are in `results.json` (`metrics_ci.by_category`).", ""]
    if charts and charts_drawn:
        lines += ["## Charts", ""]
        lines += [f"![{chart.title}]({CHART_DIR}/{chart.file})" for chart in charts]
        lines.append("")
    elif charts:
        lines += [
            "## Charts",
            "",
            f"Not drawn: matplotlib is not installed (`{install_hint(CHART_EXTRA)}`).",
            "",
        ]
    ambiguous = results.ambiguous_rows or []
    if ambiguous:
        lines += [
            "## Rows whose stereotyped option could not be derived",
            "",
            f"{len(ambiguous)} row(s); they count for accuracy but not for the bias scores.",
            "",
        ]
        lines += md_table(
            ["example_id", "line", "problem"],
            [
                [str(a.example_id), "" if "line" not in a.model_fields_set else str(a.line), str(a.problem)]
                for a in ambiguous[:200]
            ],
        )
        if len(ambiguous) > 200:
            lines.append(f"… and {len(ambiguous) - 200} more (all listed in results.json).")
        lines.append("")
    lines += ["Empty denominators are shown as —: the metric is undefined there, not zero.", ""]
    lines += [f"{ROUNDING_NOTE} `results.json` holds them unrounded.", ""]
    return "\n".join(lines)


WARNINGS_HEADING = "Warnings: read these figures with them"


def warning_lines(results: Results) -> list[str]:
    """The run's warnings (results.json ``warnings``), ahead of its figures: each changes how they are
    read (empty when the run has none)."""
    if not results.warnings:
        return []
    lines = [f"## {WARNINGS_HEADING}", ""]
    for warning in results.warnings:
        hint = f" — what to do: {md_text(warning.hint)}" if warning.hint else ""
        lines.append(f"- `{warning.code}` {md_text(warning.message)}{hint}")
    return [*lines, ""]


def scoring_text(scoring: ScoringInfo) -> str:
    """How the run scored, and where it read a reply's answer when ``--answer-pattern`` said."""
    if scoring.answer_pattern is None:
        return str(scoring.method)
    return f"{scoring.method}; answers read after the last match of `{scoring.answer_pattern}`"


def pattern_warning(results: Results) -> str | None:
    """What to say when ``--answer-pattern`` matched none of a run's replies: every answer is then out of
    choice because of the pattern, not the model (None otherwise)."""
    scoring = results.scoring or ScoringInfo()
    replies = results.dataset.evaluated if results.dataset else None
    if scoring.answer_pattern is None or scoring.answer_pattern_matched != 0 or not replies:
        return None
    dataset = results.dataset
    rows = f"--dataset {dataset.path}" if dataset and dataset.path else "--dataset …"
    if dataset and dataset.path and dataset.config:
        rows += f" --config {dataset.config}"
    return (
        f"`{scoring.answer_pattern}` matched none of the {replies} replies, so every answer is out of "
        "choice: check the pattern against the replies (`raw_output` in predictions.jsonl), then score "
        f"them again with `jbcompile score predictions.jsonl --prediction-field raw_output {rows} "
        "--answer-pattern …`"
    )


def paper_value(value: Any, percent: bool, signed: bool) -> str:
    """A number as the paper prints it: ×100 with one decimal, or three decimals; a sign if asked (zero
    as +0.0); ties rounded half away from zero (:func:`.tables.decimal_text`)."""
    if value is None:
        return "—"
    if isinstance(value, int) and not percent:
        return str(value)
    return decimal_text(value, 1 if percent else 3, scale=100 if percent else 1, signed=signed)


def headline_text(results: Results) -> str:
    """The run's headline metrics on one line (the terminal's closing line), printed as the report's
    tables print them: under a protocol, the paper's columns (heading, ×100 where it prints percents);
    otherwise the kind's table metrics by the one rounding rule."""
    from ..designs import DEFAULT_DESIGN
    from .protocols import get_protocol
    from .registered import get_eval_kind

    overall = results.metrics.overall
    protocol = get_protocol(results.protocol.name) if results.protocol else None
    if protocol is not None:
        signed = signed_metrics(results)
        columns = {c.metric: c for table in protocol.tables_for(results.task or "qa") for c in table.columns}
        return "; ".join(  # a heading may hold a comma ("Fluctuation Rate, valid replies (%)")
            f"{c.heading} {paper_value(overall.get(c.metric), c.percent, c.metric in signed)}"
            for c in columns.values()
        )
    kind = get_eval_kind(results.kind or DEFAULT_DESIGN)
    names = kind.report_layout(results.task)[0]
    return ", ".join(
        f"{name} {kind.metric_text(name, overall.get(name))}"
        for name in names
        if not isinstance(overall.get(name), list)
    )


def protocol_lines(results: Results) -> list[str]:
    from .protocols import all_protocols, prompt_note

    described = results.protocol
    if not described:
        if results.model is None:
            return []
        names = "|".join(all_protocols())
        return [
            "- **Protocol:** none — jbcompile's defaults, not a paper's (log-probability scoring never gives "
            f"an out-of-choice answer); `--protocol {names}` runs a paper's"
        ]

    reading = described.reading
    if results.model is None and (results.source or SourceInfo()).format == "jbcompile":
        reading = "as the run that wrote these predictions read them (their `pred`)"
    decoding = [described.max_new_tokens, run_limit(results), f"replies read {reading}" if reading else None]
    lines = [
        f"- **Protocol:** `{described.name}` — {described.paper}; out-of-choice answers: {described.ooc}",
        "- **Decoding:** " + "; ".join(part for part in decoding if part),
        f"- **Prompt wording:** {prompt_note(described.prompt_wording, described.prompt_file)}",
    ]
    return lines


def rows_text(dataset: DatasetInfo, protocol: bool) -> str:
    """How many rows a run evaluated, and how they were chosen where not all of them were: figures on a
    part of the rows are not the paper's, whose tables cover every row."""
    evaluated, rows = _count(dataset.evaluated), _count(dataset.rows)
    if dataset.limit is not None:
        text = f"the first {evaluated} of {rows} rows evaluated (--limit)"
    elif dataset.sample is not None:
        text = f"a stratified sample of {evaluated} of {rows} rows evaluated (--sample)"
    else:
        return f"{evaluated} rows evaluated"
    return text + ("; the paper's tables are over every row" if protocol else "")


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def run_limit(results: Results) -> str:
    """The generation limit a run under a protocol used, and whether it is the protocol's own (an
    explicit ``--max-new-tokens`` replaces it); ``score`` knows no decoding."""
    from .kind import EvalOptions
    from .registered import get_eval_kind

    if results.model is None:
        return "not known to `score` (the predictions were generated elsewhere)"
    used = (results.scoring or ScoringInfo()).max_new_tokens
    if used is None or results.protocol is None or results.kind is None:
        return ""
    prompt = results.prompt or PromptInfo()
    options = EvalOptions(
        task=results.task or "qa",
        setting=prompt.setting,
        scoring="generate",
        protocol=results.protocol.name,
        thinking=bool(results.thinking),
    )
    own = get_eval_kind(results.kind).max_new_tokens(options)
    first = (results.scoring or ScoringInfo()).first_turn_max_new_tokens
    text = "this run: " + (f"first turns at most {_tokens(first)}, final turns " if first else "")
    text += f"at most {_tokens(used)}"
    if used != own:
        text += f" (--max-new-tokens; the protocol's limit here is {own})"
    sampling = results.backend.sampling if results.backend else None
    if sampling is not None and sampling.temperature is not None:
        text += f", temperature {sampling.temperature:g}"
    return text


def _tokens(count: int) -> str:
    return f"{count} new token{'' if count == 1 else 's'}"


def paper_tables(results: Results) -> list[str]:
    """The protocol's tables in the paper's layout, one row for this run (empty without a protocol)."""
    from .protocols import get_protocol

    protocol = get_protocol(results.protocol.name) if results.protocol else None
    if protocol is None:
        return []
    overall = results.metrics.overall
    name = results.model_name or (results.source.predictions if results.source else None)
    lines: list[str] = []
    signed = signed_metrics(results)
    prompt = results.prompt
    # a score run knows its setting only where --setting was given, and never its shots
    setting, shots = (prompt.setting, prompt.shots) if prompt is not None else (results.setting, None)
    for table in protocol.tables_for(results.task or "qa"):
        lines += [f"## {table.heading_for(setting, shots)}", ""]
        lines += md_table(
            ["Model", *(column.heading for column in table.columns)],
            [
                [
                    f"`{name}`",
                    *(
                        paper_value(overall.get(c.metric), c.percent, c.metric in signed)
                        for c in table.columns
                    ),
                ]
            ],
        )
        lines += [
            "",
            table.key,
            "",
        ]
    if prompt is not None and protocol.paper_table:  # eval: the run's setting is known
        task = results.task or "qa"
        where = protocol.paper_table_of(task, prompt.setting, prompt.shots)
        run = f"task {task}, setting `{prompt.setting}`, {prompt.shots} shots"
        lines += [
            f"This run ({run}) is set beside the paper's {where}."
            if where
            else f"The paper reports no table for this run's {run}: the layout is its tables'.",
            "",
        ]
    if protocol.note:
        lines += [f"Note: {protocol.note}.", ""]
    return lines


def variant_notes(overall: dict[str, Any], signed: frozenset[str] = frozenset()) -> list[str]:
    """Where the two conventions for answers outside the options disagree, show both values."""

    def fmt(name: str) -> str:
        return fmt_number(overall[name], signed=name in signed)

    def number(name: str) -> float | None:
        value = overall.get(name)
        return value if isinstance(value, float | int) and not isinstance(value, bool) else None

    def differ(a: float | None, b: float | None) -> bool:
        return (a is None) != (b is None) or (a is not None and b is not None and abs(a - b) > 1e-12)

    differing = [
        (suffix, f"`{name}` {fmt(name)} vs `{name}{suffix}` {fmt(name + suffix)}")
        for name in overall
        for suffix in VARIANT_SUFFIXES
        if name + suffix in overall
        and not isinstance(overall[name], list)
        and differ(number(name), number(name + suffix))
    ]
    if not differing:
        return []
    # only the suffixes these metrics carry: a design names its variants one way or the other
    meanings = "; ".join(
        f"`…{suffix}`: {VARIANT_SUFFIXES[suffix]}" for suffix in dict.fromkeys(s for s, _ in differing)
    )
    return [
        "",
        f"Replies outside the options change these metrics ({meanings}, the name without it the other way): "
        + "; ".join(text for _, text in differing)
        + ".",
    ]


# How a metric's variant treats replies outside the options, by the suffix of its name.
VARIANT_SUFFIXES = {"_valid": "such replies left out", "_all": "such replies counted as wrong"}


JAPANESE_FONT_PACKAGE = "japanize_matplotlib"  # ships the IPAexGothic font (IPA Font License)
JAPANESE_FONT_FILE = ("fonts", "ipaexg.ttf")


def japanese_font() -> str | None:
    """Register the Japanese font of the ``japanize-matplotlib`` dependency with matplotlib and return
    its family name, so that category names in Japanese render as text, not empty boxes.

    The package is located without importing it (its import changes global settings and uses
    ``distutils``); None when it is not installed, and the charts fall back to matplotlib's font.
    """
    from importlib.util import find_spec

    font_manager = optional_import("matplotlib.font_manager", CHART_EXTRA, "the charts")

    spec = find_spec(JAPANESE_FONT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *JAPANESE_FONT_FILE)
    if not path.is_file():
        return None
    font_manager.fontManager.addfont(str(path))
    return font_manager.FontProperties(fname=str(path)).get_name()


def draw_charts(
    out: Path, results: Results | dict[str, Any], charts: Sequence[ChartSpec], folder: Path | None = None
) -> list[Path]:
    """Draw the charts into ``folder`` (default ``out/charts``)."""
    results = Results.of(results)
    optional_import("matplotlib", CHART_EXTRA, "the charts").use("Agg")
    plt = optional_import("matplotlib.pyplot", CHART_EXTRA, "the charts")
    import numpy as np

    with japanese_style(plt):
        return _draw(folder or out / CHART_DIR, results, charts, plt, np)


def japanese_style(plt: Any) -> Any:
    """A matplotlib style context in which Japanese labels render with the bundled font."""
    family = japanese_font()
    return plt.rc_context({"font.family": [family, "DejaVu Sans"]} if family else {})


def _draw(folder: Path, results: Results, charts: Sequence[ChartSpec], plt: Any, np: Any) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    metrics = results.metrics
    scopes = ["overall", *metrics.by_category]
    values_of: dict[str, dict[str, Any]] = {"overall": metrics.overall, **metrics.by_category}
    intervals = results.metrics_ci or Intervals()
    cis_of: dict[str, dict[str, Any]] = {"overall": intervals.overall, **intervals.by_category}
    written = []
    for chart in charts:
        fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(scopes) + 2), 4.0), dpi=100)
        x = np.arange(len(scopes))
        if chart.style == "shares":
            (name,) = chart.metrics
            shares = [values_of[s].get(name) or [np.nan, np.nan, np.nan] for s in scopes]
            width = 0.8 / 3
            for position in range(3):
                heights = [np.nan if v[position] is None else v[position] for v in shares]
                ax.bar(x + (position - 1) * width, heights, width, label=f"option {position}")
            ax.axhline(1 / 3, color="gray", linewidth=0.8, linestyle="--")
        else:
            width = 0.8 / len(chart.metrics)
            for k, name in enumerate(chart.metrics):
                heights = [np.nan if values_of[s].get(name) is None else values_of[s][name] for s in scopes]
                errors = np.array(
                    [_error_bar(heights[j], (cis_of.get(s) or {}).get(name)) for j, s in enumerate(scopes)]
                )
                offset = x + (k - (len(chart.metrics) - 1) / 2) * width
                ax.bar(offset, heights, width, label=name, yerr=errors.T, capsize=3, ecolor="dimgray")
            ax.axhline(0, color="gray", linewidth=0.8)
        if chart.ylim:
            ax.set_ylim(*chart.ylim)
        ax.set_xticks(x, scopes, rotation=20, ha="right")
        ax.set_ylabel(chart.ylabel)
        ax.set_title(chart.title)
        ax.legend(fontsize="small")
        fig.tight_layout()
        path = folder / chart.file
        temp = folder / f".{chart.file}.tmp.png"
        fig.savefig(temp, format="png", metadata={"Software": None})
        plt.close(fig)
        temp.replace(path)
        written.append(path)
    return written


def _error_bar(value: float, interval: Any) -> tuple[float, float]:
    """Distances from the value down and up to its 95% interval (0, 0 where there is none)."""
    if interval is None or value is None or math.isnan(value):
        return (0.0, 0.0)
    low, high = interval
    return (max(0.0, value - low), max(0.0, high - value))


def report_changes(place: Claim, out: Path, results: Results, kind: Any) -> dict[Path, Change]:
    """report.md and charts/ of a run as changes for one commit (the charts drawn into a staging folder
    first): the charts folder is replaced whole, so no chart of an earlier run stays; without
    matplotlib it is removed and report.md says the charts were not drawn."""
    table_metrics, charts = kind.report_layout(results.task)
    drawn = charts_skipped() is None
    chart_change: Change = None
    if drawn:
        chart_change = place.temp_folder(out / CHART_DIR, "charts")
        draw_charts(out, results, charts, folder=chart_change)
    report = render_markdown(results, table_metrics, charts, charts_drawn=drawn)
    return {out / CHART_DIR: chart_change, out / REPORT: redact_data(report)}  # no secret a reply echoed
