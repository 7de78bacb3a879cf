"""Speed and memory of `jbcompile build`: the bundled benchmark and a JBBQ-scale synthetic corpus.

Each figure is the median of several runs of the real command in a fresh process (start-up, checks,
expansion, parquet, card and manifest included), with the median peak resident memory of that process.
Corpora of 61, 122 and 245 templates show how time and memory grow with the number of templates. With
`--compiler`, an older checkout's compiler runs beside this one, in alternating runs.

With `--phases`, each run of the JBBQ-scale corpus (245 templates) is also split, in a fresh process, into
where its time goes: start-up and imports, loading the sources, compiling and writing the data files, the
shortcut audit (importing scikit-learn, which it needs, counted apart) and the card and manifest.

    python benchmarks/bench_build.py [--runs 5] [--compiler OLD/compiler] [--phases]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import compare  # noqa: E402
from synthetic import write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# BBQ's own generator, as measured on this machine class (DESIGN.md): 31,372 rows in about 18 s.
BBQ_ROWS, BBQ_SECONDS = 31_372, 18.0


# One build in-process, timed by phase (wall seconds); prints a JSON object.
PHASES = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
import jbcompile.audit as audit
import jbcompile.emit as emit
from jbcompile.build import build_folder
from jbcompile.project import load_project
spent = {"imports_s": time.perf_counter() - t0}
t = time.perf_counter()
import sklearn.feature_extraction.text, sklearn.linear_model, sklearn.model_selection
spent["audit_import_s"] = time.perf_counter() - t
audit_compiled, finish_folder = audit.audit_compiled, emit.finish_folder
def timed(name, function):
    def run(*args, **kwargs):
        t = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
    return run
audit.audit_compiled = timed("audit_s", audit_compiled)
emit.finish_folder = timed("finish_s", finish_folder)
import jbcompile.build as build
build.finish_folder = emit.finish_folder
t = time.perf_counter()
project = load_project(Path(sys.argv[1]), lang="ja")
spent["load_s"] = time.perf_counter() - t
t = time.perf_counter()
build_folder(project, Path(sys.argv[2]))
spent["build_s"] = time.perf_counter() - t
spent["compile_and_write_s"] = spent["build_s"] - spent["finish_s"]
spent["card_and_manifest_s"] = spent["finish_s"] - spent["audit_s"]
spent["total_s"] = time.perf_counter() - t0
print(json.dumps(spent))
"""


def phases(sources: Path, out: Path, runs: int) -> dict[str, float]:
    """Median wall seconds of each phase of a build, over ``runs`` fresh processes."""
    found: list[dict[str, float]] = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", PHASES, str(sources), str(out)], check=True, capture_output=True, text=True
        )
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {name: statistics.median(run[name] for run in found) for name in found[0]}


def measure(
    label: str, sources: Path, runs: int, work: Path, compilers: dict[str, Path | None]
) -> list[dict]:
    results = compare(sources, work, compilers, runs)
    manifest = json.loads((work / "build-this" / "manifest.json").read_text())
    rows = sum(manifest["rows"].values())
    full = manifest["rows"].get("full", rows)
    return [
        {
            "corpus": label,
            "compiler": name,
            "templates": max(c["templates"] for c in manifest["configs"].values()),
            "full_rows": full,
            "all_rows": rows,
            **r,
            "full_rows_per_s": round(full / r["median_s"]),
        }
        for name, r in results.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compiler", type=Path, help="Also run this compiler/ folder's code, side by side.")
    parser.add_argument("--phases", action="store_true", help="Also split the JBBQ-scale build into phases.")
    args = parser.parse_args()
    compilers: dict[str, Path | None] = {"this": None}
    if args.compiler is not None:
        compilers["other"] = args.compiler
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        results += measure("bundled", REPO / "sources", args.runs, work, compilers)
        for templates in (61, 122, 245):
            corpus = work / f"synthetic-{templates}"
            write_corpus(corpus, templates)
            results += measure(f"synthetic-{templates}", corpus, args.runs, work, compilers)
        split = phases(work / "synthetic-245", work / "build-phases", args.runs) if args.phases else None
    header = (
        f"{'corpus':<16}{'compiler':>9}{'templates':>10}{'full rows':>11}{'median s':>10}{'range s':>14}"
        f"{'cpu s':>8}{'rows/s':>10}{'peak MiB':>10}"
    )
    print(header)
    for r in results:
        spread = f"{r['min_s']:.2f}–{r['max_s']:.2f}"
        print(
            f"{r['corpus']:<16}{r['compiler']:>9}{r['templates']:>10}{r['full_rows']:>11,}{r['median_s']:>10.2f}"
            f"{spread:>14}{r['cpu_s']:>8.2f}{r['full_rows_per_s']:>10,}{r['peak_mib']:>10}"
        )
    this = [r for r in results if r["compiler"] == "this"]
    small, large = this[1], this[3]
    print(
        f"\nscaling 61 → 245 templates: time ×{large['median_s'] / small['median_s']:.2f}, "
        f"rows ×{large['full_rows'] / small['full_rows']:.2f}, "
        f"memory ×{large['peak_mib'] / small['peak_mib']:.2f}"
    )
    bbq_rate = BBQ_ROWS / BBQ_SECONDS
    print(
        f"JBBQ-scale build: {large['full_rows_per_s']:,} rows/s vs {bbq_rate:,.0f} rows/s for BBQ's pandas "
        f"generator (DESIGN.md's figure for this machine class: {BBQ_ROWS:,} rows in {BBQ_SECONDS:.0f} s) "
        f"= ×{large['full_rows_per_s'] / bbq_rate:.1f}"
    )
    if split is not None:
        total = split["total_s"]
        audit = split["audit_s"] + split["audit_import_s"]
        print(
            f"\nJBBQ-scale build by phase (median of {args.runs} in-process runs, wall s; total {total:.2f}):"
        )
        for name, value in split.items():
            if name not in ("total_s", "finish_s", "build_s"):
                print(f"  {name:<22}{value:8.2f}  {value / total:6.1%}")
        rate = large["full_rows"] / (total - audit)
        print(
            f"  the shortcut audit (with its scikit-learn import): {audit:.2f} s = {audit / total:.1%}; "
            f"without it the build would make {rate:,.0f} rows/s = ×{rate / bbq_rate:.1f} BBQ's generator"
        )


if __name__ == "__main__":
    main()
