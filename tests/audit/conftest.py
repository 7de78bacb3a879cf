"""Fixtures of the audit tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from jbcompile.audit import AuditReport, ProbeReport
from jbcompile.audit.run import TableRows, audit_rows, plain_table, probe_inputs
from jbcompile.schema.dataset import AuditSettings


@pytest.fixture(scope="session")
def audit() -> Callable[..., AuditReport]:
    """Audit plain rows of one design as one config (default bars unless ``settings`` says)."""
    inputs = probe_inputs(None)

    def run(kind: str, rows: list[dict], settings: AuditSettings | None = None) -> AuditReport:
        return audit_rows([TableRows("test", kind, plain_table(rows))], settings or AuditSettings(), inputs)

    return run


def result(report: AuditReport, probe: str) -> ProbeReport:
    return next(r for r in report.results if r.probe == probe)


@pytest.fixture
def shortcut_sources(mini_sources: Path) -> Path:
    """The mini benchmark without the bars that let it pass: its three templates all name the person
    who answers the negative question last in the disambiguating context (a mention-order shortcut)."""
    dataset = mini_sources / "dataset.yaml"
    text = dataset.read_text(encoding="utf-8")
    dataset.write_text(text[: text.index("# Three templates that test")], encoding="utf-8")
    assert "audit:" not in dataset.read_text(encoding="utf-8")
    return mini_sources
