"""Writing a comparison: compare.json, compare.md, compare.csv, the chart and the design's own files,
replacing the output folder whole — only a new or empty folder or an earlier comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...diagnostics import Diagnostic
from ...outputs import Output, overlaps, refuse, writing
from ...paths import home_as_tilde
from ...redaction import redact_data
from .. import predictions as files
from ..registered import get_eval_kind
from ..report import charts_skipped
from .render import comparison_csv, comparison_markdown, draw_comparison

COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"
COMPARE_CSV = "compare.csv"
COMPARE_CHART = "charts/compare.png"


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
    never a compared run, one holding one or one inside one, nor the working folder."""
    return overlaps(_outputs(out), _inputs(runs)) or files.check_out_folder(
        out, is_compare_folder, "comparison"
    )


def _outputs(out: Path) -> list[Output]:
    return [Output("--out", out, whole=True)]


def _inputs(runs: Sequence[Path]) -> list[tuple[str, Path]]:
    return [("a compared run", run) for run in runs]


def write_comparison(out: Path, result: Mapping[str, Any]) -> list[Path]:
    """compare.json, compare.md, compare.csv and the chart, and the files of the design's own section
    (``EvalKind.write_compare_files``).

    They replace ``out`` whole and at once (no file of an earlier comparison stays), under its claim."""
    out = Path(out)
    runs = [Path(run["folder"]) for run in result.get("runs", [])]
    result = home_as_tilde(result)  # shared files: no home folder's name in them
    drawn = charts_skipped() is None  # without matplotlib: everything but the chart
    names = [COMPARE_CHART] if drawn else []
    names += [COMPARE_CSV, COMPARE_MD, COMPARE_JSON]
    with writing(_outputs(out), _inputs(runs), "compare") as claims:
        refuse(check_compare_out(out, runs))  # judged once the folder is held
        with claims[out].replaced_folder("compare") as staging:
            if drawn:
                draw_comparison(staging / COMPARE_CHART, result)
            markdown = comparison_markdown(result)
            if drawn:  # the chart beside it, linked where a reader of compare.md looks
                markdown += f"\n![The runs' headline figures side by side]({COMPARE_CHART})\n"
            for name, text in (
                (COMPARE_CSV, comparison_csv(result)),
                (COMPARE_MD, markdown),
                (COMPARE_JSON, files.dump_json(result)),
            ):
                files.write_atomic(staging / name, redact_data(text))
            kind_name = str(result.get("kind"))
            if kind_name in result:
                names += get_eval_kind(kind_name).write_compare_files(staging, result[kind_name])
    return [out / name for name in names]
