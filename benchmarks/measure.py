"""Run `jbcompile build` in a fresh process and measure it: wall time and peak resident memory.

Shared by bench_build.py and bench_large_build.py. ``compiler`` runs another checkout's code (its
``compiler/`` folder, e.g. one unpacked by ``git archive <commit> compiler | tar -x -C /tmp/old``), so an
older and a newer compiler can be measured side by side on the same corpus, in alternating runs.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_process(
    sources: Path, out: Path, *, lang: str = "ja", formats: str = "parquet", compiler: Path | None = None
) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one `jbcompile build` process and
    the processes it waited for. CPU time hardly moves when other jobs share the machine; wall time does.
    ``out`` (a folder of the benchmark's own) is cleared first: each run is a fresh build, whichever
    dataset was built there before (a build refuses to replace another dataset's folder, B009)."""
    shutil.rmtree(out, ignore_errors=True)
    command = ["build", "--sources", str(sources), "--out", str(out), "--lang", lang, "--format", formats]
    return jbcompile_process(command, compiler=compiler)


def jbcompile_process(
    arguments: list[str], *, compiler: Path | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds of one `jbcompile ARGUMENTS…` process; exits when the
    command ends with a status outside ``ok``."""
    env = dict(os.environ)
    if compiler is not None:
        env["PYTHONPATH"] = str(Path(compiler).resolve())
    return timed_process([sys.executable, "-m", "jbcompile.cli", *arguments], arguments[0], env=env, ok=ok)


def timed_process(
    command: list[str],
    label: str,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    ok: tuple[int, ...] = (0,),
) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system, with the processes it waited for) of
    one process; exits when it ends with a status outside ``ok``."""
    with tempfile.TemporaryFile() as log:  # a pipe could fill up and stall the command
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, env=env, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in ok:
            log.seek(0)
            raise SystemExit(f"{label} failed: {log.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def compare(
    sources: Path, work: Path, compilers: dict[str, Path | None], runs: int, **options: str
) -> dict[str, dict]:
    """Median seconds and median peak MiB of each compiler on one corpus, the compilers taking turns
    (so a busy moment of the machine does not fall on one of them only)."""
    times: dict[str, list[float]] = {name: [] for name in compilers}
    peaks: dict[str, list[int]] = {name: [] for name in compilers}
    cpu: dict[str, list[float]] = {name: [] for name in compilers}
    for _ in range(runs):
        for name, compiler in compilers.items():
            seconds, peak, used = build_process(sources, work / f"build-{name}", compiler=compiler, **options)
            times[name].append(seconds)
            peaks[name].append(peak)
            cpu[name].append(used)
    return {
        name: {
            "median_s": round(statistics.median(times[name]), 2),
            "min_s": round(min(times[name]), 2),
            "max_s": round(max(times[name]), 2),
            "cpu_s": round(statistics.median(cpu[name]), 2),
            "peak_mib": round(statistics.median(peaks[name]) / 1024),
            "max_peak_mib": round(max(peaks[name]) / 1024),
        }
        for name in compilers
    }
