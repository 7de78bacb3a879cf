"""The compile pipeline: sources → checked project → rows per config → verified → build folder.

Rows stream: a kind makes each template's rows lazily (``kinds.TemplateRows``) and they go to a *sink*
``BATCH_ROWS`` at a time, so not even one template's rows are held at once; each config's verifier
keeps only the summaries its invariants need, so memory does not grow with the rows. A row identical to
an earlier row of its config in everything it shows is left out on the way (one 16-byte hash per row is
kept, see :mod:`jbcompile.audit.identical`), with a note at its template. ``build_folder``
sends them straight into the data files of a staging folder that replaces the build folder only when
every check passed (a failed build leaves the previous one untouched); before the card and the manifest
are written, the shortcut audit (:mod:`jbcompile.audit`) reads the staged data files. ``compile_project``
alone keeps the rows in memory (tests, library use) and writes nothing; ``write_build`` writes such a
compile.
"""

from __future__ import annotations

import errno
import gc
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from .compiled import Compiled, ConfigRows, ProgressCallback
from .designs import ConfigSpec, Row, get_kind, kind_names
from .diagnostics import Diagnostic, DiagnosticError, Severity, has_errors
from .outputs import Output, claim, overlaps, refuse
from .paths import display_path, file_in_the_way
from .projecttypes import Project
from .rowlimits import RowBudget
from .sidework import SideProcess
from .sourcefiles import is_jbcompile_manifest

if TYPE_CHECKING:
    import numpy as np

    from .projecttypes import SourceTemplate

FORMATS = ("parquet", "jsonl")


# Rows of one template taken at a time: a template's rows never need to be in memory at once.
BATCH_ROWS = 10_000
# Where a compile sends the rows of one config, in build order, at most BATCH_ROWS at a time.
RowSink = Callable[[ConfigSpec, Sequence[Row]], None]


def run_source_checks(project: Project, *, release: bool = False) -> list[Diagnostic]:
    """The lint rules of `jbcompile check` (always installed: a build never skips them). Imported here:
    a large build runs them in its side process, so its own start-up does not pay for the rules."""
    from .checks import run_checks

    return list(run_checks(project, release=release))


def start_checks(project: Project, release: bool, side: SideProcess | None) -> Callable[[], list[Diagnostic]]:
    """Start the lint rules; return how to wait for their findings.

    With a side process (a large benchmark, forked with the project: nothing is pickled) they run there
    while this process expands the templates.
    """
    if side is None:
        findings = run_source_checks(project, release=release)
        return lambda: findings
    return side.submit_on_inherited(partial(run_source_checks, release=release)).result


def compile_project(
    project: Project,
    *,
    checks: bool = True,
    release: bool = False,
    progress: ProgressCallback | None = None,
    sink: RowSink | None = None,
    lint: Callable[[], list[Diagnostic]] | None = None,
) -> Compiled:
    """Expand every template into its configs and verify every invariant; raise on any error.

    Each template's rows go to ``sink`` in batches (e.g. the data files of a build, see
    ``build_folder``), or, with no sink, into ``Compiled.configs[name].rows``. Check findings and
    expansion problems are reported together, so one run shows every problem. ``lint``: how to wait for
    the lint rules' findings where they were started elsewhere (:func:`start_checks`), else they run here.
    """
    from .audit.identical import IdenticalRows, identical_notes

    diagnostics: list[Diagnostic] = list(project.notes)
    findings = (lint or start_checks(project, release, None)) if checks else list
    configs: dict[str, ConfigRows] = {}
    present = sorted({t.kind for t in project.templates}, key=_kind_rank)
    for kind_name in present:
        for spec in get_kind(kind_name).configs:
            configs[spec.name] = ConfigRows(spec, kind_name)
    verifiers = {name: get_kind(c.kind).verifier(name, project) for name, c in configs.items()}
    ids = {name: RepeatedIds() for name in configs}
    shown = {name: IdenticalRows.of(c.kind, c.spec) for name, c in configs.items()}
    templates = sorted(project.templates, key=lambda t: (t.model.category, t.id))
    budget = RowBudget(project)  # load_project counted the rows; this holds a design that cannot count
    with _no_cyclic_gc():
        for done, template in enumerate(templates, 1):
            built = get_kind(template.kind).build(template, project)
            options = get_kind(template.kind).option_columns
            refused = False
            for name, template_rows in built.rows.items():
                config = configs[name]
                shown[name].start(template)
                for rows in batches(template_rows, BATCH_ROWS):
                    budget.take(template, len(rows))
                    clash = None if refused else equal_options(rows, options)
                    if clash is not None:
                        refused = True  # once per template: the build fails, nothing is written
                        diagnostics.append(equal_options_problem(template, name, clash, options))
                    rows = shown[name].fresh(rows)
                    if not rows:
                        continue
                    config.tally(rows)
                    verifiers[name].add(rows)
                    ids[name].add(row["example_id"] for row in rows)
                    if sink is None:
                        config.rows.extend(rows)
                    else:
                        sink(config.spec, rows)
                    del rows
            diagnostics.extend(built.diagnostics)  # complete once the rows are consumed (TemplateRows)
            diagnostics.extend(identical_notes(template, shown.values()))
            del built
            if progress:
                progress("expand", done, len(templates))
        for name, verifier in verifiers.items():
            repeated = ids[name].find(partial(_example_ids, templates, project, configs[name]))
            diagnostics.extend(verifier.finish(repeated))
    diagnostics[len(project.notes) : len(project.notes)] = findings()
    diagnostics.extend(_drop_optional_empty(project, configs))
    diagnostics.extend(_emptiness(project, configs))
    if has_errors(diagnostics):
        raise DiagnosticError(diagnostics)
    return Compiled(project, configs, diagnostics)


