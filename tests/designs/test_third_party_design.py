"""A design from another distribution plugs in through the ``jbcompile.designs`` entry points alone.

``tests/plugins/toypairs`` is such a distribution: its own package, columns, prompt, card section and
metric. It is installed with pip (offline, into a temporary folder put on ``sys.path``) and then built,
checked, evaluated on a tiny model and scored through the CLI, with no file of jbcompile touched.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "toypairs"
SOURCES = Path(__file__).resolve().parents[1] / "plugins" / "toypairs_sources"


@pytest.fixture(scope="session")
def toypairs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in distribution installed by pip into a folder of its own (built from a copy, so that the
    build leaves nothing in the repository)."""
    work = tmp_path_factory.mktemp("toypairs")
    source, site = work / "src", work / "site"
    shutil.copytree(PLUGIN, source)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "--target", str(site), str(source)],
        check=True,
    )  # fmt: skip
    assert (site / "jbcompile_toypairs-0.1.0.dist-info" / "entry_points.txt").is_file()
    return site


@pytest.fixture
def toypairs(toypairs_site: Path, monkeypatch: pytest.MonkeyPatch):
    """The plug-in visible to this test only: its folder on sys.path, the design registry read afresh."""
    from jbcompile import designs

    monkeypatch.syspath_prepend(str(toypairs_site))
    importlib.invalidate_caches()
    designs.reset_registry()
    yield designs.get_design("toypairs")
    designs.reset_registry()


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    target = tmp_path / "sources"
    shutil.copytree(SOURCES, target)
    return target


def invoke(*args: str) -> tuple[int, str]:
    from jbcompile.cli import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_the_registry_lists_the_plugin_after_the_built_in_designs(toypairs) -> None:
    from jbcompile.designs import design_names, get_kind

    names = design_names()
    assert names[-1] == "toypairs" and names.index("bbq") == 0
    assert get_kind("toypairs").configs[0].name == "toypairs"
    assert toypairs.prompts_dir.is_dir() and toypairs.card_section is not None


def test_without_the_plugin_its_templates_are_an_unknown_kind(sources: Path) -> None:
    code, output = invoke("check", "--sources", str(sources))
    assert code == 2 and "S005" in output and "unknown template kind 'toypairs'" in output


