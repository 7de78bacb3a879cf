"""Speed and memory of `jbcompile build`: the bundled benchmark and a JBBQ-scale synthetic corpus.

Each figure is the median of several runs of the real command in a fresh process (start-up, checks,
expansion, parquet, card and manifest included), with the median peak resident memory of that process.
Corpora of 61, 122 and 245 templates show how time and memory grow with the number of templates. With
`--compiler`, an older checkout's compiler runs beside this one, in alternating runs.

With `--phases`, each run of the JBBQ-scale corpus (245 templates) is also split, in a fresh process, into
where its time goes: start-up and imports, loading the sources, compiling and writing the data files
(with the lint rules and the audit's scikit-learn import beside it, in the build's side process), the
shortcut audit (whose model fits in that process), and the card and manifest.

With `--bbq-generator DIR` (a checkout of github.com/nyu-mll/BBQ), BBQ's own generator
(`generate_from_template_all_categories.py`, pandas) runs beside the JBBQ-scale build: each round runs
both, in fresh processes, one after the other (which goes first alternates), and compares their rows/s;
the figure is the median of the rounds' ratios. The generator runs on a copy of what it reads (its
templates folder, its script and helpers) in a temporary folder laid out as it expects, and its rows are
counted in the files it writes. Without a checkout, the comparison falls back on a fixed figure for the
generator from DESIGN.md, and says so.

    python benchmarks/bench_build.py [--runs 5] [--compiler OLD/compiler] [--phases]
        [--bbq-generator BBQ] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import build_process, compare, timed_process  # noqa: E402
from synthetic import write_corpus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# The fallback without --bbq-generator: BBQ's generator as DESIGN.md measured it, 31,372 rows in about 18 s.
BBQ_ROWS, BBQ_SECONDS = 31_372, 18.0
BBQ_SCRIPT = "generate_from_template_all_categories.py"


# One build in-process, timed by phase (wall seconds); prints a JSON object.
PHASES = """
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
import jbcompile.audit.run as audit
import jbcompile.emit as emit
from jbcompile.build import build_folder
from jbcompile.project import load_project
spent = {"imports_s": time.perf_counter() - t0}
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


def bbq_workspace(checkout: Path, work: Path) -> Path:
    """A folder to run BBQ's generator in: it reads ``BBQ_full/templates/`` and writes ``BBQ_full/data/``
    relative to its working folder, and imports its helpers as the package ``BBQ_Full`` (the two
    spellings differ in case), so the copy is laid out that way. Its code is copied, not changed."""
    checkout = checkout.resolve()
    missing = [name for name in (BBQ_SCRIPT, "utils.py", "templates") if not (checkout / name).exists()]
    if missing:
        raise SystemExit(f"{checkout} is not a checkout of BBQ (missing {', '.join(missing)})")
    root = work / "bbq-generator"
    folder = root / "BBQ_full"
    shutil.copytree(checkout / "templates", folder / "templates")
    for name in (BBQ_SCRIPT, "utils.py"):
        shutil.copy2(checkout / name, folder / name)
    (folder / "data").mkdir()
    if not (root / "BBQ_Full").exists():  # a case-insensitive file system has it already
        (root / "BBQ_Full").symlink_to("BBQ_full", target_is_directory=True)
    return root


def run_bbq_generator(root: Path) -> tuple[float, int, float]:
    """Wall seconds, rows written and CPU seconds of one run of BBQ's generator in ``root``."""
    data = root / "BBQ_full" / "data"
    for old in data.glob("*.jsonl"):
        old.unlink()
    env = dict(os.environ, PYTHONPATH=str(root))
    seconds, _, cpu = timed_process(
        [sys.executable, str(root / "BBQ_full" / BBQ_SCRIPT)], "BBQ's generator", env=env, cwd=root
    )
    rows = 0
    for path in data.glob("*.jsonl"):
        with path.open("rb") as lines:
            rows += sum(1 for line in lines if line.strip())
    if not rows:
        raise SystemExit(f"BBQ's generator wrote no rows into {data}")
    return seconds, rows, cpu


