"""`jbcompile publish`, `verify` and `diff`: versioned releases on the Hugging Face Hub."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer
from rich.markup import escape

from ..diagnostics import Diagnostic, DiagnosticError, Severity, to_json_record
from ..jsonl import dumps
from .app import (
    EXIT_FINDINGS,
    app,
    check_choice,
    err_console,
    fail,
    option_error,
    out_console,
    print_diagnostics,
    print_table,
    sources_for,
)
from .build import SOURCES_HELP

FORMAT_HELP = "text (default) or json."


def _check_format(fmt: str) -> None:
    check_choice("--format", fmt, ("text", "json"))


def _repo_id_or_exit(repo: str) -> str:
    from ..publish.hub import parse_repo_id

    if parse_repo_id(repo) is None:
        raise option_error(
            "CL001",
            f"--repo takes ORG/NAME; got {repo!r}",
            "name the Hub dataset repository as ORG/NAME, e.g. --repo my-lab/ja-bias-bench",
        )
    return repo


@app.command()
def publish(
    repo: str | None = typer.Option(
        None, "--repo", help="The Hub dataset repository, ORG/NAME. Default: hub_repo in dataset.yaml."
    ),
    private: bool = typer.Option(False, "--private", help="Create the repository private (new repos only)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print what would be created and uploaded; write nothing."
    ),
    sources: Path = typer.Option(None, "--sources", "-s", help=SOURCES_HELP),
    build: Path = typer.Option(
        None, "--build", "-b", help="The build folder to publish. Default: the one `jbcompile build` writes."
    ),
    allow_older: bool = typer.Option(
        False,
        "--allow-older",
        help="Publish a version below the latest release (a fix of an older line): main goes back to it.",
    ),
    fmt: str = typer.Option("text", "--format", help=FORMAT_HELP),
) -> None:
    """Publish the build of the version in dataset.yaml: one commit on main, tagged vX.Y.Z, gated.

    Refuses, with nothing pushed, when the tag holds anything else, the version was released before or
    is below the latest release, the build is stale or names another repository, a machine translation
    is unreviewed, the changelog has no section for the version, or there is no token. A tag that holds
    exactly this build is a publish that got that far: it is checked and finished.
    """
    from ..project import load_project
    from ..publish.buildfolder import open_build
    from ..publish.hub import hub_errors, offline_problem, open_session, resolve_token
    from ..publish.release import Progress, execute_release, inspect_remote, plan_release, plan_summary

    _check_format(fmt)
    choice = sources_for(sources, "publishing")
    try:
        project = load_project(choice.root)
        build_folder = open_build(build or choice.build_folder())
    except DiagnosticError as error:
        raise fail(error, fmt) from None
    target = repo or project.dataset.hub_repo
    if target is None:
        raise option_error(
            "CL001", "no repository to publish to", hint="give --repo ORG/NAME, or set hub_repo"
        )
    repo_id = _repo_id_or_exit(target)
    # Warnings print at once as text; with --format json they join the one JSON document printed last.
    notes: list[Diagnostic] = []

    def note(*found: Diagnostic) -> None:
        if fmt == "json":
            notes.extend(found)
        else:
            print_diagnostics(found, fmt)

    try:
        token = resolve_token()
    except Exception as error:  # e.g. a failed OIDC exchange; its message never holds the token
        token = None
        note(
            Diagnostic(
                code="P007",
                message=f"no usable token: {type(error).__name__}",
                hint="set HF_TOKEN to a write token, or run `hf auth login`",
            )
        )
    session = open_session(token)
    # A dry run in offline mode shows the plan from the build alone: no token, no network.
    offline = dry_run and offline_problem("publish") is not None
    plan, errors = plan_release(
        project, build_folder, repo_id, private=private, token=token, require_token=not dry_run
    )
    note(*plan.warnings)
    if dry_run and not token:
        how = "the Hub is not read in offline mode" if offline else "the Hub is read anonymously"
        note(
            Diagnostic(
                code="P007",
                message=f"no Hugging Face token: {how} for this dry run",
                severity=Severity.WARNING,
                hint="set HF_TOKEN (or run `hf auth login`) before the real publish",
            )
        )
    remote = None
    # The Hub's read-only checks run even when a local check refuses, so that every problem is reported
    # at once — except without a token outside a dry run, where nothing is contacted.
    if not offline and (token or dry_run):
        try:
            with hub_errors(session, f"reading {repo_id} on the Hub"):
                remote = inspect_remote(session, plan, allow_older=allow_older)
        except DiagnosticError as error:
            errors += error.diagnostics
    if any(d.severity is Severity.ERROR for d in errors):
        print_diagnostics([*notes, *errors], fmt)
        if fmt != "json":
            err_console.print(
                f"[bold red]refused[/]: {escape(repo_id)} {escape(project.dataset.version)}; "
                "nothing was pushed."
            )
            if dry_run and any(d.code == "P009" for d in errors):
                err_console.print("HF_HUB_OFFLINE=1 shows the plan without reading the Hub.", markup=False)
        raise typer.Exit(EXIT_FINDINGS) from None
    if remote is not None:
        note(*remote.warnings)
    summary = plan_summary(plan, remote)
    summary["diagnostics"] = [to_json_record(d) for d in notes]
    if dry_run:
        if fmt == "json":
            print(dumps({"dry_run": True, **summary}, indent=2))
        else:
            _print_plan(summary)
        return
    assert remote is not None, "only a dry run goes without reading the Hub"

    def step(message: str) -> None:
        if fmt != "json":
            err_console.print(f"[green]✓[/] {escape(session.redact(message))}")

    progress = Progress(step)
    try:
        with hub_errors(session, f"publishing {plan.tag} to {repo_id}"):
            result = execute_release(session, plan, remote, progress)
    except DiagnosticError as error:
        print_diagnostics([*notes, *error.diagnostics], fmt)
        if fmt != "json":
            done = "; ".join(progress.done) if progress.done else "nothing"
            err_console.print(
                f"[bold red]publish failed[/]; done before the failure: {escape(session.redact(done))}."
            )
            if progress.uncertain:
                err_console.print(
                    f"The Hub did not confirm the last write: {session.redact(progress.uncertain)} may "
                    "have landed. Run publish again: it finishes a release that got further than it "
                    "could tell.",
                    markup=False,
                )
        raise typer.Exit(EXIT_FINDINGS) from None
    if fmt == "json":
        print(
            dumps(
                {
                    "dry_run": False,
                    **summary,
                    "commit": result.commit_oid,
                    "commit_url": result.commit_url,
                    "resumed": result.resumed,
                },
                indent=2,
            )
        )
    else:
        what = "already published" if result.resumed else "published"
        out_console.print(
            f"[bold green]{what}[/] {repo_id} {result.tag} "
            f"({result.verified_files} files checked on the tag)\n"
            f'load it with: load_dataset("{repo_id}", revision="{result.tag}")'
        )


def _print_plan(summary: dict) -> None:
    """Plain lines, never truncated: the hashes must be complete to be of any use."""
    visibility = "private" if summary["private"] else "public"
    read = summary["hub_read"]
    action = "create" if summary["create_repo"] else "use existing" if read else "create (or use existing)"
    parent = summary["parent_commit"] or (
        "the first commit of the new repository" if read else "the head of main (not read: offline)"
    )
    listing = [f"  {f['size']:>12,}  {f['sha256']}  {f['path']}" for f in summary["files"]]
    count = f"{len(summary['files'])} files, {summary['total_bytes']:,} bytes (size sha256 path)"
    if summary["tag_holds_build"]:
        resumed = f"tag {summary['tag']} already holds these files (commit {summary['tag_holds_build']})"
        commit_lines = [
            f"commit       none: {resumed}; publish checks the tag (P012) and finishes",
            f"upload       nothing; the release's {count}:",
            *listing,
        ]
        tag_line = f"tag          {summary['tag']} exists: kept as it is"
    elif summary["main_holds_build"]:
        head = summary["main_holds_build"]
        commit_lines = [
            f"commit       nothing to commit, main already holds these files (commit {head})",
            f"upload       nothing; the release's {count}:",
            *listing,
        ]
        tag_line = f"tag          {summary['tag']} on commit {head}"
    else:
        commit_lines = [
            f"commit       to main, on top of {parent}: {summary['commit_message']!r}",
            "description  " + summary["commit_description"].replace("\n", "\n             "),
            f"upload       {count}:",
            *listing,
            *(f"delete       {path} (on main, not part of this build)" for path in summary["delete"]),
        ]
        tag_line = f"tag          {summary['tag']} on that commit"
    lines = [
        "Dry run: nothing is created or uploaded."
        + ("" if read else " Offline: the Hub was not read (the real publish checks the tag and the card)."),
        f"repository   {action} dataset repository {summary['repo_id']} ({visibility})",
        f"gated access {summary['gated']}, terms from the card (extra_gated_prompt, extra_gated_fields)",
        *commit_lines,
        tag_line,
    ]
    for line in lines:
        out_console.print(line, markup=False, soft_wrap=True)


@app.command()
def verify(
    repo: str = typer.Option(..., "--repo", help="The Hub dataset repository, ORG/NAME."),
    revision: str = typer.Option(..., "--revision", help="The release tag (vX.Y.Z) or a commit id."),
    sources: Path = typer.Option(None, "--sources", "-s", help=SOURCES_HELP),
    cards: Path = typer.Option(
        None, "--cards", help="Card templates, if the release was built with --cards."
    ),
    fmt: str = typer.Option("text", "--format", help=FORMAT_HELP),
) -> None:
    """Check a release against a fresh build of the sources (file hashes, row counts); 1 if they differ."""
    from ..publish.hub import HubRef, offline_problem, open_session, resolve_token
    from ..publish.verify import verify_release
    from .build import check_cards

    _check_format(fmt)
    check_cards(cards)
    ref = HubRef(_repo_id_or_exit(repo), revision)
    offline = offline_problem("verify")
    if offline:
        raise fail(DiagnosticError([offline]), fmt)
    root = sources_for(sources, f"verifying {ref} against").root
    session = open_session(resolve_token())
    with tempfile.TemporaryDirectory(prefix="jbcompile-verify-") as workdir:
        try:
            report = verify_release(session, ref, root, Path(workdir), cards)
        except DiagnosticError as error:
            raise fail(error, fmt) from None
    if fmt == "json":
        print(dumps(report.as_dict(), indent=2))
    else:
        _print_verify(report)
    if not report.ok:
        raise typer.Exit(EXIT_FINDINGS)


def _print_verify(report) -> None:
    from rich.table import Table

    rows = ", ".join(f"{name} {counts['actual']}" for name, counts in report.rows.items())
    if report.ok:
        out_console.print(
            f"[bold green]verified[/] {escape(report.ref)} (commit {escape(str(report.commit))}): "
            f"{report.checked_files} files identical to a fresh build of the sources; rows: {escape(rows)}"
        )
        return
    table = Table(title=escape(f"{report.ref} differs from a fresh build of the sources"))
    for column in ("kind", "what", "fresh build", "release", "note"):
        table.add_column(column, overflow="fold")
    for d in report.differences:
        table.add_row(*_cells(d.kind, d.path, _short(d.expected), _short(d.actual), d.note))
    print_table(table)
    out_console.print(f"[bold red]{len(report.differences)} difference(s)[/]")


def _short(value: object) -> str:
    if value is None:
        return "—"
    text = str(value)
    return text[:16] + "…" if len(text) == 64 else text


@app.command()
def diff(
    old: str = typer.Argument(..., help="A build folder, or a Hub revision ORG/NAME@vX.Y.Z."),
    new: str = typer.Argument(..., help="A build folder, or a Hub revision ORG/NAME@vX.Y.Z."),
    fmt: str = typer.Option("text", "--format", help="text (a table, default) or json."),
) -> None:
    """Rows added, removed and changed between two builds, per config, category and template."""
    from ..publish.buildfolder import open_build
    from ..publish.diff import diff_builds
    from ..publish.hub import (
        download_revision,
        hub_errors,
        offline_problem,
        open_session,
        parse_hub_ref,
        resolve_token,
    )

    _check_format(fmt)
    with tempfile.TemporaryDirectory(prefix="jbcompile-diff-") as workdir:
        sides = []
        try:
            for index, spec in enumerate((old, new)):
                ref = parse_hub_ref(spec) if not Path(spec).exists() else None
                if ref is None:
                    sides.append(open_build(Path(spec)))
                    continue
                offline = offline_problem("diff of a Hub revision")
                if offline:
                    raise DiagnosticError([offline])
                session = open_session(resolve_token())
                with hub_errors(session, f"downloading {ref}"):
                    folder = download_revision(session, ref, Path(workdir) / str(index))
                sides.append(open_build(folder, what=f"revision {ref}"))
            result = diff_builds(sides[0], sides[1], old, new)
        except DiagnosticError as error:
            raise fail(error, fmt) from None
    if fmt == "json":
        print(dumps(result.as_dict(), indent=2))
    else:
        _print_diff(result)


def _print_diff(result) -> None:
    from rich.table import Table

    title = (
        f"{result.old['label']} (v{result.old['version']}) → {result.new['label']} (v{result.new['version']})"
    )
    summary = Table(title=escape(title))
    for column in ("config", "old rows", "new rows", "added", "removed", "changed", "unchanged"):
        summary.add_column(column, justify="left" if column == "config" else "right")
    for name, c in result.configs.items():
        summary.add_row(
            *_cells(
                name,
                *(f"{v:,}" for v in (c.old_rows, c.new_rows, c.added, c.removed, c.changed, c.unchanged)),
            )
        )
    print_table(summary)
    old_compiler, new_compiler = result.old["compiler_version"], result.new["compiler_version"]
    if old_compiler != new_compiler:
        out_console.print(
            f"note: built by jbcompile {old_compiler} and {new_compiler}; "
            "rows may differ because the compiler changed, not only the sources",
            markup=False,
        )
    if result.identical:
        out_console.print("no row differs")
        return
    groups = Table(title="changes per template")
    for column in ("config", "category", "template", "added", "removed", "changed"):
        groups.add_column(column, justify="right" if column in ("added", "removed", "changed") else "left")
    for g in result.groups:
        groups.add_row(
            *_cells(
                g.config, g.category, g.template_id, *(f"{len(v):,}" for v in (g.added, g.removed, g.changed))
            )
        )
    print_table(groups)
    for name, c in result.configs.items():
        if c.changed_columns:
            columns = ", ".join(f"{column} ({n})" for column, n in c.changed_columns.items())
            out_console.print(f"{name}: changed columns: {columns}", markup=False)


def _cells(*values: object) -> list:
    """Table cells as plain text: names from a build (categories, ids) are never read as markup."""
    from rich.text import Text

    return [Text(str(value)) for value in values]