def equal_options(rows: Sequence[Row], columns: Sequence[str]) -> Row | None:
    """The first row two of whose answer options (``columns``, ``Kind.option_columns``) are the same text:
    a model cannot pick the one the gold names, so no design may emit it."""
    if len(columns) < 2:
        return None
    get = itemgetter(*columns)
    for row in rows:
        options = get(row)
        if len(set(options)) < len(options):
            return row
    return None


def equal_options_problem(
    template: SourceTemplate, config: str, row: Row, columns: Sequence[str]
) -> Diagnostic:
    """B010 at the template whose row shows two options of one text (the lint rules name the source)."""
    options = {column: row.get(column) for column in columns}
    same = [c for c in columns if list(options.values()).count(options[c]) > 1]
    return template.diagnostic(
        ("id",),
        "B010",
        f"[{config}] row {row.get('example_id')} shows 「{options[same[0]]}」 as two of its options "
        f"({', '.join(same)}): a model cannot tell them apart",
        hint="give the persons of a row option wordings that differ from each other and from dataset.yaml's "
        "unknown_options (`jbcompile check` names the source: JA110)",
    )


def batches(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """``rows`` in lists of ``size`` (the last one shorter), taken from the iterable as they are needed."""
    iterator = iter(rows)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _example_ids(templates: Sequence[SourceTemplate], project: Project, config: ConfigRows) -> Iterator[str]:
    """A config's example ids once more, in build order (expansion depends on each template alone),
    without the identical rows the build left out."""
    from .audit.identical import IdenticalRows

    shown = IdenticalRows.of(config.kind, config.spec)
    for template in templates:
        shown.start(template)
        made = get_kind(template.kind).build(template, project).rows.get(config.spec.name, ())
        for rows in batches(made, BATCH_ROWS):
            yield from (row["example_id"] for row in shown.fresh(rows))


class RepeatedIds:
    """Which example ids of a config occur more than once, keeping 8 bytes per row (a hash), not the ids.

    Equal hashes only make ids suspect: their exact counts come from a second pass over the ids, which
    only a build with repeated ids (or, rarely, two ids with one 64-bit hash) needs. The repeats are
    returned in the order of their first occurrence.
    """

    def __init__(self) -> None:
        self._hashes: list[np.ndarray] = []

    def add(self, ids: Iterable[str]) -> None:
        import numpy as np

        self._hashes.append(np.fromiter(map(hash, ids), dtype=np.int64))

    def find(self, again: Callable[[], Iterable[str]]) -> dict[str, int]:
        """The repeated ids and their counts; ``again`` gives every id once more, in the same order."""
        import numpy as np

        hashes = np.concatenate(self._hashes) if self._hashes else np.empty(0, dtype=np.int64)
        self._hashes = []
        hashes.sort()
        suspects = set(hashes[1:][hashes[1:] == hashes[:-1]].tolist())
        if not suspects:
            return {}
        counts: Counter[str] = Counter(example_id for example_id in again() if hash(example_id) in suspects)
        return {example_id: n for example_id, n in counts.items() if n > 1}


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Rows are acyclic dicts; the cyclic collector would only rescan them, again and again (~25%)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _kind_rank(kind: str) -> int:
    return kind_names().index(kind)


def _drop_optional_empty(project: Project, configs: dict[str, ConfigRows]) -> list[Diagnostic]:
    """A kind's config with no rows while another of its configs has some (a config of dummy problems in
    a set without any) is left out of the build, with a note, rather than shipped empty."""
    notes = []
    for name, config in list(configs.items()):
        if config.count or not any(o.count for o in configs.values() if o.kind == config.kind):
            continue
        del configs[name]
        notes.append(
            Diagnostic(
                code="B007",
                message=f"config {name!r} has no rows (no template of that sort): left out of the build",
                path=display_path(project.root),
                severity=Severity.INFO,
            )
        )
    return notes


def _emptiness(project: Project, configs: dict[str, ConfigRows]) -> list[Diagnostic]:
    """An empty build is always a mistake (a missing or misspelled templates/, every template skipped)."""
    if not project.templates:
        return [
            Diagnostic(
                code="B002",
                message=f"no template to build in {display_path(project.root / 'templates')}",
                path=display_path(project.root),
                hint="add templates under templates/<Category>/, or translate them for this --lang",
            )
        ]
    return [
        Diagnostic(
            code="B006",
            message=f"config {name!r} has no rows",
            path=display_path(project.root),
            hint="check that the templates of this kind expand to rows (see the other diagnostics)",
        )
        for name, config in configs.items()
        if not config.count
    ]


def build_folder(
    project: Project,
    out_dir: Path,
    *,
    formats: Sequence[str] = ("parquet",),
    cards_dir: Path | None = None,
    checks: bool = True,
    release: bool = False,
    progress: ProgressCallback | None = None,
    overwrite: bool = False,
) -> tuple[Compiled, dict]:
    """Compile ``project`` straight into the build folder ``out_dir``; return the compile and the manifest.

    The rows go into the data files of a staging folder while they are made, one row group at a time; the
    staging folder replaces ``out_dir`` only when every check passed, so an error (all of a run's
    diagnostics together) or a failed write (B004) leaves the previous build as it was. A build of another
    dataset there is replaced only with ``overwrite`` (B009).
    """
    from .audit.run import load_probe_libraries
    from .emit import DataFiles, finish_folder

    out_dir = Path(out_dir)
    _refuse_unsafe_out(out_dir, project.root, cards_dir)
    refuse_other_dataset(out_dir, project.dataset.name, overwrite)
    compiled = None
    # A large benchmark's second process (forked with the project, before any data file is open): it
    # runs the lint rules, loads the audit's model library, then fits the audit's model.
    side = SideProcess.for_templates(len(project.templates), inherit=project)
    try:
        lint = start_checks(project, release, side) if checks and side is not None else None
        if side is not None:
            side.submit_on_inherited(load_probe_libraries)
        with _staging(out_dir, project, cards_dir, overwrite) as staging:
            data = DataFiles(staging, formats, progress)
            try:
                compiled = compile_project(
                    project, checks=checks, release=release, progress=progress, sink=data, lint=lint
                )
                files = data.close()
            except BaseException:
                data.abort()
                raise
            manifest = finish_folder(
                compiled,
                staging,
                files,
                cards_dir=cards_dir,
                progress=progress,
                release=release,
                arrow_bytes=data.arrow_bytes,
                side=side,
            )
    except DiagnosticError as error:
        if compiled is None:  # the compile's own error holds every diagnostic of the run
            raise
        raise DiagnosticError([*compiled.diagnostics, *error.diagnostics]) from None
    finally:
        if side is not None:
            side.close()
    return compiled, manifest


def write_build(
    compiled: Compiled,
    out_dir: Path,
    *,
    formats: Sequence[str] = ("parquet",),
    cards_dir: Path | None = None,
    overwrite: bool = False,
) -> dict:
    """Write the build folder of a compile that kept its rows, atomically; return the manifest.

    Refuses (B001, B003) a folder that is not a build, or one whose replacement would take the sources
    or the working folder with it, and a build of another dataset without ``overwrite`` (B009); any
    write failure (B004) leaves the previous build as it was.
    """
    from .emit import write_folder

    out_dir = Path(out_dir)
    empty = _emptiness(compiled.project, compiled.configs)
    if empty:
        raise DiagnosticError(empty)
    _refuse_unsafe_out(out_dir, compiled.project.root, cards_dir)
    with _staging(out_dir, compiled.project, cards_dir, overwrite) as staging:
        return write_folder(compiled, staging, formats=formats, cards_dir=cards_dir)


@contextmanager
def _staging(out_dir: Path, project: Project, cards_dir: Path | None, overwrite: bool) -> Iterator[Path]:
    """A staging folder that replaces ``out_dir`` when the block ends without error (B001, B003, B004,
    B009).

    The folder is claimed (:func:`jbcompile.outputs.claim`) before it is judged: a build that waited
    for another one judges what that one left."""
    with (
        write_errors(out_dir, "the build folder"),
        claim(out_dir, "build") as place,
    ):
        _refuse_unsafe_out(out_dir, project.root, cards_dir)
        _refuse_foreign_folder(out_dir)
        refuse_other_dataset(out_dir, project.dataset.name, overwrite)
        with place.replaced_folder("build") as staging, _no_cyclic_gc():
            yield staging


_WRITE_HINTS = {
    errno.ENOSPC: "free some disk space, or choose --out on another disk",
    errno.EDQUOT: "free some space in your quota, or choose --out on another disk",
    errno.EFBIG: "a file size limit is set (ulimit -f): raise it, or write elsewhere",
    errno.EACCES: "choose a --out you may write to",
    errno.EPERM: "choose a --out you may write to",
    errno.EROFS: "the file system is read-only: choose another --out",
}


@contextmanager
def write_errors(out: Path, what: str) -> Iterator[None]:
    """Turn a failed write (full disk, size limit, permissions …) into a B004 diagnostic, no traceback."""
    try:
        yield
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "error")
        reason, hint = (
            f"{exc.strerror or exc} ({name})",
            _WRITE_HINTS.get(exc.errno or 0, "check the folder and the disk"),
        )
        blocker = file_in_the_way(out) if exc.errno in (errno.EEXIST, errno.ENOTDIR) else None
        if blocker is not None:
            reason = f"{display_path(blocker)} is a file, not a folder"
            hint = f"choose a --out whose folders are folders, or move the file {display_path(blocker)} away"
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B004",
                    message=f"cannot write {what} {out}: {reason}; the previous one is untouched",
                    path=str(out),
                    hint=hint,
                )
            ]
        ) from None


