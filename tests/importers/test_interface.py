"""Every registered importer's round trip goes through the one interface: ``run_import`` reads, writes
and verifies; ``verify_round_trip`` counts only the rows the written sources really give back."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from jbcompile.importers import Importer, Tick, all_importers
from jbcompile.importers.report import ImportReport
from jbcompile.importers.run import run_import
from jbcompile.importers.writer import write_sources

from .conftest import EN_SPECS, generate_rows, write_jsonl, write_template_csvs
from .test_jubaku import release_rows
from .test_sobaco import NAMES, UNKNOWN, problems

Case = Callable[[Path], tuple[list[Path], dict[str, Any]]]


def _bbq_templates(tmp: Path) -> tuple[list[Path], dict[str, Any]]:
    released = write_jsonl(tmp / "released.jsonl", generate_rows(EN_SPECS, "en"))
    return [write_template_csvs(tmp / "bbq", EN_SPECS)], {"compare": [released]}


def _bbq_jsonl(tmp: Path) -> tuple[list[Path], dict[str, Any]]:
    return [write_jsonl(tmp / "rows.jsonl", generate_rows(EN_SPECS, "en"))], {}


def _sobaco_json(tmp: Path) -> tuple[list[Path], dict[str, Any]]:
    import json

    path = tmp / "templates.json"
    path.write_text(json.dumps(problems(), ensure_ascii=False), encoding="utf-8")
    return [path], {"names": list(NAMES), "unknown": list(UNKNOWN)}


def _jubaku_jsonl(tmp: Path) -> tuple[list[Path], dict[str, Any]]:
    return [write_jsonl(tmp / "jubaku.jsonl", release_rows())], {}


CASES: dict[str, Case] = {
    "bbq-templates": _bbq_templates,
    "bbq-jsonl": _bbq_jsonl,
    "sobaco-json": _sobaco_json,
    "jubaku-jsonl": _jubaku_jsonl,
}


def _importer(name: str) -> Importer:
    return next(importer for importer in all_importers() if importer.name == name)


def _given_back(report: ImportReport) -> tuple[int, int]:
    """(rows the sources give back, rows compared): the released rows where the import compared a
    release, else the input rows."""
    if report.release:
        return (
            sum(entry["reproduced"] for entry in report.release.values()),
            sum(entry["rows"] for entry in report.release.values()),
        )
    return report.reproduced_rows, report.total_rows


def test_every_registered_importer_has_a_round_trip_case() -> None:
    assert sorted(CASES) == sorted(importer.name for importer in all_importers())


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_round_trip_of_every_importer_goes_through_the_interface(name: str, tmp_path: Path) -> None:
    importer = _importer(name)
    inputs, options = CASES[name](tmp_path)
    steps: list[tuple[str, list[tuple[int, int]]]] = []

    @contextmanager
    def recording(description: str) -> Iterator[Tick]:
        ticks: list[tuple[int, int]] = []
        steps.append((description, ticks))
        yield lambda done, total: ticks.append((done, total))

    report = run_import(importer, inputs, options, tmp_path / "sources", progress=recording)
    given_back, compared = _given_back(report)
    assert compared > 0 and given_back == compared, report.to_json()
    assert (tmp_path / "sources" / "dataset.yaml").is_file() and "dataset.yaml" in report.files_written
    # publish needs the version's changelog section (P010): every import writes the first one
    import yaml
    from jbcompile.changelog import changelog_section, read_changelog

    version = yaml.safe_load((tmp_path / "sources" / "dataset.yaml").read_text(encoding="utf-8"))["version"]
    assert changelog_section(read_changelog(tmp_path / "sources") or "", version), report.files_written
    for _, ticks in steps:  # a progress bar, where one is shown, ends full
        assert ticks and ticks[-1][0] == ticks[-1][1]
    if name == "bbq-templates":  # expanding every template to compare is the long step
        assert [description for description, _ in steps] == ["expanding templates to compare"]

    # the same input, with one template taken out of the written sources: its rows do not come back
    imported = importer.read(inputs, importer.option_values(options))
    tampered = tmp_path / "tampered"
    write_sources(imported.draft, tampered, imported.report)
    first = sorted((tampered / "templates").rglob("*.yaml"))[0]
    first.unlink()
    importer.verify_round_trip(tampered, imported)
    given_back, compared = _given_back(imported.report)
    assert compared > 0 and given_back < compared


def test_a_library_caller_may_leave_options_out(tmp_path: Path) -> None:
    importer = _importer("bbq-jsonl")
    inputs, _ = _bbq_jsonl(tmp_path)
    report = run_import(importer, inputs, {}, tmp_path / "sources")  # --lang: its default, auto
    assert report.reproduced_rows == report.total_rows > 0
    assert importer.option_values({}) == {"lang": "auto"}
    assert _importer("bbq-templates").option_values({"categories": ("Age",)}) == {
        "categories": ["Age"],
        "compare": [],
        "names_from": [],
    }


def test_a_failed_read_writes_nothing(tmp_path: Path) -> None:
    from jbcompile.diagnostics import DiagnosticError

    broken = tmp_path / "rows.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as caught:
        run_import(_importer("bbq-jsonl"), [broken], {}, tmp_path / "sources")
    assert {d.code for d in caught.value.diagnostics} == {"IM001"}
    assert not (tmp_path / "sources").exists()
