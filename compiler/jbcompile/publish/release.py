"""A release: the build folder of one version, published as one commit on ``main`` plus a tag ``vX.Y.Z``.

Order of operations (each step only runs when the previous one succeeded)::

    prepare_release   local checks, no network: build present, intact, fresh, of this version;
                      no unreviewed machine translation; no placeholder left in dataset.yaml; card
                      carries the gating terms (warnings: no uses, limitations or citation);
                      changelog section; a token.                → ReleasePlan or DiagnosticError
    inspect_remote    read-only Hub calls: refuse when the tag exists; find main's head and the
                      files of main that the release removes.   → RemoteState or DiagnosticError
    execute_release   create_repo (exist_ok) → gated access on → one commit to main (parent pinned)
                      → tag on that commit → check the tag's tree against the build folder.

Gating is switched on before any data is uploaded, so the rows are never public without the terms.
A released tag is never moved or overwritten: a new version needs a new version number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changelog import CHANGELOG, changelog_section, read_changelog
from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..emit.manifest import file_sha256
from ..loader import KeyPath, LoadedDocument
from ..paths import display_path
from ..projecttypes import Project
from ..reading import DATA_FILE, DOCUMENT, read_bytes, read_text
from .buildfolder import MANIFEST, BuildFolder, count_rows, folder_files, integrity_problems
from .hub import (
    HUB_MANAGED,
    REPO_TYPE,
    HubSession,
    branch_head,
    card_rejections,
    git_blob_oid,
    remote_files,
    remote_tags,
)


def release_tag(version: str) -> str:
    return f"v{version}"


@dataclass(frozen=True)
class PlannedFile:
    path: str  # path in the repository (POSIX)
    size: int
    sha256: str


@dataclass(frozen=True)
class ReleasePlan:
    repo_id: str
    version: str
    tag: str
    build_root: Path
    files: tuple[PlannedFile, ...]
    commit_message: str
    commit_description: str
    private: bool
    warnings: tuple[Diagnostic, ...] = ()  # what the card lacks: the release goes ahead, but say so

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class RemoteState:
    exists: bool
    private: bool | None
    gated: bool | str | None
    main_head: str | None
    removed_files: tuple[str, ...]  # on main now, absent from the release: the commit deletes them
    tags: tuple[str, ...]
    warnings: tuple[Diagnostic, ...] = field(default=())


@dataclass(frozen=True)
class ReleaseResult:
    commit_oid: str
    commit_url: str
    tag: str
    verified_files: int


# -- local checks -------------------------------------------------------------------------------------


def unreviewed_translations(project: Project) -> list[Diagnostic]:
    """Every text still marked ``status: machine``: machine output must be read by a person first."""
    from ..schema import LocalizedText, TranslationStatus

    found = []
    for doc, prefix, model in _source_models(project):
        for key_path, text in _localized_texts(model, prefix):
            if isinstance(text, LocalizedText) and text.status is TranslationStatus.MACHINE:
                found.append(
                    doc.diagnostic(
                        key_path + ("status",),
                        "P006",
                        f"unreviewed machine translation: {text.ja or text.en!r}",
                        hint="read and fix the Japanese, then set `status: reviewed`",
                    )
                )
    return found


def unreviewed_templates(project: Project) -> list[Diagnostic]:
    """JA118 as `build --release` reports it: a template no one has marked ``reviewed`` is not released,
    whichever way its build was made."""
    from ..checks import run_checks

    return [
        d
        for d in run_checks(project, release=True, only=("JA118",))
        if d.code == "JA118" and d.severity is Severity.ERROR
    ]


def _source_models(project: Project) -> Iterable[tuple[LoadedDocument, KeyPath, Any]]:
    yield project.dataset_doc, (), project.dataset
    for group in project.vocab.values():
        yield group.doc, group.key_path, group.group
    for template in project.templates:
        yield template.doc, (), template.model


def _localized_texts(value: Any, key_path: KeyPath) -> Iterable[tuple[KeyPath, Any]]:
    """Walk a validated model like its YAML: field keys (aliases honoured), list indexes, dict keys."""
    from pydantic import BaseModel

    from ..schema import LocalizedText

    if isinstance(value, LocalizedText):
        yield key_path, value
    elif isinstance(value, BaseModel):
        for name, info in type(value).model_fields.items():
            yield from _localized_texts(getattr(value, name), key_path + (info.alias or name,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _localized_texts(item, key_path + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _localized_texts(item, key_path + (key,))


def audit_problems(project: Project, build: BuildFolder) -> list[Diagnostic]:
    """The shortcut audit the build recorded in its manifest: a probe above its bar stops the release
    (AU001), and so does a build without a readable audit (AU004)."""
    from pydantic import ValidationError

    from ..audit.report import AuditReport, problems

    recorded = build.manifest.get("audit")
    where = display_path(build.root / MANIFEST)
    if not isinstance(recorded, dict):
        return [
            Diagnostic(
                "AU004",
                "the build records no shortcut audit (it was built by a jbcompile without one)",
                path=where,
                hint="rebuild it with `jbcompile build --release`",
            )
        ]
    try:
        report = AuditReport.model_validate(
            {key: value for key, value in recorded.items() if key != "passed"}
        )
    except ValidationError as error:
        return [
            Diagnostic(
                "AU004",
                f"the build's shortcut audit cannot be read: {error.errors()[0]['msg']}",
                path=where,
                hint="rebuild it with `jbcompile build --release`",
            )
        ]
    return problems(report, release=True, doc=project.dataset_doc, template_files=project.template_files())


def freshness_problems(project: Project, build: BuildFolder) -> list[Diagnostic]:
    """Is this build folder exactly what the current sources and compiler produce?"""
    from .. import __version__
    from ..sourcefiles import sources_hash

    manifest = build.manifest
    where = str(build.root / MANIFEST)
    rebuild = "run `jbcompile build` again, then publish"
    problems = []
    if manifest.get("dataset") != project.dataset.name:
        problems.append(
            Diagnostic(
                code="P004",
                message=f"the build is of dataset {manifest.get('dataset')!r}, the sources are "
                f"{project.dataset.name!r}",
                path=where,
                hint="point --build and --sources at the same benchmark",
            )
        )
    if manifest.get("version") != project.dataset.version:
        problems.append(
            Diagnostic(
                code="P004",
                message=f"the build is version {manifest.get('version')}, dataset.yaml says "
                f"{project.dataset.version}",
                path=where,
                hint=rebuild,
            )
        )
    if manifest.get("compiler_version") != __version__:
        problems.append(
            Diagnostic(
                code="P002",
                message=f"stale build: made by jbcompile {manifest.get('compiler_version')}, this is "
                f"jbcompile {__version__}",
                path=where,
                hint=rebuild,
            )
        )
    if manifest.get("sources_hash") != sources_hash(project.root):
        problems.append(
            Diagnostic(
                code="P002",
                message=f"stale build: the sources in {display_path(project.root)} changed since this build",
                path=where,
                hint=rebuild,
            )
        )
    return problems


def emptiness_problems(build: BuildFolder) -> list[Diagnostic]:
    """A release with no rows (or a config without rows) would burn a version number on nothing."""
    rows = build.rows
    empty = sorted(name for name, n in rows.items() if not isinstance(n, int) or n <= 0)
    if rows and not empty:
        return _data_row_problems(build)
    what = f"config(s) {', '.join(empty)} have no rows" if rows and empty else "the build has no rows"
    return [
        Diagnostic(
            code="P015",
            message=f"{what}: an empty release is refused",
            path=str(build.root / MANIFEST),
            hint="check that the sources hold templates (templates/<Category>/*.yaml), rebuild, publish",
        )
    ]


def _data_row_problems(build: BuildFolder) -> list[Diagnostic]:
    """The data files must hold the rows the manifest counts (read from the parquet footers only)."""
    problems = []
    for config, expected in sorted(build.rows.items()):
        try:
            found = count_rows(build, config)
        except DiagnosticError as error:
            problems.extend(error.diagnostics)
            continue
        if found != expected:
            problems.append(
                Diagnostic(
                    code="P016",
                    message=f"config {config}: the data holds {found} rows, the manifest says {expected}",
                    path=str(build.root / MANIFEST),
                    hint="rebuild with `jbcompile build`; never edit a build folder by hand",
                )
            )
    return problems


def gating_problems(build: BuildFolder) -> list[Diagnostic]:
    """The card must carry the terms of use the Hub shows before access (extra_gated_prompt/fields)."""
    card = build.root / "README.md"
    meta = card_metadata(read_text(card, DOCUMENT)) if card.is_file() else None
    missing = [key for key in ("extra_gated_prompt", "extra_gated_fields") if not (meta or {}).get(key)]
    if not missing:
        return []
    return [
        Diagnostic(
            code="P008",
            message=f"the dataset card has no {' or '.join(missing)}: the Hub would gate access without "
            "showing the terms of use",
            path=str(card),
            hint="set terms_of_use in dataset.yaml and rebuild",
        )
    ]


def placeholder_problems(project: Project) -> list[Diagnostic]:
    """A field of dataset.yaml that still holds what `jbcompile import` or `init` wrote for the
    maintainers to replace (:mod:`jbcompile.placeholders`): a release would publish it as the card."""
    from ..placeholders import placeholder_fields

    return [
        project.dataset_doc.diagnostic(
            (field,),
            "P017",
            f"{field} is still a placeholder: {str(getattr(project.dataset, field)).strip()!r}",
            hint=f"write {what} in dataset.yaml, rebuild and publish",
        )
        for field, what in placeholder_fields(project.dataset)
    ]


# What readers of a benchmark's card look for, where dataset.yaml holds it, and what it tells them.
CARD_ESSENTIALS = (
    (("card", "uses"), "what the dataset is for (its Uses section)"),
    (("card", "risks"), "its limitations (the Bias, risks and limitations section)"),
    (("citation",), "how to cite it (its Citation section, BibTeX)"),
)


def card_gaps(project: Project) -> list[Diagnostic]:
    """Warnings for what the card will not say: uses, limitations, citation (each empty in dataset.yaml)."""
    from ..loader import value_at

    found = []
    for key_path, what in CARD_ESSENTIALS:
        field = ".".join(key_path)
        value = value_at(project.dataset_doc.data, key_path)
        if isinstance(value, str) and value.strip():
            continue
        found.append(
            project.dataset_doc.diagnostic(
                key_path,
                "P018",
                f"the dataset card does not say {what}: {field} is empty in dataset.yaml",
                severity=Severity.WARNING,
                hint=f"set {field} in dataset.yaml and rebuild: readers of a benchmark look for it",
            )
        )
    return found


def card_metadata(text: str) -> dict | None:
    """The card's YAML front matter, read by the bounded source loader (no alias bomb, no nesting
    without end); None when it has none or it cannot be read."""
    from ..loader import parse_yaml

    match = re.match(r"^---\s*\n(.*?)\n---\s*(?:\n|$)", text, re.DOTALL)
    if not match:
        return None
    try:
        meta = parse_yaml(match.group(1), "README.md").data
    except DiagnosticError:
        return None
    return meta if isinstance(meta, dict) else None


def prepare_release(
    project: Project,
    build: BuildFolder,
    repo_id: str,
    *,
    private: bool,
    token: str | None,
    require_token: bool = True,
) -> ReleasePlan:
    """Every local reason to refuse, all at once; otherwise the exact plan of what will be uploaded.

    ``require_token=False`` is for a dry run, which only reads the Hub and may do so anonymously.
    """
    version = project.dataset.version
    tag = release_tag(version)
    problems: list[Diagnostic] = []
    problems += integrity_problems(build)
    problems += emptiness_problems(build)
    problems += freshness_problems(project, build)
    problems += unreviewed_translations(project)
    problems += unreviewed_templates(project)
    problems += placeholder_problems(project)
    problems += gating_problems(build)
    problems += card_gaps(project)
    problems += audit_problems(project, build)
    changelog = read_changelog(project.root)
    description = changelog_section(changelog, version) if changelog is not None else None
    if description is None:
        problems.append(
            Diagnostic(
                code="P010",
                message=f"{CHANGELOG} has no section for {version}"
                if changelog is not None
                else f"no {CHANGELOG} in the sources",
                path=display_path(project.root / CHANGELOG),
                hint=f"add a `## {version}` section saying what changed; it becomes the release description",
            )
        )
    if not token and require_token:
        problems.append(
            Diagnostic(
                code="P007",
                message="no Hugging Face token: publishing needs a write token",
                hint="set HF_TOKEN, or run `hf auth login`",
            )
        )
    if any(p.severity is Severity.ERROR for p in problems):
        raise DiagnosticError(problems)
    files = tuple(
        PlannedFile(name, path.stat().st_size, file_sha256(path))
        for name, path in folder_files(build.root).items()
    )
    return ReleasePlan(
        repo_id=repo_id,
        version=version,
        tag=tag,
        build_root=build.root,
        files=files,
        commit_message=f"Release {tag}",
        commit_description=description or "",
        private=private,
        warnings=tuple(p for p in problems if p.severity is not Severity.ERROR),
    )


# -- the Hub --------------------------------------------------------------------------------------------


def inspect_remote(session: HubSession, plan: ReleasePlan) -> RemoteState:
    """Read-only look at the Hub: refuse when the release tag already exists (P001) or the Hub would
    reject the card's metadata (P014), before anything is written."""
    from huggingface_hub.errors import RepositoryNotFoundError

    card = plan.build_root / "README.md"
    rejections = card_rejections(session, read_text(card, DOCUMENT)) if card.is_file() else []
    if rejections:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P014",
                    message=f"the Hub rejects the dataset card's metadata: {reason}",
                    path=str(card),
                    hint="fix the source of that field (dataset.yaml or cards/), rebuild and publish",
                )
                for reason in rejections
            ]
        )
    tags = remote_tags(session, plan.repo_id)
    if tags is None:
        return RemoteState(False, None, None, None, (), ())
    if plan.tag in tags:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P001",
                    message=f"{plan.repo_id} already has tag {plan.tag} (commit {tags[plan.tag][:12]}): a "
                    "released version is never overwritten",
                    hint="bump `version` in dataset.yaml, add its CHANGELOG section, rebuild and publish",
                )
            ]
        )
    try:
        info = session.api.dataset_info(plan.repo_id, revision="main")
    except RepositoryNotFoundError:
        return RemoteState(False, None, None, None, (), tuple(tags))
    on_main = {s.rfilename for s in info.siblings or []}
    release = {f.path for f in plan.files}
    removed = tuple(sorted(on_main - release - HUB_MANAGED))
    warnings: tuple[Diagnostic, ...] = ()
    if plan.private and info.private is False:
        warnings = (
            Diagnostic(
                code="P011",
                message=f"{plan.repo_id} exists and is public; --private does not change an existing repo",
                severity=Severity.WARNING,
                hint="change the visibility in the repository settings if it must be private",
            ),
        )
    return RemoteState(True, info.private, info.gated, info.sha, removed, tuple(tags), warnings)


