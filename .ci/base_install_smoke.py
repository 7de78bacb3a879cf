"""What a plain ``pip install jbcompile`` (no extra) must do: start a benchmark, check it, build it, score
two prediction files of another harness's format and compare them — and, for each command that needs an
extra, stop with CL008 naming it (never a traceback).

Run with the interpreter under test: ``.ci/run`` runs it in a fresh venv holding the base install alone;
tests/test_base_install.py runs it with the optional packages made unimportable, and in that venv when
``JBCOMPILE_BASE_VENV`` names it. Standard library and jbcompile's base dependencies only.

    python .ci/base_install_smoke.py WORK_FOLDER
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# command arguments → the extra its CL008 must name
NEEDS_AN_EXTRA: dict[tuple[str, ...], str] = {
    ("eval", "--model", "some-model", "--dataset", "build", "--shots", "0"): "eval",
    ("eval", "--model", "m", "--dataset", "build", "--shots", "0", "--backend", "vllm"): "vllm",
    ("eval", "--model", "m", "--dataset", "build", "--shots", "0", "--backend", "openai"): "api",
    ("eval", "--model", "m", "--dataset", "build", "--shots", "0", "--backend", "anthropic"): "api",
    ("translate", "--sources", "bench/sources"): "translate",  # after an English-only question is added
}


def jbcompile(work: Path, *args: str, expect: int = 0) -> str:
    """Run ``python -m jbcompile ARGS`` in ``work``; its output, after checking the exit code and that
    no traceback was printed."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DEEPL_AUTH_KEY": "not-used:fx", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "jbcompile", *args], cwd=work, env=env, capture_output=True, text=True
    )
    output = done.stdout + done.stderr
    if done.returncode != expect or "Traceback" in output:
        raise SystemExit(f"jbcompile {' '.join(args)}: exit {done.returncode}, expected {expect}\n{output}")
    print(f"ok  jbcompile {' '.join(args)}")
    return output


def predictions(build: Path, out: Path, pick) -> Path:
    """The build's lite rows with a ``prediction`` column, as another harness would write them."""
    import pyarrow.parquet as pq

    rows = pq.read_table(next((build / "data" / "lite").glob("*.parquet"))).to_pylist()
    with out.open("w", encoding="utf-8") as sink:
        for index, row in enumerate(rows):
            sink.write(json.dumps({**row, "prediction": pick(index, row)}, ensure_ascii=False) + "\n")
    return out


def english_only(sources: Path) -> None:
    """Give the starter template's negative question in English alone: something for translate to do."""
    template = next((sources / "templates").rglob("*.yaml"))
    lines = template.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("negative:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at] = indent + "negative: {text: {en: Who was slow to learn it?}, answer: NAME2}\n"
    template.write_text("".join(lines), encoding="utf-8")


def installed(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def main(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    jbcompile(work, "init", "bench")
    jbcompile(work, "check", "--sources", "bench/sources")
    jbcompile(work, "build", "--sources", "bench/sources", "--out", "build")
    right = predictions(work / "build", work / "right.jsonl", lambda i, row: row["label"])
    mixed = predictions(work / "build", work / "mixed.jsonl", lambda i, row: (row["label"] + i % 2) % 3)
    for name, path in (("a", right), ("b", mixed)):
        jbcompile(
            work, "score", path.name, "--prediction-field", "prediction", "--out", name, "--bootstrap", "20"
        )
        assert json.loads((work / name / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]
    assert (
        json.loads((work / "a" / "results.json").read_text(encoding="utf-8"))["metrics"]["overall"]["acc"]
        == 1
    )
    compared = jbcompile(work, "compare", "a", "b", "--out", "compared", "--bootstrap", "20")
    assert (work / "compared" / "compare.md").is_file(), compared
    charts = installed("matplotlib")  # without it: no chart, a note in the output and in report.md
    assert charts or "CL008" in compared and "jbcompile[eval]" in compared, compared
    assert (work / "a" / "charts").is_dir() == charts == (work / "compared" / "charts").is_dir()
    assert charts or "Not drawn: matplotlib is not installed" in (work / "a" / "report.md").read_text("utf-8")
    english_only(work / "bench" / "sources")
    for args, extra in NEEDS_AN_EXTRA.items():
        output = jbcompile(work, *args, expect=2)
        if "CL008" not in output or f"jbcompile[{extra}]" not in output:
            raise SystemExit(f"jbcompile {' '.join(args)} does not name the {extra} extra:\n{output}")
    print("the base install builds, checks, scores and compares; every extra is named where it is needed")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