def check_out_dir(out_dir: Path, sources: Path, cards_dir: Path | None = None) -> None:
    """Refuse a --out that a build may not replace, before spending time on compiling (B001, B003).

    Sources that are not a sources folder (no dataset.yaml) are left for the loader to report.
    """
    if not (Path(sources) / "dataset.yaml").is_file():
        return
    _refuse_unsafe_out(Path(out_dir), sources, cards_dir)
    with write_errors(Path(out_dir), "the build folder"):
        _refuse_foreign_folder(Path(out_dir))


def _refuse_unsafe_out(out_dir: Path, sources: Path, cards_dir: Path | None = None) -> None:
    """--out is never the sources or the card templates, nor holds them, nor lies inside them, and is
    never the working folder nor holds it (B003): a build replaces its whole folder."""
    inputs = [("the sources", Path(sources))] + ([("the card templates", cards_dir)] if cards_dir else [])
    refuse(overlaps([Output("--out", Path(out_dir), "B003", whole=True)], inputs))


def refuse_other_dataset(out_dir: Path, dataset: str, overwrite: bool) -> None:
    """A build folder of another dataset (its manifest names another) is replaced only with
    ``overwrite`` (B009): a build of the same dataset is rebuilt in place, as `build` always does."""
    from .emit.manifest import read_manifest

    if overwrite or not is_jbcompile_manifest(out_dir / "manifest.json"):
        return  # an empty folder, or one B001 judges
    found = read_manifest(out_dir).get("dataset")
    if found != dataset:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B009",
                    message=f"{out_dir} holds a build of dataset {found!r}, not of {dataset!r}; "
                    "refusing to replace it",
                    path=str(out_dir),
                    hint="choose another --out, or pass --overwrite to replace that build",
                )
            ]
        )


