"""What verifying a build against its manifest costs `eval` (issue 23): the sha256 of each data file
of a config, against the rest of loading it (parquet → Python rows), on a real build.

Eval reads each data file once, hashes those bytes and parses them from memory
(`publish.buildfolder.verified_table`), so no digest cache is kept: a cache could save only the hash,
and could only be as right as the file's stat. This prints, per config, the file size, the median time
of the hash, of the parse and of the whole load (`evaluate.dataset.load_rows`), and the hash's share.

    python benchmarks/bench_verify.py [--build FOLDER] [--runs 5]

Without --build it builds the bundled benchmark into a temporary folder first.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path


def median_seconds(action, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(build: Path, runs: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.publish.buildfolder import open_build

    folder = open_build(build)
    print(f"{'config':<14}{'MB':>8}{'hash s':>10}{'parse s':>10}{'load_rows s':>13}{'hash share':>12}")
    for config in folder.rows:
        data = b"".join((build / name).read_bytes() for name in folder.data_files(config))
        hashing = median_seconds(lambda data=data: hashlib.sha256(data).hexdigest(), runs)
        parsing = median_seconds(lambda data=data: pq.read_table(pa.BufferReader(data)).to_pylist(), runs)
        loading = median_seconds(lambda config=config: load_rows(str(build), config), runs)
        print(
            f"{config:<14}{len(data) / 1e6:>8.2f}{hashing:>10.4f}{parsing:>10.3f}{loading:>13.3f}"
            f"{hashing / loading:>12.2%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--build", type=Path, help="A build folder (default: the bundled benchmark, built now)."
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.build:
        report(args.build, args.runs)
        return
    from jbcompile.build import build_folder
    from jbcompile.paths import bundled_sources
    from jbcompile.project import load_project

    with tempfile.TemporaryDirectory(prefix="bench-verify-") as workdir:
        build = Path(workdir) / "build"
        build_folder(load_project(bundled_sources()), build, checks=False)
        report(build, args.runs)


if __name__ == "__main__":
    main()
