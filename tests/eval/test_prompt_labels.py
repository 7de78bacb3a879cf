"""A prompt shows the options with the labels its answers are read by (EV015), and nothing hidden (F005).

A `--prompt-file` that numbers the options from 1 where replies and log-probabilities are read as 0, 1, 2
would score every answer as the option beside the one the model chose, and still exit 0. The labels a
prompt shows are read from the rendered prompt; a prompt whose labels cannot be told passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.designs import get_design
from jbcompile.diagnostics import DiagnosticError
from jbcompile.evaluate.dataset import load_rows
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.promptfiles import bundled_prompt_names, load_prompt_template
from jbcompile.evaluate.prompting import PromptItem, check_shown_labels, shown_option_labels
from typer.testing import CliRunner

from tests.designs.conftest import kinds_build as _kinds_build

kinds_build = _kinds_build  # the sobaco and jubaku configs of tests/designs

THREE = ["七十代の男性", "二十代の男性", "判断できない"]


@pytest.mark.parametrize(
    ("text", "options", "labels"),
    [
        ("### 選択肢\n0. 七十代の男性\n1. 二十代の男性\n2. 判断できない\n### 回答\n", THREE, ["0", "1", "2"]),
        ("### 選択肢\n1. 七十代の男性\n2. 二十代の男性\n3. 判断できない\n### 回答\n", THREE, ["1", "2", "3"]),
        ("選択肢: 0: 七十代の男性 1: 二十代の男性 2: 判断できない \n回答:", THREE, ["0", "1", "2"]),
        ("(Ａ) 七十代の男性 (Ｂ) 二十代の男性 (Ｃ) 判断できない", THREE, ["A", "B", "C"]),
        ("選択肢１：七十代の男性\n選択肢２：二十代の男性\n選択肢３：判断できない", THREE, ["1", "2", "3"]),
        ("### 応答A\nそうですね。\nでも…\n### 応答B\n違います。\n### 回答",
         ["そうですね。\nでも…", "違います。"], ["A", "B"]),
        # the options' own digits are not labels; a shot's options earlier in the prompt are not looked at
        ("1. 20代の人\n2. 30代の人\n3. 不明\n### 回答\n1\n\n0. 40代の人\n1. 50代の人\n2. 不明\n",
         ["40代の人", "50代の人", "不明"], ["0", "1", "2"]),
        # no label to tell: bullets, a bare list, an option not shown
        ("・七十代の男性\n・二十代の男性\n・判断できない", THREE, None),
        ("選択肢: 七十代の男性、二十代の男性、判断できない", THREE, None),
        ("0. 七十代の男性\n1. 二十代の男性\n", THREE, None),
    ],
)  # fmt: skip
def test_the_labels_a_prompt_shows(text: str, options: list[str], labels: list[str] | None) -> None:
    assert shown_option_labels(text, options) == labels


def test_a_prompt_numbered_from_one_is_refused_and_says_what_each_answer_would_become() -> None:
    items = [PromptItem("r1", "1. 甲\n2. 乙\n3. 不明\n### 回答\n", ("甲", "乙", "不明"))]
    with pytest.raises(DiagnosticError) as caught:
        check_shown_labels(items, ("0", "1", "2"), "mine.j2")
    (problem,) = caught.value.diagnostics
    assert problem.code == "EV015" and "1, 2, 3" in problem.message and "0, 1, 2" in problem.message
    assert "the option shown as '2'" in problem.message and "loop.index0" in (problem.hint or "")
    check_shown_labels(items, ("1", "2", "3"), "mine.j2")  # labels that agree pass
    untold = [PromptItem("r1", "甲、乙、不明のどれ？", ("甲", "乙", "不明"))]
    check_shown_labels(untold, ("0", "1", "2"), "mine.j2")


def _bundled(kind_name: str, build: Path, config: str) -> list[tuple[str, list[PromptItem]]]:
    kind = get_design(kind_name).evaluator()
    rows = load_rows(str(build), config).rows
    prepared = []
    for setting in bundled_prompt_names(kind_name):
        options = EvalOptions(setting=setting, shots=0 if kind_name != "bbq" else 2, scoring="generate")
        template = load_prompt_template(kind_name, setting)
        prepared.append((setting, kind.prepare(rows, options, template).items[:5]))
    return prepared


@pytest.mark.parametrize(
    ("kind_name", "config"), [("bbq", "lite"), ("sobaco", "sobaco"), ("jubaku", "jubaku")]
)
def test_every_bundled_prompt_shows_the_labels_its_answers_are_read_by(
    kind_name: str, config: str, build_dir: Path, kinds_build: Path
) -> None:
    """So the check is no dead letter: on each bundled layout the labels can be told, and they agree."""
    kind = get_design(kind_name).evaluator()
    build = build_dir if kind_name == "bbq" else kinds_build
    for setting, items in _bundled(kind_name, build, config):
        for item in items:
            told = [shown_option_labels(text, item.options) for text in item.shown]
            wanted = list(kind.option_labels[: len(item.options)])
            assert wanted in told and all(t in (None, wanted) for t in told), (setting, told)


def _eval_with_prompt(model: Path, build: Path, folder: Path, prompt: str) -> tuple[int, str, bool]:
    """`jbcompile eval` of 6 rows with ``prompt`` as its --prompt-file: exit code, output, whether the run
    folder exists."""
    (folder / "mine.j2").write_text(prompt, encoding="utf-8")
    out = folder / "run"
    args = ["eval", "--model", str(model), "--dataset", str(build), "--out", str(out), "--quiet",
            "--limit", "6", "--prompt-file", str(folder / "mine.j2")]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert "Traceback" not in result.output
    return result.exit_code, result.output, out.exists()


_OPTIONS_FROM = "{% for option in options %}{{ loop.INDEX }}. {{ option }}\n{% endfor %}答え:"


def test_eval_refuses_a_prompt_file_numbered_from_one_before_anything_runs(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    numbered_from_one = "{{ context }}\n{{ question }}\n" + _OPTIONS_FROM.replace("INDEX", "index")
    code, output, ran = _eval_with_prompt(tiny_model, build_dir, tmp_path, numbered_from_one)
    assert code == 2 and "EV015" in output and not ran, output
    code, output, ran = _eval_with_prompt(
        tiny_model, build_dir, tmp_path, numbered_from_one.replace("loop.index", "loop.index0")
    )
    assert code == 0, output


def test_eval_refuses_a_prompt_file_with_a_character_no_one_can_see(
    tiny_model: Path, build_dir: Path, tmp_path: Path
) -> None:
    """A bidirectional override in a prompt (or in a layout it includes) changes what the model reads
    while the file looks the same: refused at its line and column, before anything runs."""
    (tmp_path / "part.j2").write_text("{{ question }}\u2066\n", encoding="utf-8")
    prompt = "{{ context }}\n{% include 'part.j2' %}" + _OPTIONS_FROM.replace("INDEX", "index0")
    code, output, ran = _eval_with_prompt(tiny_model, build_dir, tmp_path, prompt)
    assert code == 2 and "part.j2:1:15: F005" in output and "U+2066" in output and not ran, output
    (tmp_path / "part.j2").write_text("{{ question }}\n", encoding="utf-8")
    assert _eval_with_prompt(tiny_model, build_dir, tmp_path, prompt)[0] == 0


@pytest.mark.parametrize("prompt", ["Answer:\n", "{{ setting | default('') }}答え:"])
def test_eval_refuses_a_prompt_file_that_gives_every_row_the_same_prompt(
    tiny_model: Path, build_dir: Path, tmp_path: Path, prompt: str
) -> None:
    """A prompt file that uses none of the row's variables asks every row the same thing: refused before
    anything runs (EV017), not a run of meaningless metrics."""
    code, output, ran = _eval_with_prompt(tiny_model, build_dir, tmp_path, prompt)
    assert code == 2 and "EV017" in output and "same prompt" in output and not ran, output
    code, output, ran = _eval_with_prompt(tiny_model, build_dir, tmp_path, "{{ question }}\n" + prompt)
    assert code == 0, output


def test_prompts_that_differ_pass_the_check() -> None:
    from jbcompile.evaluate.prompting import check_prompts_differ

    check_prompts_differ([PromptItem("a", "same", ("x",))], "one row")  # a single row: nothing to compare
    check_prompts_differ([PromptItem("a", "one", ("x",)), PromptItem("b", "two", ("x",))], "mine.j2")
    with pytest.raises(DiagnosticError):
        check_prompts_differ([PromptItem("a", "one", ("x",)), PromptItem("b", "one", ("y",))], "mine.j2")
