"""The commands the README and docs show: every option they use is one the command has, and the README's
`score` example runs as printed (on a fixture build put where it says ``build``)."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from jbcompile.cli import app
from typer.testing import CliRunner

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "compiler").rglob("*.md"))]
_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def shown_commands() -> list[tuple[str, str]]:
    """(file:line, command line) for every ``jbcompile …`` in a code block or an inline code span."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(REPO)
        in_block = False
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith("```"):
                in_block = not in_block
            elif in_block and line.lstrip().startswith("jbcompile "):
                found.append((f"{where}:{number}", re.split(r"\s#\s|\s\s#", line.strip())[0]))
        for span in re.finditer(r"`(jbcompile [^`\n]+)`", text):
            found.append((f"{where}:{text.count(chr(10), 0, span.start()) + 1}", span.group(1)))
    return found


def test_the_docs_show_commands() -> None:
    assert len(shown_commands()) > 100  # the parser still finds them (a format change would hide them all)


def test_every_documented_option_exists() -> None:
    """A renamed or removed option leaves no example behind that would fail with "No such option"."""
    root = typer.main.get_command(app)
    context = click.Context(root)
    wrong = []
    for where, line in shown_commands():
        words = line.split()[1:]
        command: Any = root
        while hasattr(command, "get_command") and words:  # a group (typer's own, not click's class)
            first = words[0].replace("\\|", "|").split("|")[0]  # a table's `lm-eval\|inspect`
            sub = command.get_command(context, first)
            if sub is None:
                break
            command, words = sub, words[1:]
        options = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
        options |= {"--help", "--version"} if command is root else {"--help"}
        unknown = [option for option in _OPTION.findall(" ".join(words)) if option not in options]
        if unknown:
            wrong.append(f"{where}: {', '.join(unknown)} in `{line}`")
    assert not wrong, "\n".join(wrong)


@pytest.fixture
def in_folder(tmp_path: Path):  # type: ignore[no-untyped-def]
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def test_the_readme_score_example_runs(in_folder: Path) -> None:
    """Another harness's predictions scored the way the README shows: its command, as printed."""
    from jbcompile.build import compile_project, write_build
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.project import load_project

    readme = [
        line
        for where, line in shown_commands()
        if where.startswith("README") and line.startswith("jbcompile score ")
    ]
    assert readme, "the README shows no `jbcompile score` example"
    words = shlex.split(readme[0])[1:]
    file_name = words[1]
    column = words[words.index("--prediction-field") + 1]
    fixture = REPO / "tests" / "eval" / "fixtures" / "sources"
    write_build(compile_project(load_project(fixture), checks=False), in_folder / "build")
    rows = load_rows("build", "lite").rows
    lines = [json.dumps({"example_id": row["example_id"], column: 2}) for row in rows]
    (in_folder / file_name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, [*words, "--out", "scored"])
    assert result.exit_code == 0, result.output
    scored = json.loads((in_folder / "scored" / "results.json").read_text(encoding="utf-8"))
    assert scored["source"]["prediction_field"] == column


def test_the_harness_docs_score_one_samples_file_each(tmp_path: Path) -> None:
    """docs/harnesses.md's lm-eval block runs the group (every task of the config) and then `jbcompile
    score` on a glob: over the files lm-eval writes (``samples_<task>_<date>.jsonl``, one per task), each
    glob must name one file, since score reads one (the `_gen` task's file matched `…_basic_*` too)."""
    import glob
    from datetime import datetime

    from jbcompile.designs.bbq.harness import EXPORT
    from jbcompile.export import task_name

    text = (REPO / "docs" / "harnesses.md").read_text(encoding="utf-8")
    block = text.split("## lm-evaluation-harness", 1)[1].split("```", 2)[1]
    group = re.search(r"--tasks (\S+)", block)
    assert group is not None
    date = datetime(2026, 1, 2, 3, 4, 5, 678901).isoformat().replace(":", "-")  # lm-eval's date_id
    model = tmp_path / "MODEL"
    model.mkdir()
    tasks = [task_name(group[1], "lite", s) + gen for s in EXPORT.settings for gen in ("", "_gen")]
    for task in tasks:
        (model / f"samples_{task}_{date}.jsonl").write_text("{}\n", encoding="utf-8")
    scores = [
        shlex.split(line.split("#")[0]) for line in block.splitlines() if line.startswith("jbcompile score")
    ]
    assert scores
    scored = set()
    for words in scores:
        (pattern,) = [w for w in words[2:] if not w.startswith("-")]
        matched = glob.glob(str(tmp_path / pattern.removeprefix("results/")))
        assert len(matched) == 1, (pattern, sorted(Path(m).name for m in matched))
        scored |= set(matched)
    assert len(scored) == len(scores)
