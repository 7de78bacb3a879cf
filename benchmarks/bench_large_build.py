"""Peak memory of `jbcompile build` on a large imported benchmark (hundreds of thousands of rows).

Imported BBQ templates keep every filler and every lexical alternative, so their `full` config is far
larger than the bundled benchmark's. This script builds a sources folder (by default a synthetic corpus
of wide templates; pass `--sources` for a real import, e.g. `jbcompile import bbq-templates` output) in a
fresh process, with and without the JSONL copies, and prints rows, seconds and the process's peak RSS.

    python benchmarks/bench_large_build.py [--sources DIR --lang en] [--templates 40 --fillers 8]
        [--compiler OTHER/compiler]   # e.g. an older checkout, to compare before/after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HEADER = "# synthetic corpus for bench_large_build.py\n"


def write_wide_corpus(root: Path, templates: int, fillers: int) -> None:
    """English-only bbq templates with many fillers per group and a three-word lexical slot (only
    features every compiler version reads, so older checkouts can build it too)."""
    (root / "vocab").mkdir(parents=True)
    (root / "templates" / "Age").mkdir(parents=True)
    dataset = {
        "name": "wide",
        "pretty_name": "wide synthetic corpus",
        "version": "0.1.0",
        "license": "other",
        "description": "synthetic",
        "terms_of_use": "none",
        "seed": 1,
        "unknown_options": [{"en": f"Unknown {i}"} for i in range(8)],
        "categories": ["Age"],
    }
    (root / "dataset.yaml").write_text(HEADER + yaml.safe_dump(dataset), encoding="utf-8")
    groups = {
        name: {"tag": name, "fillers": [{"text": {"en": f"{name} person {i}"}} for i in range(fillers)]}
        for name in ("old", "young")
    }
    vocab = {"category": "Age", "groups": groups}
    (root / "vocab" / "age.yaml").write_text(HEADER + yaml.safe_dump(vocab), encoding="utf-8")
    for n in range(templates):
        template = {
            "id": f"wide-{n}",
            "category": "Age",
            "origin": "translated",
            "stereotype": {"en": "a stereotype"},
            "stereotyped_groups": ["old"],
            "attested": "synthetic",
            "persons": {
                "NAME1": {"group": "old", "target": True},
                "NAME2": {"group": "young"},
            },
            "words": {"WORD1": [{"en": f"place {n}-{k}"} for k in range(3)]},
            "ambiguous_context": {
                "en": f"Story {n}: a {{{{NAME1}}}} and a {{{{NAME2}}}} met at the {{{{WORD1}}}}."
            },
            "disambiguating_context": {"en": "The {{NAME1}} left early, and the {{NAME2}} stayed to help."},
            "questions": {
                "negative": {"text": {"en": "Who left early?"}, "answer": "NAME1"},
                "non_negative": {"text": {"en": "Who stayed to help?"}, "answer": "NAME2"},
            },
        }
        path = root / "templates" / "Age" / f"wide-{n}.yaml"
        path.write_text(HEADER + yaml.safe_dump(template, allow_unicode=True), encoding="utf-8")


def build_once(sources: Path, out: Path, lang: str, formats: str, compiler: Path | None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `jbcompile build` process."""
    command = [sys.executable, "-m", "jbcompile.cli", "build", "--sources", str(sources), "--out", str(out)]
    command += ["--lang", lang, "--format", formats]
    env = dict(os.environ)
    if compiler is not None:
        env["PYTHONPATH"] = str(compiler.resolve())
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            log.seek(0)
            raise SystemExit(f"build failed: {log.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sources", type=Path, help="A sources folder to build (default: synthetic).")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--templates", type=int, default=40)
    parser.add_argument("--fillers", type=int, default=8)
    parser.add_argument("--compiler", type=Path, help="Run the build with this compiler/ folder's code.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        sources = args.sources
        if sources is None:
            sources = Path(work) / "sources"
            write_wide_corpus(sources, args.templates, args.fillers)
        for formats in ("parquet", "parquet,jsonl"):
            out = Path(work) / f"build-{formats.replace(',', '-')}"
            seconds, peak = build_once(sources, out, args.lang, formats, args.compiler)
            rows = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["rows"]
            print(
                json.dumps(
                    {
                        "formats": formats,
                        "rows": rows,
                        "seconds": round(seconds, 1),
                        "peak_rss_mb": round(peak / 1024),
                    }
                )
            )


if __name__ == "__main__":
    main()
