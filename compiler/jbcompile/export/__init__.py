"""Export a build as tasks of the harnesses people already run: lm-evaluation-harness and inspect.

``jbcompile export lm-eval BUILD --out DIR`` writes a task folder (:mod:`.lm_eval`), ``jbcompile export
inspect BUILD --out DIR`` a task module (:mod:`.inspect_task`). Each design says what of it a harness can
run through its spec's ``harness_export()`` (:class:`~jbcompile.designs.exporting.HarnessExport`);
this package names no design.

The exported files run where only the harness is installed, so they cannot import jbcompile. They carry a
copy of jbcompile's own functions instead (:mod:`.runtime`): the design's metric counters and formulas,
the row helpers of its :class:`HarnessExport` and its prompt templates, copied from this installation's
source. The numbers a harness reports are therefore computed by the same code as ``jbcompile score``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..designs.exporting import HarnessExport
from ..diagnostics import Diagnostic, DiagnosticError
from ..jsonl import dumps

if TYPE_CHECKING:
    from ..publish.buildfolder import BuildFolder

HUB_URL = re.compile(r"^https://huggingface\.co/datasets/(?P<repo>[\w.-]+/[\w.-]+)/?$")


@dataclass(frozen=True)
class DatasetSource:
    """Where an exported task reads the rows: a Hub repository at a pinned revision, or a local build."""

    repo: str | None  # ORG/NAME on the Hub; None for a local build
    revision: str | None
    build: Path  # the build folder (its parquet files, for the local form)

    def data_files(self, config: str) -> list[str]:
        return sorted(str(p.resolve()) for p in (self.build / "data" / config).glob("*.parquet"))

    @property
    def described(self) -> str:
        return f"{self.repo}@{self.revision}" if self.repo else f"the local build {self.build.resolve()}"


@dataclass(frozen=True)
class ExportConfig:
    """One config of the build that a harness can run."""

    name: str
    kind: str
    rows: int
    export: HarnessExport


@dataclass(frozen=True)
class BuildExport:
    """A build read for export: its name and version, where its rows are read, the configs to export."""

    dataset: str
    version: str
    source: DatasetSource
    configs: tuple[ExportConfig, ...]
    skipped: tuple[tuple[str, str], ...]  # (config, kind) a harness cannot run


def read_build(build: Path, *, repo: str | None, revision: str | None, local: bool) -> BuildExport:
    """The build's manifest, and where the exported tasks read its rows: ``--local`` reads the build's
    own parquet files; otherwise the Hub repository (``--repo``, else the build's croissant.json URL) at
    ``--revision`` (else the release tag ``v<version>`` that ``jbcompile publish`` creates).

    The data of every config exported is verified against the manifest first, as ``eval`` verifies it
    (:func:`..publish.buildfolder.verified_table`): a build altered after it was written is refused
    (P005, P016), whichever form the tasks read."""
    from ..designs import get_design
    from ..publish.buildfolder import open_build, verified_table
    from ..publish.release import release_tag

    folder = open_build(build)  # its shape checked: names fit for paths and generated code (P003)
    manifest = folder.manifest
    if not isinstance(manifest.get("dataset"), str) or not isinstance(manifest.get("version"), str):
        raise DiagnosticError(
            [
                Diagnostic(
                    "P003",
                    "manifest.json names no dataset or no version: the tasks could not be named",
                    path=str(build / "manifest.json"),
                    hint="rebuild with `jbcompile build`",
                )
            ]
        )
    version = manifest["version"]
    configs: list[ExportConfig] = []
    skipped: list[tuple[str, str]] = []
    for name, info in sorted((manifest.get("configs") or {}).items()):
        kind = info["kind"]
        try:
            design = get_design(kind)
        except KeyError:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EX004",
                        f"config {name!r} is of the design {kind!r}, which this installation does not have",
                        path=str(build / "manifest.json"),
                        hint="install the package that provides the design (docs/designs.md), or rebuild",
                    )
                ]
            ) from None
        export = design.harness_export()
        if export is None:
            skipped.append((name, kind))
        else:
            verified_table(folder, name)
            configs.append(ExportConfig(name, kind, info.get("rows", 0), export))
    if not configs:
        kinds = ", ".join(sorted({kind for _, kind in skipped})) or "none"
        raise DiagnosticError(
            [
                Diagnostic(
                    "EX002",
                    f"no config of this build can run in a harness (its designs: {kinds})",
                    path=str(build),
                    hint="see docs/harnesses.md for what each design exports",
                )
            ]
        )
    if local:
        source = DatasetSource(None, None, build)
    else:
        source = DatasetSource(_repo(folder, repo), _revision(revision) or release_tag(version), build)
    return BuildExport(manifest["dataset"], version, source, tuple(configs), tuple(skipped))


def _revision(given: str | None) -> str | None:
    """A --revision is a git revision name: it is written into the export's README and task files."""
    from ..publish.hub import parse_revision

    if given is not None and parse_revision(given) is None:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EX006",
                    f"--revision takes a branch, tag or commit name; got {given!r}",
                    hint="give a name of letters, digits and . _ / - (e.g. v1.0.0, main, or a commit hash), "
                    "or leave --revision out for the build's release tag",
                )
            ]
        )
    return given


