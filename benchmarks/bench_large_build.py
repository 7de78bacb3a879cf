"""Peak memory and time of `jbcompile build` on large benchmarks (hundreds of thousands to millions of rows).

Imported BBQ templates keep every filler and every lexical alternative, so their `full` config is far
larger than the bundled benchmark's. This script builds synthetic corpora of wide templates (9,216 `full`
rows per template with 8 fillers per group: 60 templates → 552,960 rows, 240 → 2,211,840), or a sources
folder you pass (e.g. `jbcompile import bbq-templates` output), each in a fresh process, and prints the
medians of several runs of wall time and peak RSS. With `--compiler`, an older checkout's compiler runs
beside this one, in alternating runs, and both are printed side by side: since builds stream their rows,
the peak should stay flat as the rows grow.

    python benchmarks/bench_large_build.py [--templates 60,240] [--runs 3] [--format parquet,jsonl]
        [--sources DIR --lang en] [--compiler OLD/compiler]

(an older compiler: `git archive <commit> compiler | tar -x -C OLD`)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import compare  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sources", type=Path, help="A sources folder to build (default: synthetic).")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--templates", default="60,240", help="Synthetic corpus sizes, in templates.")
    parser.add_argument("--fillers", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--format", default="parquet", help="parquet, or parquet,jsonl")
    parser.add_argument("--compiler", type=Path, help="Also run this compiler/ folder's code, side by side.")
    args = parser.parse_args()
    compilers: dict[str, Path | None] = {"this": None}
    if args.compiler is not None:
        compilers["other"] = args.compiler
    print(
        f"{'corpus':<14}{'full rows':>11}{'compiler':>10}{'median s':>10}{'range s':>14}{'cpu s':>8}"
        f"{'peak MiB':>10}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpora: list[tuple[str, Path]] = []
        if args.sources is not None:
            corpora.append((args.sources.name, args.sources))
        else:
            for templates in (int(n) for n in args.templates.split(",")):
                sources = work / f"wide-{templates}"
                write_wide_corpus(sources, templates, args.fillers)
                corpora.append((f"wide-{templates}", sources))
        for label, sources in corpora:
            results = compare(sources, work, compilers, args.runs, lang=args.lang, formats=args.format)
            manifest = json.loads((work / "build-this" / "manifest.json").read_text(encoding="utf-8"))
            rows = manifest["rows"].get("full", sum(manifest["rows"].values()))
            for name, r in results.items():
                spread = f"{r['min_s']:.1f}–{r['max_s']:.1f}"
                print(
                    f"{label:<14}{rows:>11,}{name:>10}{r['median_s']:>10.1f}{spread:>14}{r['cpu_s']:>8.1f}"
                    f"{r['peak_mib']:>10,}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
