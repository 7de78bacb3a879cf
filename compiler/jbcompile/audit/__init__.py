"""Shortcut audit: can a benchmark's gold be reached without the reasoning it tests?

Each design declares *probes* (rules or small models that answer from surface cues: mention order,
option position and length, lexical overlap, a context-free model, a second attribute separating the two
persons). The audit runs them over a config's plain rows and reports, per probe and category, the
accuracy with a 95% interval (bootstrap over templates) beside chance; dataset.yaml sets the bars
(``audit:``), ``build --release`` and ``publish`` refuse a benchmark above them. docs/audit.md says what
each probe does and how to read the table.

Modules, in the order a run goes through them: ``probe`` (what a probe is, the rows it reads, the
per-template sums it keeps), ``run`` (where rows come from; the passes over them), ``stats`` (variant
choice, bootstrap), ``report`` (the record the CLI, card and manifest share; diagnostics),
``attributes`` (attribute markers of persons), ``model`` (the context-free model probe), ``identical``
(the build's identical-row filter); ``sources`` audits a sources folder by building it (above the
build, which audits what it writes, so it is imported from its module, not from this package).
"""

from .probe import Batch, Probe, ProbeInputs, ProbeNotRun, Scored
from .report import AuditReport, ProbeReport, ScopeReport, problems
from .run import audit_compiled, audit_rows, folder_rows, probe_inputs, release_rows

__all__ = [
    "AuditReport",
    "Batch",
    "Probe",
    "ProbeInputs",
    "ProbeNotRun",
    "ProbeReport",
    "ScopeReport",
    "Scored",
    "audit_compiled",
    "audit_rows",
    "folder_rows",
    "probe_inputs",
    "problems",
    "release_rows",
]
