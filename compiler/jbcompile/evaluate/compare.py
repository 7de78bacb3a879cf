"""``jbcompile compare RUN…``: runs side by side, for any kind, with paired tests on the rows they share.

Runs are compared only when like is compared with like: one kind, one dataset (config and build sources
hash, or Hub commit) and one protocol (``--protocol`` name, scoring method, shots, task); anything else
is refused (EV211–EV213). Output: one table of runs (markdown, CSV and a chart) in the protocol's column
order, and on the rows both runs of a pair answered:

- McNemar's exact test on the kind's accuracy (an out-of-choice answer counts as wrong);
- a paired bootstrap over templates of the bias scores (both runs resampled with the same templates);
- for kinds that name one (``EvalKind.chi_square_metric``), a chi-square test of the right/wrong counts
  of valid answers, per pair and over all runs;
- the design's own section, if it has one (``EvalKind.compare_section``), under the design's name.

p-values are per comparison, not adjusted for the number of comparisons.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from ..designs import DEFAULT_DESIGN
from ..diagnostics import Diagnostic, DiagnosticError
from ..fsio import replaced_folder, taken_with
from ..paths import home_as_tilde
from . import predictions as files
from .bootstrap import paired_cluster_bootstrap
from .kind import EvalKind, Record, get_eval_kind

COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"
COMPARE_CSV = "compare.csv"
COMPARE_CHART = "charts/compare.png"


@dataclass
class Run:
    folder: Path
    results: dict[str, Any]
    records: list[Record] | None  # the run's predictions, when they can be found


def data_identity(run: Mapping[str, Any], by_content: bool = True) -> list[Any]:
    """What a run was computed on: its config and the sources hash of its build (else the Hub commit,
    else a release file's content, else its path). ``by_content=False`` leaves the file's content out,
    to compare with runs written before results.json held it."""
    dataset = run.get("dataset") or {}
    if not dataset and run.get("source"):
        source = run["source"]
        return [source.get("config"), source.get("commit") or source.get("dataset")]
    manifest = dataset.get("manifest") or {}
    content = dataset.get("sha256") if by_content else None  # the same file in two places is the same data
    source = manifest.get("sources_hash") or dataset.get("commit") or content or dataset.get("path")
    return [dataset.get("config"), source]


def same_data(runs: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the runs were computed on the same data; runs without a release file's content (written
    before results.json held it) are compared by the file's path, as they were then."""
    by_content = all((run.get("dataset") or {}).get("sha256") for run in runs) or not any(
        (run.get("dataset") or {}).get("sha256") for run in runs
    )
    return len({json.dumps(data_identity(run, by_content)) for run in runs}) <= 1


def protocol_identity(run: Mapping[str, Any]) -> dict[str, Any]:
    """What must agree for two runs' numbers to be comparable, besides the data."""
    return {
        "protocol": (run.get("protocol") or {}).get("name"),
        "scoring": (run.get("scoring") or {}).get("method"),
        "shots": (run.get("prompt") or {}).get("shots"),
        "task": run.get("task"),
    }


def read_run(folder: Path) -> Run:
    """A run folder's results.json and, when present, its predictions (ours: ``pred`` and ``gold``)."""
    folder = Path(folder)
    path = folder / files.RESULTS
    if not path.is_file():
        raise DiagnosticError(
            [Diagnostic("EV210", "no results.json here", path=str(folder), hint="pass run folders of eval")]
        )
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise DiagnosticError(
            [Diagnostic("EV210", f"results.json is not JSON: {error}", path=str(path))]
        ) from None
    candidates = [folder / files.PREDICTIONS]
    source = results.get("source") or {}
    if source.get("format") == "jbcompile" and source.get("predictions"):
        candidates.append(Path(source["predictions"]).expanduser())  # written with ~ for the home folder
    records = None
    for candidate in candidates:
        found = files.read_records(candidate)
        if found and all("pred" in r and "gold" in r for r in found):
            records = list(files.latest_by_id(found).values())
            break
    return Run(folder, results, records)


def check_comparable(runs: Sequence[Run]) -> None:
    problems = []
    kinds = {run.results.get("kind") for run in runs}
    if len(kinds) > 1:
        problems.append(
            Diagnostic("EV211", f"the runs are of different kinds: {', '.join(sorted(map(str, kinds)))}")
        )
    if not same_data([run.results for run in runs]):
        problems.append(
            Diagnostic(
                "EV212",
                "the runs are on different data (another config, build or Hub commit): "
                + "; ".join(f"{run.folder}: {json.dumps(data_identity(run.results))}" for run in runs),
                hint="rerun on one dataset version; results.json `dataset` tells each run's",
            )
        )
    protocols = [json.dumps(protocol_identity(run.results), sort_keys=True) for run in runs]
    if len(set(protocols)) > 1:  # each run named, in the order given
        problems.append(
            Diagnostic(
                "EV213",
                "the runs follow different protocols (protocol, scoring, shots or task): "
                + "; ".join(
                    f"{run.folder}: {protocol}" for run, protocol in zip(runs, protocols, strict=True)
                ),
                hint="rerun them with one --protocol (or the same --scoring and --shots)",
            )
        )
    if problems:
        raise DiagnosticError(problems)


def labels(runs: Sequence[Run]) -> list[str]:
    """Each run's name in the tables: the model, then its setting, then its folder where needed."""

    def model(run: Run) -> str:
        return str((run.results.get("model") or {}).get("name") or run.folder.name)

    def setting(run: Run) -> str:
        return str((run.results.get("prompt") or {}).get("setting") or "")

    names = [model(run) for run in runs]
    if len(set(names)) < len(names):
        names = [f"{model(run)} ({setting(run)})" if setting(run) else model(run) for run in runs]
    if len(set(names)) < len(names):
        names = [f"{name} [{run.folder}]" for name, run in zip(names, runs, strict=True)]
    return names


def columns_of(kind: EvalKind, run: Mapping[str, Any]) -> list[str]:
    """The metrics in the table: the protocol's headline, else the kind's report columns."""
    protocol = run.get("protocol")
    names = list(protocol["headline"]) if protocol else list(getattr(kind, "table_metrics", ()))
    return names


def mcnemar(first: Sequence[bool], second: Sequence[bool]) -> dict[str, Any]:
    """McNemar's exact test of paired right/wrong outcomes: a two-sided binomial test on the rows where
    exactly one run is right (p = 1 when there are none)."""
    from scipy.stats import binomtest

    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    discordant = only_first + only_second
    p_value = (
        1.0 if discordant == 0 else float(binomtest(min(only_first, only_second), discordant, 0.5).pvalue)
    )
    return {"only_first_right": only_first, "only_second_right": only_second, "p_value": p_value}


def chi_square(table: Sequence[Sequence[int]]) -> dict[str, Any]:
    """Pearson's chi-square test of homogeneity (no continuity correction) of a runs × (right, wrong)
    table; None where a row or column is empty."""
    from scipy.stats import chi2_contingency

    if any(sum(row) == 0 for row in table) or any(sum(col) == 0 for col in zip(*table, strict=True)):
        return {"table": [list(row) for row in table], "chi2": None, "dof": None, "p_value": None}
    statistic, p_value, dof, _ = chi2_contingency(table, correction=False)
    return {
        "table": [list(row) for row in table],
        "chi2": float(statistic),
        "dof": int(dof),
        "p_value": float(p_value),
    }


def paired_tests(
    kind: EvalKind, runs: Sequence[Run], names: Sequence[str], resamples: int, seed: int
) -> dict[str, Any]:
    """Every pair of runs with predictions, on the rows both answered."""
    out: dict[str, Any] = {
        "mcnemar": [],
        "bootstrap": [],
        "chi_square": [],
        "chi_square_all": None,
        "skipped": [],
    }
    usable = [(name, run) for name, run in zip(names, runs, strict=True) if run.records is not None]
    out["skipped"] = [name for name, run in zip(names, runs, strict=True) if run.records is None]
    by_id = {name: {str(r["example_id"]): r for r in run.records or []} for name, run in usable}
    for (name_a, _), (name_b, _) in combinations(usable, 2):
        shared = sorted(set(by_id[name_a]) & set(by_id[name_b]))
        rows_a = [by_id[name_a][i] for i in shared]
        rows_b = [by_id[name_b][i] for i in shared]
        pair = {"first": name_a, "second": name_b, "shared_rows": len(shared)}
        accuracy_rows = [j for j, row in enumerate(rows_a) if kind.accuracy_row(row)]
        right_a = [
            rows_a[j]["pred"] is not None and rows_a[j]["pred"] == rows_a[j]["gold"] for j in accuracy_rows
        ]
        right_b = [
            rows_b[j]["pred"] is not None and rows_b[j]["pred"] == rows_b[j]["gold"] for j in accuracy_rows
        ]
        out["mcnemar"].append(
            {
                **pair,
                "metric": kind.paired_accuracy,
                "rows": len(accuracy_rows),
                "first_acc": sum(right_a) / len(right_a) if right_a else None,
                "second_acc": sum(right_b) / len(right_b) if right_b else None,
                **mcnemar(right_a, right_b),
            }
        )
        if kind.paired_bias_metrics:
            diffs = paired_cluster_bootstrap(
                kind.prepare_records(rows_a),
                kind.prepare_records(rows_b),
                metrics=kind.paired_bias_metrics,
                cluster=kind.cluster,
                count=kind.count,
                names=kind.count_names,
                formulas=kind.formulas,
                resamples=resamples,
                seed=seed,
                scope=f"compare:{name_a}|{name_b}",
            )
            out["bootstrap"] += [{**pair, "metric": metric, **values} for metric, values in diffs.items()]
        if kind.chi_square_metric:
            table = [kind.chi_square_counts(rows_a), kind.chi_square_counts(rows_b)]
            out["chi_square"].append({**pair, "metric": kind.chi_square_metric, **chi_square(table)})
    if kind.chi_square_metric and len(usable) > 2:
        common = set.intersection(*(set(by_id[name]) for name, _ in usable))
        table = [kind.chi_square_counts([by_id[name][i] for i in sorted(common)]) for name, _ in usable]
        out["chi_square_all"] = {
            "runs": [name for name, _ in usable],
            "shared_rows": len(common),
            "metric": kind.chi_square_metric,
            **chi_square(table),
        }
    return out


def compare(runs: Sequence[Run], resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The comparison of runs; raises DiagnosticError when they cannot be compared."""
    if not runs:
        raise DiagnosticError([Diagnostic("EV214", "no runs to compare")])
    check_comparable(runs)
    first = runs[0].results
    kind = get_eval_kind(str(first.get("kind", DEFAULT_DESIGN)))
    names = labels(runs)
    columns = columns_of(kind, first)
    table = []
    for name, run in zip(names, runs, strict=True):
        overall = run.results.get("metrics", {}).get("overall", {})
        table.append(
            {
                "label": name,
                "model": (run.results.get("model") or {}).get("name"),
                "setting": (run.results.get("prompt") or {}).get("setting"),
                "folder": str(run.folder),
                "rows": overall.get("n"),  # how many rows the run's figures are on
                "metrics": {column: overall.get(column) for column in columns},
            }
        )
    result: dict[str, Any] = {
        "kind": kind.name,
        "protocol": first.get("protocol"),
        "protocol_identity": protocol_identity(first),
        "data": data_identity(first),
        "columns": columns,
        "runs": table,
        "bootstrap": {"resamples": resamples, "unit": "template", "seed": seed},
        "tests": paired_tests(kind, runs, names, resamples, seed),
    }
    section = kind.compare_section(runs, seed)
    if section is not None:  # the design's own part of the comparison, under its name
        result[kind.name] = section
    return result


# ---- writing -------------------------------------------------------------------------------------


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _p(value: Any) -> str:
    return "—" if value is None else f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def comparison_markdown(result: Mapping[str, Any]) -> str:
    from .protocols import PROMPT_NOTE, get_protocol
    from .report import paper_value

    described = result.get("protocol")
    protocol = get_protocol(described["name"]) if described else None
    lines = [f"# Comparison of {len(result['runs'])} runs ({result['kind']})", ""]
    lines += [
        f"- **Data:** config `{result['data'][0]}`, sources / commit `{result['data'][1]}`",
        f"- **Protocol:** {json.dumps(result['protocol_identity'], sort_keys=True)}",
    ]
    if protocol:
        lines.append(f"- **Prompt wording:** {PROMPT_NOTE}")
    lines += ["", "## Runs", ""]
    sizes = [(run["label"], run.get("rows")) for run in result["runs"]]
    if len({n for _, n in sizes if n is not None}) > 1:  # e.g. one run with --limit
        counts = ", ".join(f"{label} {n:,}" for label, n in sizes if n is not None)
        lines += [
            f"> **The runs cover different rows** ({counts}): each run's figures below are on its own "
            "rows, not like for like; the paired tests use only the rows both runs answered.",
            "",
        ]
    if protocol:
        for table in protocol.tables:
            lines += [f"### {table.title}", ""]
            lines += _md_table(
                ["Model", *(c.heading for c in table.columns)],
                [
                    [
                        run["label"],
                        *(
                            paper_value(run["metrics"].get(c.metric), c.percent, c.signed)
                            for c in table.columns
                        ),
                    ]
                    for run in result["runs"]
                ],
            )
            lines.append("")
    else:
        lines += _md_table(
            ["run", *result["columns"]],
            [
                [run["label"], *(_num(run["metrics"].get(c)) for c in result["columns"])]
                for run in result["runs"]
            ],
        )
        lines.append("")
    tests = result["tests"]
    lines += ["## Paired tests on the rows both runs answered", ""]
    if tests["skipped"]:
        lines += [f"Without predictions.jsonl, not tested: {', '.join(tests['skipped'])}.", ""]
    if tests["mcnemar"]:
        lines += ["### McNemar's exact test (accuracy; out-of-choice counts as wrong)", ""]
        lines += _md_table(
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
                    _num(t["first_acc"]),
                    _num(t["second_acc"]),
                    str(t["only_first_right"]),
                    str(t["only_second_right"]),
                    _p(t["p_value"]),
                ]
                for t in tests["mcnemar"]
            ],
        )
        lines.append("")
    if tests["bootstrap"]:
        boot = result["bootstrap"]
        lines += [
            "### Paired bootstrap over templates "
            f"(second − first; {boot['resamples']} resamples, seed {boot['seed']})",
            "",
        ]
        lines += _md_table(
            ["first", "second", "metric", "difference", "95% CI", "p"],
            [
                [
                    t["first"],
                    t["second"],
                    f"`{t['metric']}`",
                    _num(t["diff"]),
                    "—" if not t["ci"] else f"[{_num(t['ci'][0])}, {_num(t['ci'][1])}]",
                    _p(t["p_value"]),
                ]
                for t in tests["bootstrap"]
            ],
        )
        lines.append("")
    chi = tests["chi_square"] + ([tests["chi_square_all"]] if tests["chi_square_all"] else [])
    if chi:
        paper = get_eval_kind(str(result["kind"])).chi_square_paper
        lines += [f"### Chi-square test of right / wrong counts among valid answers ({paper})", ""]
        lines += _md_table(
            ["runs", "table (right, wrong)", "χ²", "dof", "p"],
            [
                [
                    " vs ".join(t["runs"]) if "runs" in t else f"{t['first']} vs {t['second']}",
                    "; ".join(f"{a}, {b}" for a, b in t["table"]),
                    _num(t["chi2"], 2),
                    _num(t["dof"]),
                    _p(t["p_value"]),
                ]
                for t in chi
            ],
        )
        lines.append("")
    if result.get("kind") in result:
        lines += get_eval_kind(str(result["kind"])).compare_markdown(result[str(result["kind"])])
    lines += ["p-values are per comparison, not adjusted for the number of comparisons.", ""]
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from .report import japanese_style

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


def is_compare_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a comparison of ours, recognized by compare.json's content."""
    written = files.json_object(folder / COMPARE_JSON)
    return (
        written is not None
        and isinstance(written.get("runs"), list)
        and isinstance(written.get("tests"), dict)
    )


def check_compare_out(out: Path, runs: Sequence[Path]) -> list[Diagnostic]:
    """A comparison replaces its whole folder: only a new or empty folder or an earlier comparison, and
    never one holding a compared run or the working folder."""
    problems = files.check_out_folder(out, is_compare_folder, "comparison")
    taken = taken_with(out, [("a compared run", run) for run in runs])
    if taken and not problems:
        problems.append(
            Diagnostic(
                "EV101",
                f"--out {taken}, and a comparison replaces its whole folder",
                path=str(out),
                hint="give a new or empty folder, or the folder of an earlier comparison",
            )
        )
    return problems


def write_comparison(out: Path, result: Mapping[str, Any]) -> list[Path]:
    """compare.json, compare.md, compare.csv and the chart, and the files of the design's own section
    (``EvalKind.write_compare_files``).

    They replace ``out`` whole and at once (no file of an earlier comparison stays)."""
    out = Path(out)
    runs = [Path(run["folder"]) for run in result.get("runs", [])]

    def refuse() -> None:
        problems = check_compare_out(out, runs)
        if problems:
            raise DiagnosticError(problems)

    result = home_as_tilde(result)  # shared files: no home folder's name in them
    names = [COMPARE_CHART, COMPARE_CSV, COMPARE_MD, COMPARE_JSON]
    with replaced_folder(out, "compare", before=refuse) as staging:
        draw_comparison(staging / COMPARE_CHART, result)
        for name, text in (
            (COMPARE_CSV, comparison_csv(result)),
            (COMPARE_MD, comparison_markdown(result)),
            (COMPARE_JSON, files.dump_json(result)),
        ):
            files.write_atomic(staging / name, text)
        kind_name = str(result.get("kind"))
        if kind_name in result:
            names += get_eval_kind(kind_name).write_compare_files(staging, result[kind_name])
    return [out / name for name in names]