def execute_release(
    session: HubSession,
    plan: ReleasePlan,
    remote: RemoteState,
    on_step: Callable[[str], None] = lambda step: None,
) -> ReleaseResult:
    """Create, gate, commit, tag, then check the tag holds exactly the build folder.

    ``on_step`` hears about every step once it is done, so a failure half-way says what already happened.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = session.api
    url = api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=plan.private, exist_ok=True)
    on_step(f"repository {url}" + (" exists" if remote.exists else " created"))
    if not remote.gated:  # keep a stricter manual gate that the maintainers chose
        api.update_repo_settings(plan.repo_id, repo_type=REPO_TYPE, gated="auto")
        on_step("gated access on (auto approval after accepting the terms)")
    head = remote.main_head if remote.exists else branch_head(session, plan.repo_id)
    operations: list[Any] = [CommitOperationDelete(path_in_repo=path) for path in remote.removed_files]
    operations += [
        CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(plan.build_root / f.path))
        for f in plan.files
    ]
    # create_commit (not upload_folder): one atomic commit, README metadata validated by the Hub before
    # any upload, and the parent pinned so a concurrent push makes the release fail instead of mixing in.
    commit = api.create_commit(
        plan.repo_id,
        operations,
        commit_message=plan.commit_message,
        commit_description=plan.commit_description,
        repo_type=REPO_TYPE,
        revision="main",
        parent_commit=head,
    )
    on_step(f"committed {len(plan.files)} files to main: {commit.oid}")
    api.create_tag(
        plan.repo_id, tag=plan.tag, revision=commit.oid, tag_message=plan.commit_message, repo_type=REPO_TYPE
    )
    on_step(f"tagged {plan.tag} → {commit.oid[:12]}")
    mismatches = tag_mismatches(session, plan)
    if mismatches:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="P012",
                    message=f"tag {plan.tag} does not hold the build folder: {problem}",
                    hint="inspect the repository; the tag must not be reused — publish a new version",
                )
                for problem in mismatches
            ]
        )
    return ReleaseResult(commit.oid, commit.commit_url, plan.tag, len(plan.files))


def tag_mismatches(session: HubSession, plan: ReleasePlan) -> list[str]:
    """Compare the tag's tree with the planned files by size and hash, without downloading."""
    remote = remote_files(session, plan.repo_id, plan.tag)
    problems = []
    for planned in plan.files:
        found = remote.get(planned.path)
        if found is None:
            problems.append(f"{planned.path} is missing")
            continue
        if found.size != planned.size:
            problems.append(f"{planned.path} has {found.size} bytes, expected {planned.size}")
        elif found.sha256 is not None:
            if found.sha256 != planned.sha256:
                problems.append(f"{planned.path} has another sha256")
        elif found.git_oid != git_blob_oid(read_bytes(plan.build_root / planned.path, DATA_FILE)):
            problems.append(f"{planned.path} has other content")
    extra = sorted(set(remote) - {f.path for f in plan.files} - HUB_MANAGED)
    problems.extend(f"{path} is not part of the build" for path in extra)
    return problems


def plan_summary(plan: ReleasePlan, remote: RemoteState | None) -> dict[str, Any]:
    """What a release creates and uploads, as plain data (dry-run output, text or JSON)."""
    return {
        "repo_id": plan.repo_id,
        "repo_type": REPO_TYPE,
        "create_repo": None if remote is None else not remote.exists,
        "private": plan.private if remote is None or not remote.exists else remote.private,
        "gated": "auto" if remote is None or not remote.gated else remote.gated,
        "branch": "main",
        "parent_commit": None if remote is None else remote.main_head,
        "commit_message": plan.commit_message,
        "commit_description": plan.commit_description,
        "tag": plan.tag,
        "upload": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in plan.files],
        "delete": list(remote.removed_files) if remote else [],
        "total_bytes": plan.total_bytes,
        "hub_read": remote is not None,
    }
