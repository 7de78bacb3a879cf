"""compare.md, compare.csv and the chart, from the comparison (:func:`.table.compare`'s result)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...extras import optional_import
from ..registered import get_eval_kind
from ..tables import ROUNDING_NOTE, fmt_number, fmt_p, md_table, md_text
from .identity import NAMED_BY


def protocol_text(identity: Mapping[str, Any]) -> str:
    """What the compared runs share (``protocol_identity``) in words; a value a run did not record (a
    ``score`` run's shots) is said to be unknown, not printed as null."""
    name = identity.get("protocol")
    shots = identity.get("shots")
    parts = [
        f"scoring {identity.get('scoring') or 'not recorded'}",
        "shots not recorded" if shots is None else f"{shots} shot{'' if shots == 1 else 's'}",
        f"task {identity.get('task')}",
    ]
    return (f"`{name}`" if name else "none (jbcompile's defaults)") + f" ({', '.join(parts)})"


def data_text(data: list[Any], named_by: str | None) -> str:
    """The compared runs' data in words: config, and the name compare.json's ``data_by`` says ``data``
    holds (:data:`.identity.NAMED_BY`: the sources hash, the Hub commit or the content's sha256). What no
    run recorded (a ``score`` run on a predictions file with its labels, no ``--dataset``) is said to be
    unknown, not printed as null."""
    config, name = data
    said = f"config `{config}`" if config is not None else "config not recorded"
    if name is None or named_by not in NAMED_BY:
        return f"{said}, sources hash, Hub commit and content not recorded"
    return f"{said}, {NAMED_BY[named_by]} `{name}`"


WARNED = "†"  # marks a run whose results.json warns of its figures (compare.md's footnote says which)


def marked(run: Mapping[str, Any]) -> str:
    """A run's label in compare.md's tables, marked where its figures carry a warning."""
    return f"{run['label']} {WARNED}" if run.get("warnings") else str(run["label"])


def warnings_footnote(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The footnote of the marked runs: each one's warnings, code and message, as its report says them."""
    warned = [run for run in runs if run.get("warnings")]
    if not warned:
        return []
    lines = [f"{WARNED} Warnings on these runs' figures (their report.md heads its figures with them):", ""]
    for run in warned:
        lines += [
            f"- {md_text(run['label'])}: `{w['code']}` {md_text(w['message'])}" for w in run["warnings"]
        ]
    return [*lines, ""]


def comparison_markdown(result: Mapping[str, Any]) -> str:
    from ..protocols import get_protocol, prompt_note
    from ..report import fmt_ci, paper_value

    described = result.get("protocol")
    protocol = get_protocol(described["name"]) if described else None
    kind = get_eval_kind(str(result["kind"]))
    lines = [f"# Comparison of {len(result['runs'])} runs ({result['kind']})", ""]
    lines += [
        f"- **Data:** {data_text(result['data'], result.get('data_by'))}",
        f"- **Protocol:** {protocol_text(result['protocol_identity'])}",
    ]
    if protocol:  # each run's, said once where they share it
        notes = {
            md_text(run["label"]): prompt_note(*run.get("prompt_wording") or (None, None))
            for run in result["runs"]
        }
        if len(set(notes.values())) == 1:
            lines.append(f"- **Prompt wording:** {next(iter(notes.values()))}")
        else:
            lines.append(
                "- **Prompt wording:** " + "; ".join(f"{label}: {note}" for label, note in notes.items())
            )
    lines += ["", "## Runs", ""]
    sizes = [(md_text(run["label"]), run.get("rows")) for run in result["runs"]]
    if len({n for _, n in sizes if n is not None}) > 1:  # e.g. one run with --limit
        counts = ", ".join(f"{label} {n}" for label, n in sizes if n is not None)  # as the tables print n
        lines += [
            f"> **The runs cover different rows** ({counts}): each run's figures below are on its own "
            "rows, not like for like; the paired tests use only the rows both runs answered.",
            "",
        ]
    tables = protocol.tables_for(result["protocol_identity"].get("task") or "qa") if protocol else ()
    shots = result["protocol_identity"].get("shots")
    if protocol:
        for table in tables:
            # the report's rule for a table the paper prints for some settings only (JBBQ's Table 12)
            heading = table.heading_for_runs([(run.get("setting"), shots) for run in result["runs"]])
            lines += [f"### {heading}", ""]
            lines += md_table(
                ["Model", *(c.heading for c in table.columns)],
                [
                    [
                        marked(run),
                        *(
                            paper_value(
                                run["metrics"].get(c.metric), c.percent, c.metric in kind.signed_metrics
                            )
                            for c in table.columns
                        ),
                    ]
                    for run in result["runs"]
                ],
            )
            lines += ["", table.key]
            lines.append("")
    else:
        lines += md_table(
            ["run", *result["columns"]],
            [
                [marked(run), *(kind.metric_text(c, run["metrics"].get(c)) for c in result["columns"])]
                for run in result["runs"]
            ],
        )
        lines.append("")
    lines += warnings_footnote(result["runs"])
    tests = result["tests"]
    lines += ["## Paired tests on the rows both runs answered", ""]
    if tests["skipped"]:
        lines += [f"Without predictions.jsonl, not tested: {', '.join(tests['skipped'])}.", ""]
    if tests["mcnemar"]:
        lines += ["### McNemar's exact test (accuracy; out-of-choice counts as wrong)", ""]
        lines += md_table(
            [
                "first",
                "second",
                "metric",
                "rows",
                "first acc",
                "second acc",
                "only first right",
                "only second right",
                "p",
            ],
            [
                [
                    t["first"],
                    t["second"],
                    f"`{t['metric']}`",
                    str(t["rows"]),
                    fmt_number(t["first_acc"]),
                    fmt_number(t["second_acc"]),
                    str(t["only_first_right"]),
                    str(t["only_second_right"]),
                    fmt_p(t["p_value"]),
                ]
                for t in tests["mcnemar"]
            ],
        )
        lines.append("")
    if tests["bootstrap"]:
        boot = result["bootstrap"]
        lines += [
            f"### Paired bootstrap over {boot.get('unit') or 'template'}s "
            f"(second − first, signed; {boot['resamples']} resamples, seed {boot['seed']})",
            "",
        ]
        if any(c.percent for table in tables for c in table.columns):  # the tables above print ×100
            lines += [
                "Differences are fractions, as in `results.json` (×100 for the tables' percents).",
                "",
            ]
        lines += md_table(
            ["first", "second", "metric", "difference", "95% CI", "p"],
            [
                [
                    t["first"],
                    t["second"],
                    f"`{t['metric']}`",
                    fmt_number(t["diff"], signed=True),  # a difference: its sign, zero as +0.000
                    fmt_ci(t["ci"], signed=True),
                    fmt_p(t["p_value"]),
                ]
                for t in tests["bootstrap"]
            ],
        )
        lines.append("")
    chi = tests["chi_square"] + ([tests["chi_square_all"]] if tests["chi_square_all"] else [])
    if chi:
        paper = kind.chi_square_paper
        lines += [f"### Chi-square test of right / wrong counts among valid answers ({paper})", ""]
        lines += md_table(
            ["runs", "table (right, wrong)", "χ²", "dof", "p"],
            [
                [
                    " vs ".join(t["runs"]) if "runs" in t else f"{t['first']} vs {t['second']}",
                    "; ".join(f"{a}, {b}" for a, b in t["table"]),
                    fmt_number(t["chi2"], 2),
                    fmt_number(t["dof"]),
                    fmt_p(t["p_value"]),
                ]
                for t in chi
            ],
        )
        lines.append("")
    if result.get("kind") in result:
        lines += kind.compare_markdown(result[str(result["kind"])])
    lines += ["p-values are per comparison, not adjusted for the number of comparisons.", ""]
    lines += [f"{ROUNDING_NOTE} `compare.json` and `compare.csv` hold them unrounded.", ""]
    return "\n".join(lines)


def comparison_csv(result: Mapping[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["label", "model", "setting", "folder", *result["columns"]])
    for run in result["runs"]:
        values = [run["metrics"].get(c) for c in result["columns"]]
        writer.writerow(
            [
                run["label"],
                run["model"],
                run["setting"],
                run["folder"],
                *("" if v is None else repr(v) for v in values),
            ]
        )
    return buffer.getvalue()


def draw_comparison(path: Path, result: Mapping[str, Any]) -> None:
    """Grouped bars: one group per metric (fractions only), one bar per run."""
    import numpy as np

    from ..report import CHART_EXTRA, japanese_style

    optional_import("matplotlib", CHART_EXTRA, "the chart").use("Agg")
    plt = optional_import("matplotlib.pyplot", CHART_EXTRA, "the chart")

    with japanese_style(plt):
        metrics = [
            c
            for c in result["columns"]
            if any(isinstance(r["metrics"].get(c), float) for r in result["runs"]) and not c.startswith("n")
        ]
        fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(metrics) + 2), 4.0), dpi=100)
        x = np.arange(len(metrics))
        width = 0.8 / max(1, len(result["runs"]))
        for k, run in enumerate(result["runs"]):
            heights = [np.nan if run["metrics"].get(m) is None else run["metrics"][m] for m in metrics]
            ax.bar(x + (k - (len(result["runs"]) - 1) / 2) * width, heights, width, label=run["label"])
        ax.axhline(0, color="gray", linewidth=0.8)
        ax.set_xticks(x, metrics, rotation=20, ha="right")
        ax.set_title(f"{result['kind']}: runs compared")
        ax.legend(fontsize="small")
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.parent / f".{path.name}.tmp.png"
        fig.savefig(temp, format="png", metadata={"Software": None})
        plt.close(fig)
    temp.replace(path)
