"""A command killed (SIGKILL) at any step of its write leaves what the next run repairs: after it, the
output is the old one or the new one, whole, and nothing of the tool is left behind — no staging folder,
no hidden temporary file among the sources (never an S012), no journal (docs/guarantees.md).

Each case kills a real child at one step (``children.run_cli``): before the commit is journaled (the old
output survives), and at every step after (it is rolled forward). The step lists are those the children
take (``steps=`` logs them); ``test_the_kill_points_are_steps_the_command_takes`` keeps them true.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jbcompile.checks import fix_sources
from jbcompile.cli import app
from jbcompile.outputs import settle
from typer.testing import CliRunner

from .children import run_cli
from .conftest import tree, write_predictions

# (step, occurrence, before/after) → which output survives the kill
FIX_KILLS = [
    (("replace:fsio", 2, "after"), "old"),  # fixing the copy of the sources
    (("journal:commit", 1, "before"), "old"),  # fixed files staged beside theirs, nothing journaled
    (("journal:commit", 1, "after"), "new"),  # journaled, nothing renamed
    (("replace:outputs", 1, "after"), "new"),  # one file of three in place
    (("link:outputs", 3, "after"), "new"),  # two in place, the third set aside
    (("journal:done", 1, "before"), "new"),  # all in place, the old ones still aside
    (("rmtree:outputs", 1, "before"), "new"),  # done; the copy of the sources not yet removed
]
SCORE_KILLS = [
    (("journal:commit", 1, "before"), "old"),  # report, charts and results staged
    (("journal:commit", 1, "after"), "new"),
    (("replace:outputs", 1, "after"), "new"),  # the old charts folder aside, no charts in place
    (("replace:outputs", 2, "after"), "new"),  # new charts, old report.md and results.json
    (("link:outputs", 2, "after"), "new"),  # new report.md, old results.json
    (("journal:done", 1, "before"), "new"),
]


def _check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["check", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(("kill", "survivor"), FIX_KILLS)
def test_check_fix_killed_at_any_step_is_all_or_nothing(
    fixable_sources: Path, tmp_path: Path, kill: tuple[str, int, str], survivor: str
) -> None:
    trees = {"old": tree(fixable_sources)}
    fixed = shutil.copytree(fixable_sources, tmp_path / "reference" / "sources")
    assert fix_sources(fixed).changed_files
    trees["new"] = tree(fixed)
    shutil.rmtree(tmp_path / "reference")
    assert run_cli("check", "--sources", str(fixable_sources), "--fix", kill=kill).returncode == -9
    # The next command that reads the sources — even a plain check — finishes or undoes the commit …
    code, output = _check("--sources", str(fixable_sources))
    assert "S012" not in output and "Traceback" not in output, output
    assert tree(fixable_sources) == trees[survivor]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sources"]
    # … and the next --fix does the rest.
    code, output = _check("--sources", str(fixable_sources), "--fix")
    assert code == 0 and tree(fixable_sources) == trees["new"], output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sources"]


def _score_args(predictions: Path, out: Path, seed: int) -> list[str]:
    return [
        "score", str(predictions), "--out", str(out), "--prediction-field", "prediction",
        "--bootstrap", "20", "--seed", str(seed),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, lite_rows: list[dict]) -> tuple[Path, dict[str, dict]]:
    """A predictions file, and the trees of its scores with seed 0 ("old") and seed 1 ("new")."""
    folder = tmp_path_factory.mktemp("scored")
    predictions = write_predictions(folder / "p.jsonl", lite_rows, 0)
    trees = {}
    for name, seed in (("old", 0), ("new", 1)):
        result = CliRunner().invoke(app, _score_args(predictions, folder / name, seed))
        assert result.exit_code == 0, result.output
        trees[name] = tree(folder / name)
    assert trees["old"] != trees["new"]
    return predictions, trees


@pytest.mark.parametrize(("kill", "survivor"), SCORE_KILLS)
def test_score_killed_at_any_step_leaves_one_whole_run(
    tmp_path: Path, scored: tuple[Path, dict[str, dict]], kill: tuple[str, int, str], survivor: str
) -> None:
    predictions, trees = scored
    out = shutil.copytree(predictions.parent / "old", tmp_path / "out")
    assert run_cli(*_score_args(predictions, out, 1), kill=kill).returncode == -9
    settle(out)  # what the next reader (compare) or writer does first
    assert tree(out) == trees[survivor]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    rerun = CliRunner().invoke(app, _score_args(predictions, out, 1))
    assert rerun.exit_code == 0 and tree(out) == trees["new"], rerun.output  # never refused (EV101)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_killed_first_score_leaves_no_folder_and_the_rerun_writes_it(
    tmp_path: Path, lite_rows: list[dict]
) -> None:
    predictions = write_predictions(tmp_path / "p.jsonl", lite_rows, 0)
    out = tmp_path / "runs" / "out"
    args = [
        "score",
        str(predictions),
        "--out",
        str(out),
        "--prediction-field",
        "prediction",
        "--bootstrap",
        "20",
    ]
    assert run_cli(*args, kill=("journal:commit", 1, "before")).returncode == -9
    assert any(p.name.startswith(".charts.jbcompile-") for p in out.iterdir())  # the staged charts
    result = run_cli(*args)
    assert result.returncode == 0 and "EV101" not in result.stderr, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "charts",
        "predictions.jsonl",
        "report.md",
        "results.json",
    ]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["out"]
    # and a kill before anything was committed, then a reader: no empty folder stays
    shutil.rmtree(tmp_path / "runs")
    assert run_cli(*args, kill=("journal:commit", 1, "before")).returncode == -9
    settle(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]


def test_the_kill_points_are_steps_the_command_takes(
    fixable_sources: Path, tmp_path: Path, lite_rows: list[dict]
) -> None:
    """Every kill point above names a step the command really takes (else its case would test nothing)."""
    log = tmp_path / "fix.steps"
    assert run_cli("check", "--sources", str(fixable_sources), "--fix", steps=log).returncode == 0
    fix_steps = log.read_text().split()
    predictions = write_predictions(tmp_path / "p.jsonl", lite_rows, 0)
    args = ["score", str(predictions), "--out", str(tmp_path / "out"), "--prediction-field", "prediction"]
    assert run_cli(*args).returncode == 0
    log = tmp_path / "score.steps"
    assert run_cli(*args, "--seed", "1", steps=log).returncode == 0
    score_steps = log.read_text().split()
    for steps, kills in ((fix_steps, FIX_KILLS), (score_steps, SCORE_KILLS)):
        for (step, occurrence, _), _ in kills:
            assert steps.count(step) >= occurrence, (step, occurrence, steps)


def test_init_killed_half_way_through_its_commit_is_finished_by_the_next_command(tmp_path: Path) -> None:
    assert run_cli("init", "reference", cwd=tmp_path).returncode == 0
    expected = tree(tmp_path / "reference")
    shutil.rmtree(tmp_path / "reference")
    assert run_cli("init", "reference", cwd=tmp_path, kill=("replace:outputs", 2, "after")).returncode == -9
    assert tree(tmp_path / "reference") != expected  # two files in place, the others still staged
    code, output = _check("--sources", str(tmp_path / "reference" / "sources"))
    assert "S012" not in output and tree(tmp_path / "reference") == expected, output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reference"]