def _repo(folder: BuildFolder, given: str | None) -> str:
    from ..publish.buildfolder import verified_file
    from ..publish.hub import parse_repo_id

    if given is not None:
        if parse_repo_id(given) is None:
            raise DiagnosticError(
                [Diagnostic("EX001", f"--repo takes ORG/NAME; got {given!r}", hint="e.g. my-lab/ja-bias")]
            )
        return given
    from .. import jsonl

    data = verified_file(folder, CROISSANT)
    text = None if data is None else data.decode("utf-8", errors="replace")
    try:
        url = jsonl.loads(text).get("url") if text is not None else None
    except (ValueError, AttributeError):  # a croissant.json the build wrote so holds no URL
        url = None
    match = HUB_URL.match(url) if isinstance(url, str) else None
    if match is None:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EX001",
                    "the build does not say which Hub repository it is published to",
                    path=str(folder.root),
                    hint="give --repo ORG/NAME (or set hub_repo in dataset.yaml and rebuild), or --local",
                )
            ]
        )
    return match["repo"]


CROISSANT = "croissant.json"


def task_name(*parts: str | None) -> str:
    """A harness task name: lower case, ``_`` between the parts (``eval_fixture_lite_basic``)."""
    return "_".join(re.sub(r"[^0-9a-z]+", "_", p.lower()).strip("_") for p in parts if p)


def not_exported(build: BuildExport) -> list[str]:
    """The README's last section: what each design's tasks leave out, and the configs left out."""
    lines = ["", "## Not exported", ""]
    lines += [f"{c.kind}: {c.export.cannot}" for c in {c.kind: c for c in build.configs}.values()]
    if build.skipped:
        left = ", ".join(f"`{name}` ({kind})" for name, kind in build.skipped)
        lines.append(f"Configs left out (their design has no harness export): {left}.")
    return lines


MARKER = "jbcompile-export.json"  # what says a folder is an export, which a new export may replace


def _refuse_other_export(out: Path, harness: str, dataset: str) -> None:
    """An earlier export of another dataset, or for another harness, is replaced only when asked (EX005),
    as `build` treats another dataset's build (B009); an export of the same is rewritten in place."""
    from ..outputs import refuse

    if not (out / MARKER).is_file():
        return
    earlier = _earlier_marker(out)
    found = (earlier.get("harness"), earlier.get("dataset")) if earlier else (None, None)
    if found != (harness, dataset):  # "an": both harnesses' names take it (an inspect, an LM-eval)
        what = f"an {found[0]} export of {found[1]!r}" if found[0] else "an export this one cannot read"
        refuse(
            [
                Diagnostic(
                    "EX005",
                    f"--out holds {what}, not an {harness} export of {dataset!r}; refusing to replace it",
                    path=str(out),
                    hint="choose another --out, or pass --overwrite to replace that export",
                )
            ]
        )