# Files a file manager drops into any folder it shows; replacing them loses nothing.
_DESKTOP_LITTER = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


def _refuse_foreign_folder(out_dir: Path) -> None:
    """Only an empty folder, or a build folder (by its manifest's content), may be replaced."""
    from .emit.manifest import read_manifest

    problem = None
    if out_dir.is_symlink():
        problem = "is a symbolic link (a build would replace the link, not write where it points)"
    elif out_dir.exists() and not out_dir.is_dir():
        problem = "exists and is not a folder"
    elif out_dir.is_dir() and any(out_dir.iterdir()):
        manifest = out_dir / "manifest.json"
        if not is_jbcompile_manifest(manifest):
            why = (
                "its manifest.json is not one jbcompile wrote, or could not be read whole"
                if manifest.exists() or manifest.is_symlink()
                else "no manifest.json"
            )
            problem = f"exists and is not a jbcompile build folder ({why})"
        else:
            listed = set(read_manifest(out_dir)["files"]) | {"manifest.json"}
            foreign = sorted(
                p.relative_to(out_dir).as_posix()
                for p in out_dir.rglob("*")
                if not p.is_dir()
                and p.relative_to(out_dir).as_posix() not in listed
                and p.name not in _DESKTOP_LITTER
            )
            if foreign:
                shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
                problem = f"holds files that are not part of the build ({shown})"
    if problem:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="B001",
                    message=f"{out_dir} {problem}; refusing to replace it",
                    path=str(out_dir),
                    hint="choose another --out, or move those files away yourself",
                )
            ]
        )
