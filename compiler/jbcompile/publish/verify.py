"""Check that a release on the Hub is exactly what its sources compile to.

``compare_builds`` is pure (two folders in, differences out); ``verify_release`` downloads the revision,
builds the sources afresh in a temporary folder and compares the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .buildfolder import MANIFEST, BuildFolder, count_rows, folder_digests, integrity_problems, open_build
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


def compare_builds(expected: BuildFolder, actual: BuildFolder) -> tuple[list[Difference], dict, int]:
    """Differences between a fresh build (expected) and a release (actual): files, rows, manifest."""
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
        released = count_rows(actual, config) if config in actual.rows else None
        rows[config] = {"expected": fresh, "actual": released, "manifest": actual.rows.get(config)}
        if fresh != released:
            differences.append(Difference("rows", config, fresh, released, "row count differs"))
        if released is not None and actual.rows.get(config) != released:
            differences.append(
                Difference(
                    "rows",
                    config,
                    actual.rows.get(config),
                    released,
                    "the release's manifest and its data disagree on the row count",
                )
            )
    for problem in integrity_problems(actual):
        differences.append(Difference("integrity", MANIFEST, None, None, problem.message))
    return differences, rows, len(set(want) | set(have))


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
    released = open_build(snapshot, what=f"revision {ref}")
    formats = ("parquet", "jsonl") if any(p.endswith(".jsonl") for p in released.files) else ("parquet",)
    lang = str(released.manifest.get("language", "ja"))
    expected = fresh_build(sources, workdir / "fresh", lang=lang, formats=formats, cards=cards)
    differences, rows, checked = compare_builds(expected, released)
    return VerifyReport(str(ref), snapshot.name, checked, rows, differences)
