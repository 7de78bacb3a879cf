"""Time and peak memory of `jbcompile audit BUILD` on a build of about a million rows.

The goal (issue 22): the shortcut audit of a 1M-row build takes under a minute on two cores. This script
compiles a synthetic corpus once (bench_large_build.py's wide bbq templates, 9,216 `full` rows each:
109 templates → 1,004,544 `full` rows, plus `lite`), then runs `jbcompile audit` on the build folder in
fresh processes and prints the median, range and CPU seconds of several runs, and the median peak RSS.
The audit exits 1 when a probe is above its bar (the synthetic templates all share one mention order,
so it does); that is not a failure here.

Run it with a Python that has scikit-learn installed, or the context-free probe does not run (the audit
says so, and the time then leaves the model out).

    python benchmarks/bench_audit.py [--templates 109] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_large_build import write_wide_corpus  # noqa: E402
from measure import jbcompile_process  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--templates", type=int, default=109, help="Wide templates (9,216 full rows each).")
    parser.add_argument("--fillers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import sklearn  # noqa: F401

        model = "with the context-free model"
    except ImportError:
        model = "WITHOUT the context-free model (scikit-learn is not installed)"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_wide_corpus(work / "sources", args.templates, args.fillers)
        build = work / "build"
        seconds, _, _ = jbcompile_process(
            ["build", "--sources", str(work / "sources"), "--out", str(build), "--lang", "en"]
        )
        rows = json.loads((build / "manifest.json").read_text(encoding="utf-8"))["rows"]
        print(
            f"build of {sum(rows.values()):,} rows ({', '.join(f'{k} {v:,}' for k, v in rows.items())}): "
            f"{seconds:.1f} s (audit included)"
        )
        times, cpu, peaks = [], [], []
        for _ in range(args.runs):
            elapsed, peak, used = jbcompile_process(["audit", str(build), "--format", "json"], ok=(0, 1))
            times.append(elapsed)
            cpu.append(used)
            peaks.append(peak)
        print(
            f"audit {model}: median {statistics.median(times):.1f} s "
            f"(range {min(times):.1f}–{max(times):.1f} s over {args.runs} runs), "
            f"cpu {statistics.median(cpu):.1f} s, peak {statistics.median(peaks) / 1024:,.0f} MiB"
        )


if __name__ == "__main__":
    main()
