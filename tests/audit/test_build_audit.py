"""The build audits what it writes: the card and the manifest carry the figures, plain `build` warns,
`build --release` and `publish` refuse a benchmark whose probe is above its bar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jbcompile.build import build_folder
from jbcompile.cli import app
from jbcompile.diagnostics import DiagnosticError, Severity
from jbcompile.project import load_project
from jbcompile.publish.buildfolder import open_build
from jbcompile.publish.release import audit_problems, prepare_release
from typer.testing import CliRunner

from tests.conftest import REPO
from tests.helpers import edit


def test_a_plain_build_warns_and_records_the_figures(shortcut_sources: Path, tmp_path: Path) -> None:
    compiled, manifest = build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False)
    warnings = [d for d in compiled.diagnostics if d.code == "AU001"]
    assert warnings and all(d.severity is Severity.WARNING for d in warnings)
    # each worst template is named with its file, where the rewriting the hint asks for happens
    named = f"worst templates: age-phone ({shortcut_sources / 'templates/Age/age-phone.yaml'})"
    assert any("mention-order" in d.message and named in d.message for d in warnings), warnings
    assert all(d.path and d.path.endswith("dataset.yaml") for d in warnings)
    assert manifest["audit"]["passed"] is False
    recorded = json.loads((tmp_path / "build" / "manifest.json").read_text(encoding="utf-8"))["audit"]
    assert recorded == json.loads(json.dumps(manifest["audit"]))
    probes = {(r["config"], r["probe"]) for r in recorded["results"]}
    assert {("full", "mention-order"), ("lite", "attribute-confound")} <= probes
    card = (tmp_path / "build" / "README.md").read_text(encoding="utf-8")
    assert "## Shortcut audit" in card and "| `mention-order` (" in card and "above the bar in" in card


def test_a_release_build_refuses_a_probe_above_its_bar(shortcut_sources: Path, tmp_path: Path) -> None:
    with pytest.raises(DiagnosticError) as error:
        build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False, release=True)
    refused = [d for d in error.value.diagnostics if d.code == "AU001"]
    assert refused and all(d.severity is Severity.ERROR for d in refused)
    order = next(
        d for d in refused if "probe mention-order-disambiguating" in d.message and "[full]" in d.message
    )
    assert "all: 100.0%" in order.message and "Age: 100.0%" in order.message
    # Disability_status has one template: read in its best direction any leaning template is at 100%,
    # so one template alone is never above (it is "over, not significant")
    assert "Disability_status:" not in order.message.split("worst templates")[0]
    phone = shortcut_sources / "templates/Age/age-phone.yaml"
    assert f"worst templates: age-phone ({phone}) 100.0% of 288" in order.message
    assert not (tmp_path / "build").exists()


def test_the_bars_of_dataset_yaml_let_it_pass(shortcut_sources: Path, tmp_path: Path) -> None:
    dataset = shortcut_sources / "dataset.yaml"
    bars = "audit:\n  margin: 0.5\n  probes:\n    attribute-confound: {max: 0.5}\n"
    dataset.write_text(dataset.read_text(encoding="utf-8") + bars, encoding="utf-8")
    compiled, manifest = build_folder(
        load_project(shortcut_sources), tmp_path / "build", checks=False, release=True
    )
    assert manifest["audit"]["passed"] and manifest["audit"]["settings"]["margin"] == 0.5
    edit(dataset, "attribute-confound:", "attribute-confund:")
    compiled, _ = build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False)
    unknown = [d for d in compiled.diagnostics if d.code == "AU002"]
    assert len(unknown) == 1 and "attribute-confund" in unknown[0].message and unknown[0].line


def test_the_audit_command_names_a_misspelt_probe_as_build_does(
    shortcut_sources: Path, tmp_path: Path
) -> None:
    """AU002 on `jbcompile audit` of the sources, of a build with --sources and of release files with
    --sources: the bars come from that dataset.yaml, so a typo there is said wherever it is read."""
    build = tmp_path / "build"
    build_folder(load_project(shortcut_sources), build, checks=False)
    dataset = shortcut_sources / "dataset.yaml"
    bars = "audit:\n  probes:\n    attribute-confund: {max: 0.5}\n"
    dataset.write_text(dataset.read_text(encoding="utf-8") + bars, encoding="utf-8")
    runner = CliRunner()
    data = next((build / "data" / "full").glob("*.parquet"))
    for args in (
        ["audit", "--sources", str(shortcut_sources)],
        ["audit", str(build), "--sources", str(shortcut_sources)],
        ["audit", str(data), "--sources", str(shortcut_sources), "--format", "json"],
    ):
        done = runner.invoke(app, args)
        assert "AU002" in done.output and "attribute-confund" in done.output, (args, done.output)
        assert "dataset.yaml:" in done.output
    done = runner.invoke(app, ["audit", str(build)])  # no sources: no bars of theirs to judge
    assert "AU002" not in done.output


def test_publish_refuses_a_build_above_its_bar_or_without_an_audit(
    shortcut_sources: Path, tmp_path: Path
) -> None:
    build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False)
    project, build = load_project(shortcut_sources), open_build(tmp_path / "build")
    found = audit_problems(project, build)
    assert found and {d.code for d in found} == {"AU001"} and all(d.severity is Severity.ERROR for d in found)
    with pytest.raises(DiagnosticError) as refused:
        prepare_release(project, build, "lab/bench", private=False, token=None, require_token=False)
    assert "AU001" in {d.code for d in refused.value.diagnostics}
    build.manifest.pop("audit")
    assert [d.code for d in audit_problems(project, build)] == ["AU004"]
    build.manifest["audit"] = {"results": "?"}
    assert [d.code for d in audit_problems(project, build)] == ["AU004"]


def test_the_audit_command_reads_a_build_folder(shortcut_sources: Path, tmp_path: Path) -> None:
    build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False)
    env = {
        "PYTHONPATH": str(REPO / "compiler"),
        "PATH": "/usr/bin:/bin",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "250",
    }
    command = [sys.executable, "-m", "jbcompile.cli", "audit", str(tmp_path / "build"), "--config", "full"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert (
        "shortcut audit of full" in done.stdout
        and "mention-order" in done.stdout
        and "lite" not in done.stdout
    )
    assert "ABOVE" in done.stdout and "probe(s) above their bar" in done.stdout
    as_json = subprocess.run(
        [*command, "--format", "json"], capture_output=True, text=True, env=env, timeout=120
    )
    record = json.loads(as_json.stdout)
    built = json.loads((tmp_path / "build" / "manifest.json").read_text(encoding="utf-8"))["audit"]
    assert record["results"] == [r for r in built["results"] if r["config"] == "full"]


def test_the_audit_command_compiles_sources(shortcut_sources: Path) -> None:
    from jbcompile.cli import app
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["audit", "--sources", str(shortcut_sources), "--format", "json"])
    assert result.exit_code == 1, result.output
    assert {r["config"] for r in json.loads(result.stdout)["results"]} == {"lite", "full"}


def test_the_bundled_benchmark_passes_its_own_audit(tmp_path: Path) -> None:
    """The release build of the bundled benchmark: every probe of every config within its bar, and no
    bar loosened for it in dataset.yaml."""
    from jbcompile.paths import bundled_sources

    sources = bundled_sources()
    assert "audit" not in yaml.safe_load((sources / "dataset.yaml").read_text(encoding="utf-8"))
    out = tmp_path / "build"
    result = CliRunner().invoke(app, ["build", "--release", "--sources", str(sources), "--out", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["audit"]
    assert figures["passed"] is True
    audited = {(result["config"], result["probe"]) for result in figures["results"] if not result["not_run"]}
    assert {config for config, _ in audited} == {"lite", "full", "sobaco", "sobaco_dummy", "jubaku"}
    assert {
        ("lite", "mention-order"),
        ("lite", "stereotyped-person"),
        ("jubaku", "context-overlap"),
    } <= audited


def test_lite_puts_the_gold_on_the_stereotyped_person_in_half_the_rows(tmp_path: Path) -> None:
    """Each template's six disambiguated lite rows are 3 biased and 3 counter-biased, which puts the gold
    on the stereotyped person in 4 or in 2 of them; templates take either pattern, so that "answer the
    marked group" is not right in two thirds of every category (the stereotyped-person probe)."""
    import pyarrow.parquet as pq
    from jbcompile.paths import bundled_sources

    out = tmp_path / "build"
    assert (
        CliRunner().invoke(app, ["build", "--sources", str(bundled_sources()), "--out", str(out)]).exit_code
        == 0
    )
    rows = pq.read_table(out / "data" / "lite" / "test-00000-of-00001.parquet").to_pylist()
    on_target: dict[str, list[int]] = {}
    by_category: dict[str, list[int]] = {}
    for row in rows:
        if row["context_condition"] == "disambig":
            hit = int(row["label"] == row["target_label"])
            on_target.setdefault(row["template_id"], []).append(hit)
            by_category.setdefault(row["category"], []).append(hit)
    assert {sum(hits) for hits in on_target.values()} == {2, 4}
    for category, hits in by_category.items():
        assert abs(sum(hits) / len(hits) - 0.5) <= 0.05, category


def test_the_audit_command_refuses_a_build_altered_after_it_was_built(
    shortcut_sources: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    build_folder(load_project(shortcut_sources), tmp_path / "build", checks=False)
    data = tmp_path / "build" / "data" / "full" / "test-00000-of-00001.parquet"
    table = pq.read_table(data)
    labels = [(label + 1) % 3 for label in table.column("label").to_pylist()]  # rotated by hand
    index = table.schema.get_field_index("label")
    pq.write_table(table.set_column(index, "label", pa.array(labels, table.schema.field("label").type)), data)
    result = CliRunner().invoke(app, ["audit", str(tmp_path / "build"), "--config", "full"])
    assert result.exit_code == 2 and "P005" in result.output and "changed after the build" in result.output