def side_by_side(generator: Path, corpus: Path, work: Path, rounds: int) -> list[dict[str, float]]:
    """Rounds of BBQ's generator and the JBBQ-scale build, each in a fresh process, the first to run
    alternating; per round the two rows/s and their ratio."""
    found = []
    for index in range(rounds):
        order = ("bbq", "ours") if index % 2 == 0 else ("ours", "bbq")
        run: dict[str, float] = {}
        for who in order:
            if who == "bbq":
                run["bbq_s"], rows, run["bbq_cpu_s"] = run_bbq_generator(generator)
                run["bbq_rows"] = rows
            else:
                out = work / "build-side-by-side"
                run["ours_s"], _, run["ours_cpu_s"] = build_process(corpus, out)
                run["ours_rows"] = json.loads((out / "manifest.json").read_text())["rows"]["full"]
        run["bbq_rows_per_s"] = run["bbq_rows"] / run["bbq_s"]
        run["ours_rows_per_s"] = run["ours_rows"] / run["ours_s"]
        run["ratio"] = run["ours_rows_per_s"] / run["bbq_rows_per_s"]
        # rows per CPU second: steadier where other jobs share the machine (the generator runs long, so
        # a busy machine stretches its wall time more than a build's)
        run["cpu_ratio"] = (run["ours_rows"] / run["ours_cpu_s"]) / (run["bbq_rows"] / run["bbq_cpu_s"])
        found.append(run)
    return found


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
    parser.add_argument(
        "--bbq-generator", type=Path, metavar="DIR", help="A checkout of BBQ: run its generator side by side."
    )
    parser.add_argument("--rounds", type=int, default=3, help="Rounds of the side-by-side run (default 3).")
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
        rounds = None
        if args.bbq_generator is not None:
            generator = bbq_workspace(args.bbq_generator, work)
            rounds = side_by_side(generator, work / "synthetic-245", work, args.rounds)
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
    if rounds is None:
        bbq_rate = BBQ_ROWS / BBQ_SECONDS
        print(
            f"JBBQ-scale build: {large['full_rows_per_s']:,} rows/s vs {bbq_rate:,.0f} rows/s for BBQ's "
            f"pandas generator — NOT measured here: DESIGN.md's fixed figure ({BBQ_ROWS:,} rows in "
            f"{BBQ_SECONDS:.0f} s); give --bbq-generator DIR to run it side by side "
            f"= ×{large['full_rows_per_s'] / bbq_rate:.1f}"
        )
    else:
        print(f"\nSide by side with BBQ's generator ({len(rounds)} rounds, fresh processes, alternating):")
        print(
            f"{'round':>6}{'BBQ rows':>10}{'BBQ s':>8}{'BBQ rows/s':>12}{'our rows':>10}{'our s':>8}"
            f"{'our rows/s':>12}{'ratio':>8}{'CPU ratio':>11}"
        )
        for number, run in enumerate(rounds, 1):
            print(
                f"{number:>6}{run['bbq_rows']:>10,}{run['bbq_s']:>8.2f}{run['bbq_rows_per_s']:>12,.0f}"
                f"{run['ours_rows']:>10,}{run['ours_s']:>8.2f}{run['ours_rows_per_s']:>12,.0f}"
                f"{run['ratio']:>8.1f}{run['cpu_ratio']:>11.1f}"
            )
        bbq_rate = statistics.median(run["bbq_rows_per_s"] for run in rounds)
        print(
            f"median: BBQ's generator {bbq_rate:,.0f} rows/s, the JBBQ-scale build "
            f"{statistics.median(run['ours_rows_per_s'] for run in rounds):,.0f} rows/s, "
            f"ratio ×{statistics.median(run['ratio'] for run in rounds):.1f}; per CPU second "
            f"×{statistics.median(run['cpu_ratio'] for run in rounds):.1f} "
            f"(CPU s: BBQ {statistics.median(run['bbq_cpu_s'] for run in rounds):.2f}, "
            f"ours {statistics.median(run['ours_cpu_s'] for run in rounds):.2f}, the build's lint rules "
            "in a second process included)"
        )
    if split is not None:
        total = split["total_s"]
        audit = split["audit_s"]
        print(
            f"\nJBBQ-scale build by phase (median of {args.runs} in-process runs, wall s; total {total:.2f}):"
        )
        for name, value in split.items():
            if name not in ("total_s", "finish_s", "build_s"):
                print(f"  {name:<22}{value:8.2f}  {value / total:6.1%}")
        rate = large["full_rows"] / (total - audit)
        print(
            f"  the shortcut audit: {audit:.2f} s = {audit / total:.1%}; "
            f"without it the build would make {rate:,.0f} rows/s = ×{rate / bbq_rate:.1f} BBQ's generator"
            + ("" if rounds else " (DESIGN.md's fixed figure)")
        )


if __name__ == "__main__":
    main()
