"""A release: the build folder of one version, published as one commit on ``main`` plus a tag ``vX.Y.Z``.

Order of operations (each step only runs when the previous one succeeded)::

    plan_release      local checks, no network: build present, intact, fresh, of this version, naming
                      the repository published to (hub_repo); no unreviewed machine translation; no
                      placeholder left in dataset.yaml; card carries the gating terms (warnings: no uses,
                      limitations or citation); changelog section; a token.  → ReleasePlan + problems
    inspect_remote    read-only Hub calls, run even when a local check refused, so every problem is
                      reported at once: the card's metadata (P014); the tag, refused when it holds
                      anything but this build (P001); a version released before or below the latest
                      (P020, P021); main's head and what the release removes.  → RemoteState
    execute_release   create_repo (exist_ok) → gated access on → one commit to main (parent pinned;
                      none when main already holds these files) → tag on that commit (none when the tag
                      already holds this build: a publish that got that far) → check the tag's tree
                      against the build folder (P012).

Gating is switched on before any data is uploaded, so the rows are never public without the terms.
A released tag is never moved or overwritten: a new version needs a new version number.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changelog import CHANGELOG, find_section, read_changelog
from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..emit.manifest import file_sha256
from ..loader import KeyPath, LoadedDocument
from ..paths import display_path
from ..projecttypes import Project
from ..reading import DATA_FILE, DOCUMENT, is_present, read_bytes, read_text
from ..schema.common import SEMVER
from .buildfolder import MANIFEST, BuildFolder, count_rows, folder_files, integrity_problems
from .hub import (
    HUB_MANAGED,
    REPO_TYPE,
    HubSession,
    answer_may_be_lost,
    branch_head,
    card_rejections,
    git_blob_oid,
    release_commits,
    remote_files,
    remote_tags,
)

_SEMVER = re.compile(SEMVER)


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
    # A publish that got this far before: the commit the tag names when it holds exactly this build (a
    # finished or half-finished release, resumed), and whether main's head already holds these files.
    tagged: str | None = None
    main_holds_build: bool = False


@dataclass(frozen=True)
class ReleaseResult:
    commit_oid: str
    commit_url: str
    tag: str
    verified_files: int
    resumed: bool = False  # the tag was already there, holding exactly this build


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
    meta = card_metadata(read_text(card, DOCUMENT)) if is_present(card, DOCUMENT) else None
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


def repo_problems(project: Project, repo_id: str) -> list[Diagnostic]:
    """The card and croissant.json of a build name the repository it is published to (``hub_repo`` of
    dataset.yaml, part of the sources, so `verify` rebuilds the same bytes): a release to any other
    repository would tell its readers to load the wrong one, and a build that names none would ship
    ``<org>/NAME`` as the repository to load."""
    named = project.dataset.hub_repo
    if named == repo_id:
        return []
    if named is None:
        message = (
            f"the build names no Hub repository: its card would tell readers to load "
            f'"<org>/{project.dataset.name}" and its croissant.json has no Hub url'
        )
        hint = f"set `hub_repo: {repo_id}` in dataset.yaml, rebuild and publish"
    else:
        message = (
            f"--repo is {repo_id}, but the build's card and croissant.json name {named} (hub_repo in "
            "dataset.yaml)"
        )
        hint = (
            f"publish to {named} (leave out --repo), or set `hub_repo: {repo_id}` in dataset.yaml and rebuild"
        )
    key_path = ("hub_repo",) if named is not None else ()
    return [project.dataset_doc.diagnostic(key_path, "P019", message, hint=hint)]


def changelog_problems(project: Project, version: str) -> tuple[str | None, list[Diagnostic]]:
    """The release description (the version's CHANGELOG section), or P010 saying what is missing."""
    changelog = read_changelog(project.root)
    section = find_section(changelog, version) if changelog is not None else None
    if section is not None and section.body:
        return section.body, []
    where = display_path(project.root / CHANGELOG)
    if changelog is None:
        message = f"no {CHANGELOG} in the sources"
    elif section is None:
        message = f"{CHANGELOG} has no section for {version}"
    else:
        message = f"the section for {version} in {CHANGELOG} is empty"
    return None, [
        Diagnostic(
            code="P010",
            message=message,
            path=where,
            line=section.line if section is not None else None,
            hint=(
                f"write what changed under `## {version}`"
                if section is not None
                else f"add a `## {version}` section saying what changed"
            )
            + "; it becomes the release description",
        )
    ]


def plan_release(
    project: Project,
    build: BuildFolder,
    repo_id: str,
    *,
    private: bool,
    token: str | None,
    require_token: bool = True,
) -> tuple[ReleasePlan, list[Diagnostic]]:
    """The plan of what will be uploaded and every local problem with it (errors and warnings), without
    refusing: the caller reports them together with what the Hub says (:func:`inspect_remote`).

    ``require_token=False`` is for a dry run, which only reads the Hub and may do so anonymously.
    """
    version = project.dataset.version
    tag = release_tag(version)
    problems: list[Diagnostic] = []
    problems += integrity_problems(build)
    problems += emptiness_problems(build)
    problems += freshness_problems(project, build)
    problems += repo_problems(project, repo_id)
    problems += unreviewed_translations(project)
    problems += unreviewed_templates(project)
    problems += placeholder_problems(project)
    problems += gating_problems(build)
    problems += card_gaps(project)
    problems += audit_problems(project, build)
    description, missing = changelog_problems(project, version)
    problems += missing
    if not token and require_token:
        problems.append(
            Diagnostic(
                code="P007",
                message="no Hugging Face token: publishing needs a write token",
                hint="set HF_TOKEN, or run `hf auth login`",
            )
        )
    files = tuple(
        PlannedFile(name, path.stat().st_size, file_sha256(path))
        for name, path in folder_files(build.root).items()
    )
    plan = ReleasePlan(
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
    return plan, [p for p in problems if p.severity is Severity.ERROR]


def prepare_release(
    project: Project,
    build: BuildFolder,
    repo_id: str,
    *,
    private: bool,
    token: str | None,
    require_token: bool = True,
) -> ReleasePlan:
    """Every local reason to refuse, all at once (DiagnosticError); otherwise the exact plan."""
    plan, errors = plan_release(
        project, build, repo_id, private=private, token=token, require_token=require_token
    )
    if errors:
        raise DiagnosticError([*errors, *plan.warnings])
    return plan


# -- the Hub --------------------------------------------------------------------------------------------


def version_key(version: str) -> tuple:
    """Semantic-version order: numbers compare as numbers, a pre-release sorts before its release."""
    core, _, pre = version.partition("-")
    numbers = tuple(int(part) if part.isdigit() else -1 for part in core.split("."))
    if not pre:
        return (numbers, (1,))
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (numbers, (0, parts))


def _released_version(name: str) -> str | None:
    """``v1.2.0`` (a tag) or ``Release v1.2.0`` (a release commit's title) → ``1.2.0``."""
    match = re.fullmatch(
        r"(?:Release )?v((?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?)", name
    )
    return match.group(1) if match else None


def history_problems(
    session: HubSession, plan: ReleasePlan, tags: dict[str, str], *, allow_older: bool
) -> list[Diagnostic]:
    """A version names one set of rows, forever: refuse a version whose release commit is in main's
    history with other files (its tag deleted, P020), and one below the latest release (P021: main
    would go back to older rows; ``--allow-older`` makes it a warning)."""
    problems: list[Diagnostic] = []
    commits = release_commits(session, plan.repo_id)
    for oid, title in commits:
        if title != plan.commit_message:
            continue
        differences = revision_mismatches(session, plan, oid)
        if differences:
            problems.append(
                Diagnostic(
                    code="P020",
                    message=f"{plan.repo_id} has a commit {oid[:12]} {title!r} in the history of main, "
                    f"without its tag, holding other files ({differences[0]}): version {plan.version} "
                    "was released before",
                    hint="bump `version` in dataset.yaml, add its CHANGELOG section, rebuild and publish",
                )
            )
            break
    released = {v for v in (_released_version(name) for name in tags) if v}
    released |= {v for v in (_released_version(title) for _, title in commits) if v}
    newer = sorted((v for v in released if version_key(v) > version_key(plan.version)), key=version_key)
    if newer:
        problems.append(
            Diagnostic(
                code="P021",
                message=f"{plan.version} is below the latest release of {plan.repo_id}, {newer[-1]}: main "
                "would go back to older rows",
                severity=Severity.WARNING if allow_older else Severity.ERROR,
                hint=f"give the release a version above {newer[-1]}; to publish an older line on purpose "
                "(a fix of an old version), pass --allow-older",
            )
        )
    return problems


def inspect_remote(session: HubSession, plan: ReleasePlan, *, allow_older: bool = False) -> RemoteState:
    """Read-only look at the Hub, every problem at once, before anything is written: the card's metadata
    the Hub would reject (P014); the tag, when it holds anything but this build (P001 — when it holds
    exactly this build, the release is resumed); a version released before or below the latest (P020,
    P021). Also whether main already holds these files (a commit landed, its tag did not)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    problems: list[Diagnostic] = []
    card = plan.build_root / "README.md"
    rejections = card_rejections(session, read_text(card, DOCUMENT)) if is_present(card, DOCUMENT) else []
    problems += [
        Diagnostic(
            code="P014",
            message=f"the Hub rejects the dataset card's metadata: {reason}",
            path=str(card),
            hint="fix the source of that field (dataset.yaml or cards/), rebuild and publish",
        )
        for reason in rejections
    ]
    tags = remote_tags(session, plan.repo_id)
    if tags is None:
        _raise_errors(problems)
        return RemoteState(False, None, None, None, (), ())
    tagged = None
    if plan.tag in tags:
        differences = revision_mismatches(session, plan, tags[plan.tag])
        if differences:
            problems.append(
                Diagnostic(
                    code="P001",
                    message=f"{plan.repo_id} already has tag {plan.tag} (commit {tags[plan.tag][:12]}) "
                    f"holding other files ({differences[0]}): a released version is never overwritten",
                    hint="bump `version` in dataset.yaml, add its CHANGELOG section, rebuild and publish",
                )
            )
        else:
            tagged = tags[plan.tag]  # a publish of this very build got that far: finish it
    problems += history_problems(session, plan, tags, allow_older=allow_older) if tagged is None else []
    _raise_errors(problems)
    try:
        info = session.api.dataset_info(plan.repo_id, revision="main")
    except RepositoryNotFoundError:
        return RemoteState(False, None, None, None, (), tuple(tags))
    on_main = {s.rfilename for s in info.siblings or []}
    release = {f.path for f in plan.files}
    removed = tuple(sorted(on_main - release - HUB_MANAGED))
    holds = not removed and on_main >= release and not revision_mismatches(session, plan, info.sha)
    warnings = [p for p in problems if p.severity is not Severity.ERROR]
    if plan.private and info.private is False:
        warnings.append(
            Diagnostic(
                code="P011",
                message=f"{plan.repo_id} exists and is public; --private does not change an existing repo",
                severity=Severity.WARNING,
                hint="change the visibility in the repository settings if it must be private",
            )
        )
    return RemoteState(
        True, info.private, info.gated, info.sha, removed, tuple(tags), tuple(warnings), tagged, holds
    )


def _raise_errors(problems: list[Diagnostic]) -> None:
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors:
        raise DiagnosticError(problems)


@dataclass
class Progress:
    """What a release has done so far, and the write whose answer was lost (it may have landed), so a
    failure half-way can say both."""

    on_step: Callable[[str], None] = lambda step: None
    done: list[str] = field(default_factory=list)
    uncertain: str | None = None

    def step(self, message: str) -> None:
        self.done.append(message)
        self.on_step(message)

    @contextmanager
    def writing(self, what: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:
            if answer_may_be_lost(error):
                self.uncertain = what
            raise


def execute_release(
    session: HubSession,
    plan: ReleasePlan,
    remote: RemoteState,
    progress: Progress | None = None,
) -> ReleaseResult:
    """Create, gate, commit, tag, then check the tag holds exactly the build folder. A tag that already
    holds this build (a publish whose answer was lost) is only checked; a main that already holds these
    files gets no second commit.

    ``progress`` hears about every step once it is done, so a failure half-way says what already happened.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    progress = progress or Progress()
    api = session.api
    with progress.writing(f"creating the repository {plan.repo_id}"):
        url = api.create_repo(plan.repo_id, repo_type=REPO_TYPE, private=plan.private, exist_ok=True)
    progress.step(f"repository {url}" + (" exists" if remote.exists else " created"))
    if not remote.gated:  # keep a stricter manual gate that the maintainers chose
        with progress.writing("turning gated access on"):
            api.update_repo_settings(plan.repo_id, repo_type=REPO_TYPE, gated="auto")
        progress.step("gated access on (auto approval after accepting the terms)")
    if remote.tagged is not None:
        progress.step(f"tag {plan.tag} already holds these files (commit {remote.tagged}): nothing to upload")
        oid = remote.tagged
    else:
        oid = _commit_release(session, plan, remote, progress, CommitOperationAdd, CommitOperationDelete)
        with progress.writing(f"tag {plan.tag} on {oid[:12]}"):
            api.create_tag(
                plan.repo_id, tag=plan.tag, revision=oid, tag_message=plan.commit_message, repo_type=REPO_TYPE
            )
        progress.step(f"tagged {plan.tag} → {oid[:12]}")
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
    commit_url = f"{session.endpoint}/datasets/{plan.repo_id}/commit/{oid}"
    return ReleaseResult(oid, commit_url, plan.tag, len(plan.files), resumed=remote.tagged is not None)


def _commit_release(
    session: HubSession, plan: ReleasePlan, remote: RemoteState, progress: Progress, add: Any, delete: Any
) -> str:
    """The release commit on main, or main's head when it already holds exactly these files."""
    head = remote.main_head if remote.exists else branch_head(session, plan.repo_id)
    if remote.main_holds_build and head is not None:
        progress.step(f"nothing to commit, main already holds these files (commit {head})")
        return head
    operations: list[Any] = [delete(path_in_repo=path) for path in remote.removed_files]
    operations += [
        add(path_in_repo=f.path, path_or_fileobj=str(plan.build_root / f.path)) for f in plan.files
    ]
    # create_commit (not upload_folder): one atomic commit, README metadata validated by the Hub before
    # any upload, and the parent pinned so a concurrent push makes the release fail instead of mixing in.
    with progress.writing(f"the commit {plan.commit_message!r} of {len(plan.files)} files to main"):
        commit = session.api.create_commit(
            plan.repo_id,
            operations,
            commit_message=plan.commit_message,
            commit_description=plan.commit_description,
            repo_type=REPO_TYPE,
            revision="main",
            parent_commit=head,
        )
    if commit.oid == head:  # the client skips a commit that changes nothing
        progress.step(f"nothing to commit, main already holds these files (commit {head})")
    else:
        progress.step(f"committed {len(plan.files)} files to main: {commit.oid}")
    return str(commit.oid)


def tag_mismatches(session: HubSession, plan: ReleasePlan) -> list[str]:
    """Compare the tag's tree with the planned files by size and hash, without downloading."""
    return revision_mismatches(session, plan, plan.tag)


def revision_mismatches(session: HubSession, plan: ReleasePlan, revision: str) -> list[str]:
    """How a revision's tree differs from the planned files (size and hash; nothing is downloaded)."""
    remote = remote_files(session, plan.repo_id, revision)
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
    files = [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in plan.files]
    tagged = remote.tagged if remote else None
    on_main = remote.main_head if remote and remote.main_holds_build and tagged is None else None
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
        # a resumed release: the tag already holds these files, or main does (no commit is made)
        "tag_holds_build": tagged,
        "main_holds_build": on_main,
        "files": files,
        "upload": [] if tagged or on_main else files,
        "delete": list(remote.removed_files) if remote and not tagged else [],
        "total_bytes": plan.total_bytes,
        "hub_read": remote is not None,
    }
