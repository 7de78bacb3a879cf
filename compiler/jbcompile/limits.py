"""Every limit the tool holds its input to, in one place.

Whatever a user, a release or a server hands the tool is bounded before it is read, parsed or expanded,
so that no input can fill the memory or the disk, or keep a command waiting forever. The bounds are
generous for real benchmarks and far below what would hurt the machine; each one that is met gives a
coded diagnostic naming the file (or template) and the limit.

The table of docs/guarantees.md ("Bounds") is generated from ``LIMITS`` below
(``python -m jbcompile.limits docs/guarantees.md``) and a test holds the two together, so a limit
changed here is changed in the docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

# ---- bytes one file of each kind may hold (read at most this + 1 bytes; see jbcompile.reading) ---------

MAX_SOURCE_FILE_BYTES = 4 * MIB  # a YAML source (dataset, vocab, template, rules, glossary, memory)
MAX_TEMPLATE_CSV_BYTES = 64 * MIB  # a template or vocabulary CSV that an importer reads
MAX_RELEASE_BYTES = (
    1 * GIB
)  # a release's JSON Lines or JSON (import inputs, --compare, --names-from, --dataset)
MAX_PREDICTIONS_BYTES = 2 * GIB  # predictions given to `score`, a run's predictions and requests logs
MAX_RECORD_BYTES = 64 * MIB  # run.json, results.json, manifest.json, croissant.json
MAX_PROMPT_FILE_BYTES = 1 * MIB  # a prompt template (--prompt-file and the files it includes)
MAX_CARD_TEMPLATE_BYTES = 1 * MIB  # a dataset card template (cards/, --cards)
MAX_DOCUMENT_BYTES = 16 * MIB  # a Markdown file the tool reads (a build's README.md card, the sources' .md)
MAX_PROMPT_CHARS = 1_000_000  # one prompt a prompt template renders (far beyond any model's context)
MAX_DATA_FILE_BYTES = (
    4 * GIB
)  # a data file of a build folder (parquet, its JSON Lines copy), a parquet --dataset

# ---- a zip archive (an inspect .eval log), as its end records declare it, before zipfile reads it --------

MAX_ARCHIVE_ENTRIES = 1_000_000  # members (an inspect log: one per sample and epoch, and a few more)
MAX_ARCHIVE_DIRECTORY_BYTES = 256 * MIB  # its central directory (about 100 bytes a member)

# ---- YAML sources, once read (jbcompile.loader) ---------------------------------------------------------

MAX_TEXT_CHARS = 10_000  # one scalar
MAX_DEPTH = 64  # nested mappings and sequences
MAX_NODES = 100_000  # values after alias expansion, per file, beyond those written out in it
MAX_EXPANSION = 10  # … and no more than this many values per value written

# ---- a build (overridable per dataset in dataset.yaml: ``limits: {max_rows: …, max_template_rows: …}``) --

MAX_ROWS = 10_000_000  # rows of every config of a build together
MAX_TEMPLATE_ROWS = 2_000_000  # rows one template contributes, every config together

# ---- an evaluation ----------------------------------------------------------------------------------------

# Few-shot examples per prompt (--shots). A JBBQ example runs to about 250 tokens, so 100 of them make a
# prompt of about 25,000 tokens: more than a model's context holds in most runs, and far past the papers'
# few shots; the draw of the shots searches one level per shot.
MAX_SHOTS = 100


@dataclass(frozen=True)
class Limit:
    name: str  # the constant's name in this module
    unit: str  # "bytes", "characters", "levels", "values", "rows"
    bounds: str  # what it bounds, as the docs say it
    code: str  # the diagnostic a file or template beyond it gets


LIMITS: tuple[Limit, ...] = (
    Limit(
        "MAX_SOURCE_FILE_BYTES",
        "bytes",
        "a YAML source file: dataset.yaml, vocab, templates, rules, the glossary and the translation memory",
        "Y006",
    ),
    Limit(
        "MAX_TEMPLATE_CSV_BYTES",
        "bytes",
        "a CSV file of templates or vocabulary (an `import` of templates)",
        "F001",
    ),
    Limit(
        "MAX_RELEASE_BYTES",
        "bytes",
        "a release's JSON Lines or JSON file: the input of an `import` of a release, `--compare`, "
        "`--names-from`, a `--dataset` file",
        "F001",
    ),
    Limit(
        "MAX_PREDICTIONS_BYTES",
        "bytes",
        "the predictions `score` reads (ours, lm-evaluation-harness or "
        "inspect logs), a run's predictions.jsonl and requests.jsonl",
        "F001",
    ),
    Limit("MAX_RECORD_BYTES", "bytes", "run.json, results.json, manifest.json, croissant.json", "F001"),
    Limit(
        "MAX_PROMPT_FILE_BYTES",
        "bytes",
        "a prompt template (`--prompt-file`, and each file it includes)",
        "F001",
    ),
    Limit("MAX_CARD_TEMPLATE_BYTES", "bytes", "a dataset card template (`cards/`, `--cards`)", "F001"),
    Limit(
        "MAX_DOCUMENT_BYTES",
        "bytes",
        "a build's README.md (the card `publish` reads back; a card template that renders more stops the "
        "build, B005), the sources' README.md and CHANGELOG.md",
        "F001",
    ),
    Limit("MAX_PROMPT_CHARS", "characters", "one prompt a prompt template renders", "EV013"),
    Limit(
        "MAX_DATA_FILE_BYTES",
        "bytes",
        "a data file of a build folder (parquet, its JSON Lines copy), a parquet `--dataset` file, and any "
        "file the tool only hashes (the files of a build folder, the sources' other files)",
        "F001",
    ),
    Limit(
        "MAX_ARCHIVE_ENTRIES",
        "entries",
        "the members a zip archive (an inspect `.eval` log) declares in its end record (zip64 too), "
        "read before its central directory is",
        "F004",
    ),
    Limit(
        "MAX_ARCHIVE_DIRECTORY_BYTES",
        "bytes",
        "the central directory of a zip archive (an inspect `.eval` log), as its end record declares it",
        "F004",
    ),
    Limit("MAX_TEXT_CHARS", "characters", "one value of a YAML source file", "Y010"),
    Limit("MAX_DEPTH", "levels", "nesting of mappings and lists in a YAML source file", "Y008"),
    Limit(
        "MAX_NODES",
        "values",
        "values of a YAML source file once aliases are expanded (beyond those "
        "written out, and at most `MAX_EXPANSION` per value written)",
        "Y007",
    ),
    Limit("MAX_EXPANSION", "values", "values an alias may expand to per value written out", "Y007"),
    Limit(
        "MAX_ROWS",
        "rows",
        "rows of a build, every config together, counted before anything is "
        "expanded (dataset.yaml `limits: {max_rows: …}` raises it)",
        "B008",
    ),
    Limit(
        "MAX_TEMPLATE_ROWS",
        "rows",
        "rows one template contributes, every config together "
        "(dataset.yaml `limits: {max_template_rows: …}` raises it)",
        "B008",
    ),
    Limit("MAX_SHOTS", "shots", "few-shot examples in one prompt (`eval --shots`)", "EV033"),
)


def value_of(limit: Limit) -> int:
    return int(globals()[limit.name])


def shown(value: int, unit: str) -> str:
    """A limit as the docs and the diagnostics write it: ``4 MiB``, ``10,000 characters``."""
    if unit == "bytes":
        for size, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
            if value >= size and value % size == 0:
                return f"{value // size:,} {name}"
        return f"{value:,} bytes"
    return f"{value:,} {unit}"


TABLE_START = "<!-- limits:start (generated by jbcompile.limits.limits_table; do not edit) -->"
TABLE_END = "<!-- limits:end -->"


def limits_table() -> str:
    """The table of docs/guarantees.md: every limit, its value, what it bounds and its code."""
    lines = [TABLE_START, "", "| limit | value | bounds | code |", "|---|---|---|---|"]
    for limit in LIMITS:
        value = shown(value_of(limit), limit.unit)
        lines.append(f"| `{limit.name}` | {value} | {limit.bounds} | {limit.code} |")
    lines += ["", TABLE_END]
    return "\n".join(lines) + "\n"


def update_markdown(path: str) -> bool:
    """Rewrite the generated table of a markdown file in place; True when it changed."""
    from .fsio import rewrite_between

    return rewrite_between(Path(path), TABLE_START, TABLE_END, limits_table())


if __name__ == "__main__":
    import sys

    for target in sys.argv[1:]:
        print(f"{target}: {'updated' if update_markdown(target) else 'up to date'}")
