"""Sources imported from BBQ's templates go through DeepL (the fake) and build in Japanese."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from jbcompile.cli import app
from typer.testing import CliRunner

from ..importers.conftest import EN_SPECS, write_template_csvs


def _import(folder: Path, out: Path, *args: str):
    return CliRunner().invoke(app, ["import", "bbq-templates", str(folder), "--out", str(out), *args])


def test_import_translate_build_workflow(tmp_path, fake_deepl):
    folder = write_template_csvs(tmp_path / "bbq", EN_SPECS)
    sources = tmp_path / "sources"
    assert _import(folder, sources).exit_code == 0
    assert "they: かれら" in (sources / "translations" / "glossary.yaml").read_text(encoding="utf-8")
    runner = CliRunner()
    before = runner.invoke(app, ["build", "--sources", str(sources), "--out", str(tmp_path / "ja0")])
    assert before.exit_code == 2  # no Japanese yet
    translated = runner.invoke(app, ["translate", "--sources", str(sources)])
    assert translated.exit_code == 0, translated.output
    built = runner.invoke(app, ["build", "--sources", str(sources), "--out", str(tmp_path / "ja")])
    assert built.exit_code == 0, built.output
    table = pq.read_table(tmp_path / "ja" / "data" / "full" / "test-00000-of-00001.parquet").to_pylist()
    assert table and all(row["context"].startswith("訳:") for row in table)
    (glossary,) = fake_deepl.glossaries.values()  # the imported glossary went to DeepL
    assert glossary.entries[("EN", "JA")]["they"] == "かれら"
    again = runner.invoke(app, ["translate", "--sources", str(sources), "--dry-run"])
    assert "0 text(s), 0 characters would be billed" in again.output
