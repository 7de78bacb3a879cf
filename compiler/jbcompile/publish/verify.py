"""Check that a release on the Hub is exactly what its sources compile to.

``compare_builds`` is pure (two folders in, differences out); ``verify_release`` downloads the revision,
builds the sources afresh in a temporary folder and compares the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import DiagnosticError
from .buildfolder import (
    MANIFEST,
    BuildFolder,
    count_rows,
    folder_digests,
    folder_files,
    integrity_findings,
    open_build,
)
from .hub import HubRef, HubSession, download_revision, hub_errors

# Manifest fields worth naming when the manifests differ (the file hash alone says little).
_MANIFEST_FIELDS = ("dataset", "version", "compiler_version", "sources_hash", "language", "schema_version")


@dataclass(frozen=True)
class Difference:
    """One way the release differs from the fresh build."""

    kind: str  # file | rows | manifest | integrity
    path: str
    expected: Any
    actual: Any
    note: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "note": self.note,
        }


@dataclass
class VerifyReport:
    ref: str
    commit: str | None
    checked_files: int
    rows: dict[str, dict[str, int | None]]
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def as_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "commit": self.commit,
            "ok": self.ok,
            "checked_files": self.checked_files,
            "rows": self.rows,
            "differences": [d.as_dict() for d in self.differences],
        }


def compare_builds(
    expected: BuildFolder, actual: BuildFolder, label: str = "release"
) -> tuple[list[Difference], dict, int]:
    """Differences between a fresh build (expected) and a release (actual): files, rows, manifest, and
    the release against its own manifest. A release that disagrees with itself (a data file that is not
    parquet, a file its manifest does not list) is a difference named ``label:path``, never a refusal:
    it is what verify is for."""
    differences: list[Difference] = []
    want, have = folder_digests(expected.root), folder_digests(actual.root)
    for path in sorted(set(want) | set(have)):
        if path not in have:
            differences.append(Difference("file", path, want[path], None, "missing from the release"))
        elif path not in want:
            differences.append(Difference("file", path, None, have[path], "not produced by the sources"))
        elif want[path] != have[path]:
            differences.append(Difference("file", path, want[path], have[path], "sha256 differs"))
    for key in _MANIFEST_FIELDS:
        if expected.manifest.get(key) != actual.manifest.get(key):
            differences.append(
                Difference(
                    "manifest",
                    f"{MANIFEST}:{key}",
                    expected.manifest.get(key),
                    actual.manifest.get(key),
                    f"manifest field {key} differs",
                )
            )
    rows: dict[str, dict[str, int | None]] = {}
    for config in sorted(set(expected.rows) | set(actual.rows)):
        fresh = count_rows(expected, config) if config in expected.rows else None
        released, unreadable = _released_rows(actual, config, label)
        differences += unreadable
        rows[config] = {"expected": fresh, "actual": released, "manifest": actual.rows.get(config)}
        if fresh != released and not unreadable:
            differences.append(Difference("rows", config, fresh, released, "row count differs"))
        if released is not None and config in actual.rows and actual.rows[config] != released:
            differences.append(
                Difference(
                    "rows",
                    config,
                    actual.rows.get(config),
                    released,
                    "the release's manifest and its data disagree on the row count",
                )
            )
    for name, problem in integrity_findings(actual) if actual.files else []:
        differences.append(Difference("integrity", f"{label}:{name}", None, None, problem))
    return differences, rows, len(set(want) | set(have))


def _released_rows(actual: BuildFolder, config: str, label: str) -> tuple[int | None, list[Difference]]:
    """A config's rows in the release, from the parquet files it holds; a file that cannot be read as
    parquet is a difference (its rows then unknown)."""
    from ..reading import DATA_FILE, parquet_row_count

    folder = actual.root / "data" / config
    names = sorted(f"data/{config}/{p.name}" for p in folder.glob("*.parquet")) if folder.is_dir() else []
    if not names:
        return None, []
    total, problems = 0, []
    for name in names:
        try:
            total += parquet_row_count(actual.root / name, DATA_FILE)
        except (OSError, ValueError, DiagnosticError) as error:
            detail = error.diagnostics[0].message if isinstance(error, DiagnosticError) else str(error)
            first_line = (detail.splitlines() or [type(error).__name__])[0]
            first_line = first_line.replace(str(actual.root / name), f"{label}:{name}")
            problems.append(
                Difference(
                    "integrity", f"{label}:{name}", None, None, f"not readable as parquet: {first_line}"
                )
            )
    return (None if problems else total), problems


def fresh_build(
    sources: Path,
    out: Path,
    *,
    lang: str = "ja",
    formats: tuple[str, ...] = ("parquet",),
    cards: Path | None = None,
) -> BuildFolder:
    """Compile the sources into ``out`` exactly as ``jbcompile build`` would (lint checks aside: they
    never change the output)."""
    from ..build import build_folder
    from ..project import load_project

    project = load_project(sources, lang=lang)
    build_folder(project, out, formats=formats, cards_dir=cards, checks=False)
    return open_build(out)


def verify_release(
    session: HubSession, ref: HubRef, sources: Path, workdir: Path, cards: Path | None = None
) -> VerifyReport:
    """Download ``ref``, rebuild ``sources`` in ``workdir`` the way the release was built (language,
    formats), and compare; raise DiagnosticError if either side cannot be read."""
    with hub_errors(session, f"downloading {ref}"):
        snapshot = download_revision(session, ref, workdir / "download")
    unreadable: list[Difference] = []
    try:
        released = open_build(snapshot, what=f"revision {ref}")
    except DiagnosticError as error:  # the release's own manifest: a difference, not an input error
        released = BuildFolder(snapshot, {})
        for found in error.diagnostics:
            message = found.message.replace(str(snapshot / MANIFEST), f"{ref}:{MANIFEST}")
            unreadable.append(
                Difference(
                    "integrity", f"{ref}:{MANIFEST}", None, None, message.replace(str(snapshot), str(ref))
                )
            )
    formats = (
        ("parquet", "jsonl") if any(p.endswith(".jsonl") for p in folder_files(snapshot)) else ("parquet",)
    )
    lang = str(released.manifest.get("language", "ja"))
    expected = fresh_build(sources, workdir / "fresh", lang=lang, formats=formats, cards=cards)
    differences, rows, checked = compare_builds(expected, released, str(ref))
    return VerifyReport(str(ref), snapshot.name, checked, rows, unreadable + differences)
