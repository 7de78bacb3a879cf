"""Speed and memory of `jbcompile build`: the bundled benchmark and a JBBQ-scale synthetic corpus.

Each figure is the median of several runs of the real command in a fresh process (start-up, checks,
expansion, parquet, card and manifest included), with the median peak resident memory of that process.
Corpora of 61, 122 and 245 templates show how time and memory grow with the number of templates. With
`--compiler`, an older checkout's compiler runs beside this one, in alternating runs.

    python benchmarks/bench_build.py [--runs 5] [--compiler OLD/compiler]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import compare  # noqa: E402
from synthetic import write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# BBQ's own generator, as measured on this machine class (DESIGN.md): 31,372 rows in about 18 s.
BBQ_ROWS, BBQ_SECONDS = 31_372, 18.0


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


if __name__ == "__main__":
    main()
