"""Speed and memory of `jbcompile build`: the bundled benchmark and a JBBQ-scale synthetic corpus.

Each figure is the median of several runs of the real command in a fresh process (start-up, checks,
expansion, parquet, card and manifest included), with the peak resident memory of that process.
Corpora of 61, 122 and 245 templates show how time and memory grow with the number of templates.

    python benchmarks/bench_build.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# BBQ's own generator, as measured on this machine class (DESIGN.md): 31,372 rows in about 18 s.
BBQ_ROWS, BBQ_SECONDS = 31_372, 18.0


def run_once(sources: Path, out: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `jbcompile build` process."""
    command = [sys.executable, "-m", "jbcompile.cli", "build", "--sources", str(sources), "--out", str(out)]
    with tempfile.TemporaryFile() as log:  # a pipe could fill up and stall the build
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            log.seek(0)
            raise SystemExit(f"build failed: {log.read().decode()}")
    return elapsed, usage.ru_maxrss


def measure(label: str, sources: Path, runs: int, work: Path) -> dict:
    out = work / f"build-{label}"
    times, peaks = [], []
    for _ in range(runs):
        seconds, peak = run_once(sources, out)
        times.append(seconds)
        peaks.append(peak)
    manifest = json.loads((out / "manifest.json").read_text())
    rows = sum(manifest["rows"].values())
    full = manifest["rows"].get("full", rows)
    median = statistics.median(times)
    return {
        "corpus": label,
        "templates": max(c["templates"] for c in manifest["configs"].values()),
        "full_rows": full,
        "all_rows": rows,
        "median_s": round(median, 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "full_rows_per_s": round(full / median),
        "peak_rss_mib": round(max(peaks) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results.append(measure("bundled", REPO / "sources", args.runs, work))
        for templates in (61, 122, 245):
            corpus = work / f"synthetic-{templates}"
            write_corpus(corpus, templates)
            results.append(measure(f"synthetic-{templates}", corpus, args.runs, work))
    header = (
        f"{'corpus':<16}{'templates':>10}{'full rows':>11}{'median s':>10}{'range s':>14}"
        f"{'rows/s':>10}{'peak MiB':>10}"
    )
    print(header)
    for r in results:
        spread = f"{r['min_s']:.2f}–{r['max_s']:.2f}"
        print(
            f"{r['corpus']:<16}{r['templates']:>10}{r['full_rows']:>11,}{r['median_s']:>10.2f}{spread:>14}"
            f"{r['full_rows_per_s']:>10,}{r['peak_rss_mib']:>10}"
        )
    small, large = results[1], results[3]
    print(
        f"\nscaling 61 → 245 templates: time ×{large['median_s'] / small['median_s']:.2f}, "
        f"rows ×{large['full_rows'] / small['full_rows']:.2f}, "
        f"memory ×{large['peak_rss_mib'] / small['peak_rss_mib']:.2f}"
    )
    bbq_rate = BBQ_ROWS / BBQ_SECONDS
    print(
        f"JBBQ-scale build: {large['full_rows_per_s']:,} rows/s vs {bbq_rate:,.0f} rows/s for BBQ's pandas "
        f"generator (DESIGN.md's figure for this machine class: {BBQ_ROWS:,} rows in {BBQ_SECONDS:.0f} s) "
        f"= ×{large['full_rows_per_s'] / bbq_rate:.1f}"
    )


if __name__ == "__main__":
    main()