def _earlier_marker(out: Path) -> dict[str, Any] | None:
    """What an earlier export's marker in ``out`` records; None when it cannot be read as one."""
    from ..jsonl import read_json
    from ..reading import RECORD

    try:
        earlier = read_json(out / MARKER, RECORD)
    except (OSError, ValueError, DiagnosticError):
        return None
    return earlier if isinstance(earlier, dict) else None


SHOWN_FILES = 5  # files of the user's named in EX003's message


def _refuse_files_of_the_user(out: Path, files: dict[str, str]) -> None:
    """An earlier export's folder is replaced whole: refuse (EX003) when it holds files that no export
    wrote — notes, a task of the user's —, which would go with it, as eval refuses a run folder holding
    others (EV101). What an export wrote is what its marker lists (an export before the marker listed
    its files: what this one writes); Python's bytecode caches, which the harnesses' imports write beside
    the task files, are the export's too."""
    from ..outputs import refuse

    if not (out / MARKER).is_file():
        return
    earlier = _earlier_marker(out)
    listed = earlier.get("files") if earlier else None
    written = {*(listed if isinstance(listed, list) else files), MARKER}
    found = [p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file() or p.is_symlink()]
    theirs = [
        name.as_posix()
        for name in found
        if name.as_posix() not in written and "__pycache__" not in name.parts
    ]
    if not theirs:
        return
    shown = ", ".join(theirs[:SHOWN_FILES]) + (
        f" and {len(theirs) - SHOWN_FILES} more" if len(theirs) > SHOWN_FILES else ""
    )
    refuse(
        [
            Diagnostic(
                "EX003",
                f"--out is an earlier export that also holds files no export wrote ({shown}); an export "
                "replaces its whole folder, which would delete them",
                path=str(out),
                hint="move those files out of the folder, or give another --out",
            )
        ]
    )


def export_build(
    harness: str,
    writer: Callable[[BuildExport], dict[str, str]],
    build: Path,
    out: Path,
    *,
    repo: str | None,
    revision: str | None,
    local: bool,
    overwrite: bool = False,
) -> BuildExport:
    """Read the build and write ``writer``'s files as the folder ``out``, at once, under its claim
    (jbcompile.outputs): only a new or empty folder, or an earlier export, is replaced — an export of
    another dataset or for another harness only with ``overwrite`` (EX005) — and never one that is,
    holds or lies in the build, or holds the working folder."""
    from ..fsio import write_atomic
    from ..outputs import Output, refuse, writing

    outputs = [Output("--out", out, code="EX003", whole=True)]
    with writing(outputs, [("the build", build)], f"export {harness}") as claims:
        foreign = out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file()
        if foreign or (out.exists() and not out.is_dir()):
            refuse(
                [
                    Diagnostic(
                        "EX003",
                        "--out is a file or a folder that is not an export, and an export replaces its "
                        "whole folder",
                        path=str(out),
                        hint="give a new or empty folder, or the folder of an earlier export",
                    )
                ]
            )
        found = read_build(build, repo=repo, revision=revision, local=local)
        if not overwrite:
            _refuse_other_export(out, harness, found.dataset)
        files = writer(found)
        _refuse_files_of_the_user(out, files)
        marker = {
            "harness": harness,
            "dataset": found.dataset,
            "version": found.version,
            "repo": found.source.repo,
            "revision": found.source.revision,
            "configs": [config.name for config in found.configs],
            "files": sorted(files),
        }
        with claims[out].replaced_folder("export") as staging:
            for name, text in {**files, MARKER: dumps(marker, indent=2) + "\n"}.items():
                path = staging / name
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, text)
    return found
