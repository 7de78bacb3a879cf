"""Every error `eval`, `score` and `compare` print for a bad option or input says what to do: in the
diagnostic's hint (printed after " — "), or in a message that is itself the instruction ("--samples must
be 1 or more"). A refusal that only states what is wrong leaves the user guessing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from jbcompile.cli import app
from typer.testing import CliRunner

# `path:line:col: CODE message — hint`; warnings and notes carry their severity in brackets
ERROR_LINE = re.compile(r"(?:^|\s)(?P<code>[A-Z]{1,3}\d{3}) (?!\[(?:warning|info)\])(?P<rest>.*)")
INSTRUCTION = re.compile(r"\b(must|needs|add|use|give|choose|pass)\b")


def _errors(output: str) -> list[tuple[str, str]]:
    return [(m["code"], m["rest"]) for line in output.splitlines() if (m := ERROR_LINE.search(line))]


def _file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def bad_commands(build_dir: Path, tmp_path: Path) -> dict[str, tuple[str, list[str]]]:
    """What each bad command must be refused with, and the command."""
    run = ["eval", "-m", "no-model", "-d", str(build_dir), "--out", str(tmp_path / "run")]
    csv = str(_file(tmp_path, "predictions.csv", "id,prediction\n1,0\n"))
    unnamed = str(_file(tmp_path, "p.jsonl", '{"pred": 0, "gold": 0}\n'))
    return {
        "unknown backend": ("EV300", [*run, "--backend", "nope"]),
        "unknown scoring": ("EV025", [*run, "--scoring", "nope"]),
        "unknown config": ("EV004", [*run, "--config", "nope"]),
        "unknown setting": ("EV021", [*run, "--setting", "nope"]),
        "unknown task": ("EV020", [*run, "--task", "nope"]),
        "unknown dtype": ("EV053", [*run, "--dtype", "nope"]),
        "negative shots": ("EV023", [*run, "--shots", "-1"]),
        "too many shots": ("EV033", [*run, "--shots", "1000"]),
        "another backend's flag": ("EV308", [*run, "--concurrency", "2"]),
        "no samples": ("EV308", [*run, "--samples", "0"]),
        "unknown kind": ("EV106", ["score", unnamed, "--kind", "nope"]),
        "revision without dataset": ("EV109", ["score", unnamed, "--revision", "v1.0.0"]),
        "a CSV file": ("EV061", ["score", csv]),
        "no example_id to join by": ("EV115", ["score", unnamed, "-d", str(build_dir)]),
        "unknown protocol": ("EV200", [*run, "--protocol", "nope"]),
        "no results.json": ("EV210", ["compare", str(tmp_path), str(tmp_path)]),
    }


def test_every_error_of_a_bad_eval_score_or_compare_says_what_to_do(
    bad_commands: dict[str, tuple[str, list[str]]],
) -> None:
    unexplained = []
    for name, (expected, args) in bad_commands.items():
        result = CliRunner().invoke(app, args)
        errors = _errors(result.output)
        assert result.exit_code != 0 and expected in {code for code, _ in errors}, (name, result.output)
        unexplained += [
            f"{name}: {code} {rest}"
            for code, rest in errors
            if " — " not in rest and not INSTRUCTION.search(rest)
        ]
    assert not unexplained, "errors that do not say what to do:\n" + "\n".join(unexplained)