def test_build_and_check_a_benchmark_of_the_plugin_design(toypairs, sources: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    code, output = invoke("check", "--sources", str(sources))
    assert code == 0, output
    out = tmp_path / "build"
    code, output = invoke("build", "--sources", str(sources), "--out", str(out))
    assert code == 0, output
    table = pq.read_table(out / "data" / "toypairs" / "test-00000-of-00001.parquet")
    assert table.column_names == [
        "example_id", "template_id", "category", "context", "statement_a", "statement_b", "order", "label",
    ]  # fmt: skip
    rows = table.to_pylist()
    assert len(rows) == 2 * 3 * 2  # templates × fillers × orders
    assert {row["order"] for row in rows} == {"supported_first", "stereotyped_first"}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "## Columns of `toypairs`" in card and "config_name: toypairs" in card
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["configs"]["toypairs"]["rows"] == 12
    # a design without probes: the audit tested nothing, and says so rather than that every probe passed
    code, output = invoke("audit", str(out))
    assert code == 0 and "no probe ran" in output and "within its bar" not in output, output


def test_the_plugin_verifier_guards_its_invariant(toypairs, sources: Path, tmp_path: Path) -> None:
    """The build runs the design's own verifier: an unbalanced config is refused with its code."""
    from jbcompile_toypairs import compiler

    original = compiler.ToyKind.expand
    compiler.ToyKind.expand = lambda self, t, p: original(self, t, p)[:-1]  # one order row short
    try:
        code, output = invoke("build", "--sources", str(sources), "--out", str(tmp_path / "build"))
    finally:
        compiler.ToyKind.expand = original
    assert code == 2 and "TOY01" in output and not (tmp_path / "build").exists()


@pytest.mark.parametrize(
    ("module", "broken", "command", "part"),
    [
        ("compiler", "raise ImportError('a dependency of the plug-in is missing')\n", "check", "compiler"),
        ("compiler", "def (:\n", "build", "compiler"),
        ("evaluate", "import a_module_nobody_installed\n", "score", "evaluator"),
    ],
)
def test_a_plugin_whose_part_fails_to_import_stops_with_ds001(
    toypairs_site: Path, sources: Path, tmp_path: Path, module: str, broken: str, command: str, part: str
) -> None:
    """The spec imports fine but its compile or evaluator module does not (the parts load lazily): every
    command that asks for the part stops with DS001 naming the design and the failing file, no traceback."""
    import jbcompile

    site = tmp_path / "site"
    shutil.copytree(toypairs_site, site)
    target = site / "jbcompile_toypairs" / f"{module}.py"
    target.write_text(target.read_text(encoding="utf-8") + broken, encoding="utf-8")
    args = {
        "check": ["check", "--sources", str(sources)],
        "build": ["build", "--sources", str(sources), "--out", str(tmp_path / "build")],
        "score": ["score", "--help"],
    }[command]
    path = f"{Path(jbcompile.__file__).parents[1]}{os.pathsep}{site}"
    result = subprocess.run(
        [sys.executable, "-m", "jbcompile", *args],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, cwd=tmp_path,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 2 and "Traceback" not in output, output
    assert f"DS001 the design 'toypairs' (jbcompile_toypairs) cannot load its {part} part" in output
    assert f"{module}.py:" in output and not (tmp_path / "build").exists()


def test_evaluate_and_score_with_the_plugin_prompt_and_metric(
    toypairs, sources: Path, tmp_path: Path
) -> None:
    pytest.importorskip("transformers")
    from jbcompile.evaluate.dataset import load_rows

    from tests.eval.tiny_models import make_tiny_model

    build = tmp_path / "build"
    assert invoke("build", "--sources", str(sources), "--out", str(build))[0] == 0
    rows = load_rows(str(build), "toypairs").rows
    texts = [(toypairs.prompts_dir / "basic.j2").read_text(encoding="utf-8")]
    texts += ["\n".join((row["context"], row["statement_a"], row["statement_b"])) for row in rows]
    model = make_tiny_model(tmp_path / "model", texts, vocab_size=600)

    for scoring in ("logprob", "generate"):
        run = tmp_path / f"run-{scoring}"
        code, output = invoke(
            "eval", "--model", str(model), "--dataset", str(build), "--config", "toypairs",
            "--scoring", scoring, "--out", str(run), "--bootstrap", "20",
        )  # fmt: skip
        assert code == 0, output
        results = json.loads((run / "results.json").read_text(encoding="utf-8"))
        assert results["kind"] == "toypairs"
        overall = results["metrics"]["overall"]
        assert overall["n"] == 12 and set(overall) >= {"acc", "stereotype_rate"}
        predictions = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        assert {p["order"] for p in predictions} == {"supported_first", "stereotyped_first"}
        # the prompt is the plug-in's own template
        source = (toypairs.prompts_dir / "basic.j2").read_text(encoding="utf-8")
        settings = json.loads((run / "run.json").read_text(encoding="utf-8"))
        assert settings["template_sha256"] == hashlib.sha256(source.encode("utf-8") + b"\0").hexdigest()
        expected_acc = sum(p["pred"] == p["gold"] for p in predictions) / len(predictions)
        assert overall["acc"] == pytest.approx(expected_acc)

        score = tmp_path / f"score-{scoring}"
        code, output = invoke(
            "score", str(run / "predictions.jsonl"), "--out", str(score), "--bootstrap", "20"
        )
        assert code == 0, output
        scored = json.loads((score / "results.json").read_text(encoding="utf-8"))
        assert scored["kind"] == "toypairs" and scored["metrics"] == results["metrics"]
