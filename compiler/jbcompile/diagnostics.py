"""One record type for every problem the tool reports, and one renderer for it.

Load errors, schema errors, check rules and build invariants all become ``Diagnostic`` values, so that
users see one format (``path:line:col: CODE message``) and tools read one JSON shape.

Error tree::

    DiagnosticError            raised by any stage that cannot go on; carries the diagnostics
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from .redaction import redact


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace ``old`` by ``new`` at character offset ``start`` of one YAML scalar's value."""

    start: int
    old: str
    new: str


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    path: str | None = None
    line: int | None = None
    col: int | None = None
    severity: Severity = Severity.ERROR
    hint: str | None = None
    # Where the fix applies: the YAML key path of the scalar inside ``path``, and the edits to its value.
    key_path: tuple[str | int, ...] | None = None
    edits: tuple[Edit, ...] = field(default=())

    @property
    def fixable(self) -> bool:
        return bool(self.edits)

    def sort_key(self) -> tuple:
        return (self.path or "", self.line or 0, self.col or 0, self.code, self.message)

    def located(self) -> str:
        """``path:line:col``, or empty when the problem is not in any file (an option, the network)."""
        if self.path is None:
            return ""
        parts = [self.path]
        if self.line is not None:
            parts.append(str(self.line))
            parts.append(str(self.col if self.col is not None else 1))
        return ":".join(parts)

    def with_severity(self, severity: Severity) -> Diagnostic:
        return replace(self, severity=severity)


class DiagnosticError(Exception):
    """A stage stopped because of errors in its input; the diagnostics say which and where."""

    def __init__(self, diagnostics: Sequence[Diagnostic], written: Sequence[Path] = ()):
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        self.written = list(written)  # files the stage kept before it stopped (e.g. the replies a run got)
        # what is on disk now, in words (files and counts) and how to go on, when the stage looked
        # (eval and score do: :func:`jbcompile.evaluate.predictions.telling_what_is_kept`)
        self.kept: str | None = None
        # how to go on after this stop, where the stage knows better than "run the same command again"
        # (a run refused for its replies' kind, whose replies a rerun with the hint's option does not reuse)
        self.go_on: str | None = None
        super().__init__(f"{len(self.diagnostics)} problem(s)")


@dataclass(frozen=True)
class Code:
    """The declaration of one diagnostic code (its registry is :mod:`jbcompile.codes`)."""

    code: str
    area: str  # one of ``codes.AREAS``, or a design's name
    title: str  # one line: what went wrong
    doc: str  # the doc section that explains it: "docs/eval.md#anchor" (a path from the repository root)
    declared_in: str = "compiler/jbcompile/codes.py"  # where to change the declaration


def declare(area: str, doc: str, titles: Mapping[str, str]) -> tuple[Code, ...]:
    """The codes of one doc section: ``{code: title}``, all of ``area``."""
    return tuple(Code(code, area, title, doc) for code, title in titles.items())


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity is Severity.ERROR for d in diagnostics)


def render_text(diagnostic: Diagnostic) -> str:
    where = f"{diagnostic.located()}: " if diagnostic.path is not None else ""
    severity = f"[{diagnostic.severity}] " if diagnostic.severity is not Severity.ERROR else ""
    text = f"{where}{diagnostic.code} {severity}{diagnostic.message}"
    if diagnostic.hint:
        text += f" — {diagnostic.hint}"
    return redact(text)


def _github_escape(value: str, *, property_value: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render_github(diagnostic: Diagnostic) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}[diagnostic.severity]
    props = []
    if diagnostic.path:
        props.append(f"file={_github_escape(diagnostic.path, property_value=True)}")
    if diagnostic.line is not None:
        props.append(f"line={diagnostic.line}")
        props.append(f"col={diagnostic.col or 1}")
    props.append(f"title={_github_escape(diagnostic.code, property_value=True)}")
    message = diagnostic.message + (f" — {diagnostic.hint}" if diagnostic.hint else "")
    return redact(f"::{level} {','.join(props)}::{_github_escape(message)}")


def to_json_record(diagnostic: Diagnostic) -> dict:
    record = asdict(diagnostic)
    record["severity"] = str(diagnostic.severity)
    record["key_path"] = list(diagnostic.key_path) if diagnostic.key_path is not None else None
    record["edits"] = [asdict(edit) for edit in diagnostic.edits]
    record["fixable"] = diagnostic.fixable
    record["path"] = redact(diagnostic.path) if diagnostic.path else diagnostic.path
    record["message"] = redact(diagnostic.message)
    record["hint"] = redact(diagnostic.hint) if diagnostic.hint else diagnostic.hint
    return record


def render(diagnostics: Sequence[Diagnostic], fmt: str = "text") -> str:
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    if fmt == "json":
        return json.dumps([to_json_record(d) for d in ordered], ensure_ascii=False, indent=2)
    renderer = render_github if fmt == "github" else render_text
    return "\n".join(renderer(d) for d in ordered)


def summarize(diagnostics: Sequence[Diagnostic]) -> dict[str, dict[str, int]]:
    """Count findings per code and severity, for the summary line under a report."""
    summary: dict[str, dict[str, int]] = {}
    for d in diagnostics:
        summary.setdefault(d.code, {}).setdefault(str(d.severity), 0)
        summary[d.code][str(d.severity)] += 1
    return dict(sorted(summary.items()))
