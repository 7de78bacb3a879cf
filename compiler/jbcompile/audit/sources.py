"""The audit of a sources folder: built into a scratch folder, whose build runs the audit (above the build,
which runs :func:`.run.audit_compiled` on what it writes)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..build import build_folder
from ..projecttypes import Project
from .report import AuditReport


def audit_sources(project: Project) -> AuditReport:
    """Compile ``project`` into a scratch folder (nothing is kept) and return the build's own audit."""
    with tempfile.TemporaryDirectory(prefix="jbcompile-audit-") as scratch:
        compiled, _ = build_folder(project, Path(scratch) / "build", checks=False)
    assert compiled.audit is not None
    return compiled.audit
