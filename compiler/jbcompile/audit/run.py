"""Running the audit: every probe of a config's design over the config's plain rows, then the figures
against the bars of dataset.yaml.

Rows are read a batch at a time (``BATCH_ROWS``), only the columns the probes name, and each probe keeps
per-template sums, so an audit's memory does not grow with the rows. A probe that needs a first look at
the whole config (``prepare_columns``) gets one pass of its own before the scoring pass.

Where rows come from: a build folder's parquet files (``jbcompile audit BUILD``, and the build itself,
which audits its staged data before writing the card and the manifest), a release's files in a format a
design reads (its ``release_formats``, see :mod:`jbcompile.evaluate.formats`), or sources
compiled on the fly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..reading import DATA_FILE, check_file
from ..schema.dataset import AuditSettings
from .probe import Batch, Probe, ProbeInputs, ProbeNotRun
from .report import (
    PLACES,
    WORST_SHOWN,
    AuditReport,
    ProbeReport,
    ScopeReport,
    TemplateReport,
    scope_status,
)
from .stats import Figures, Scope, figures

if TYPE_CHECKING:
    import pyarrow as pa

    from ..compiled import Compiled
    from ..projecttypes import Project
    from ..sidework import SideProcess

BATCH_ROWS = 65_536
BASE_COLUMNS = ("category", "template_id")


class Rows(ABC):
    """The plain rows of one config, which can be read more than once, a batch at a time."""

    def __init__(self, config: str, kind: str) -> None:
        self.config, self.kind = config, kind

    @property
    @abstractmethod
    def columns(self) -> list[str]: ...

    @abstractmethod
    def batches(self, columns: Sequence[str]) -> Iterator[pa.Table]: ...


class ParquetRows(Rows):
    """A config's parquet file (a build folder's ``data/<config>/…parquet``)."""

    def __init__(self, config: str, kind: str, path: Path) -> None:
        super().__init__(config, kind)
        self.path = Path(path)
        check_file(self.path, DATA_FILE)  # pyarrow opens it itself: a FIFO would block, F002 instead

    @property
    def columns(self) -> list[str]:
        import pyarrow.parquet as pq

        return list(pq.ParquetFile(self.path).schema_arrow.names)

    def batches(self, columns: Sequence[str]) -> Iterator[pa.Table]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        with pq.ParquetFile(self.path) as file:
            for batch in file.iter_batches(batch_size=BATCH_ROWS, columns=list(columns)):
                yield pa.Table.from_batches([batch])


class TableRows(Rows):
    """Rows already in memory (a release's file, read and brought to the design's columns)."""

    def __init__(self, config: str, kind: str, table: pa.Table) -> None:
        super().__init__(config, kind)
        self.table = table

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names)

    def batches(self, columns: Sequence[str]) -> Iterator[pa.Table]:
        selected = self.table.select(list(columns))
        for start in range(0, max(selected.num_rows, 1), BATCH_ROWS):
            yield selected.slice(start, BATCH_ROWS)


def audit_rows(
    sources: Iterable[Rows], settings: AuditSettings, inputs: ProbeInputs, side: SideProcess | None = None
) -> AuditReport:
    """Every probe of each config's design, judged against ``settings``.

    Each config's probes see its rows and are told to begin their last step at once
    (:meth:`Probe.begin_finish`: with a ``side`` process, a model probe fits there while the next config
    is read); the probes are finished and judged, in order, once every config was read."""
    from ..designs import get_design

    started = []
    for source in sources:
        started.append(_read_config(source, list(get_design(source.kind).probes(inputs))))
        _, probes, why_not = started[-1]
        for index, probe in enumerate(probes):
            if index not in why_not:
                probe.begin_finish(side)
    results: list[ProbeReport] = []
    for source, probes, why_not in started:
        results.extend(_finish_config(source, probes, why_not, settings))
    return AuditReport(settings=settings, results=results)


def probe_names(kinds: Iterable[str], inputs: ProbeInputs) -> set[str]:
    """The names of every probe of these designs."""
    from ..designs import get_design

    return {probe.name for kind in set(kinds) for probe in get_design(kind).probes(inputs)}


def _read_config(source: Rows, probes: list[Probe]) -> tuple[Rows, list[Probe], dict[int, ProbeNotRun]]:
    """Show every probe that can run on ``source`` its rows; the others, with why not."""
    available = set(source.columns)
    why_not: dict[int, ProbeNotRun] = {}
    for index, probe in enumerate(probes):
        missing = sorted({*probe.columns, *probe.prepare_columns, *BASE_COLUMNS} - available)
        if missing:
            why_not[index] = ProbeNotRun(f"the rows have no column {', '.join(missing)}")
    running = [p for i, p in enumerate(probes) if i not in why_not]
    preparing = [p for p in running if p.prepare_columns]
    if preparing:
        for table in source.batches(_union(p.prepare_columns for p in preparing)):
            batch = Batch(table)
            for probe in preparing:
                probe.prepare(batch)
    if running:
        wanted = _union([*(p.columns for p in running), *(p.optional_columns for p in running)])
        for table in source.batches([name for name in wanted if name in available]):
            batch = Batch(table)
            for probe in running:
                probe.add(batch)
    return source, probes, why_not


def _finish_config(
    source: Rows, probes: list[Probe], why_not: dict[int, ProbeNotRun], settings: AuditSettings
) -> list[ProbeReport]:
    results = []
    for index, probe in enumerate(probes):
        found = None
        if index not in why_not:
            try:
                tally = probe.finish()
                found = figures(
                    tally,
                    probe.variants,
                    majority=probe.majority_chance,
                    resamples=settings.resamples,
                    seed_parts=(source.config, probe.name),
                )
                if found is None:
                    why_not[index] = ProbeNotRun(f"no row is one of the {probe.scores}")
            except ProbeNotRun as reason:
                why_not[index] = reason
        results.append(_judge(source, probe, found, why_not.get(index), settings))
    return results


def _union(groups: Iterable[Sequence[str]]) -> list[str]:
    return list(dict.fromkeys([*BASE_COLUMNS, *(name for group in groups for name in group)]))


def _judge(
    source: Rows, probe: Probe, found: Figures | None, not_run: ProbeNotRun | None, settings: AuditSettings
) -> ProbeReport:
    own = settings.probes.get(probe.name)
    judged_on = "value" if probe.measure == "rate" else "low"

    def scope(figures: Scope, members: Sequence[Any]) -> ScopeReport:
        if (own is not None and own.off) or (own is None and not probe.judged):
            threshold = None
        elif own is not None and own.max is not None:
            threshold = own.max
        else:
            default = 0.0 if probe.measure == "rate" else settings.margin
            threshold = min(1.0, figures.chance + (own.margin if own and own.margin is not None else default))
        judged = figures.low if judged_on == "low" else figures.value
        status = scope_status(
            figures.value,
            judged,
            threshold,
            templates=figures.templates,
            rate=probe.measure == "rate",
            fewest=probe.fewest_judged,
        )
        return ScopeReport(
            rows=figures.rows,
            templates=figures.templates,
            value=round(figures.value, PLACES),
            low=round(figures.low, PLACES),
            high=round(figures.high, PLACES),
            chance=round(figures.chance, PLACES),
            threshold=None if threshold is None else round(threshold, PLACES),
            exceeds=status == "above",
            status=status,
            rule=figures.rule,
            worst=[
                TemplateReport(
                    category=t.category, template=t.template, rows=t.rows, value=round(t.value, PLACES)
                )
                for t in members[:WORST_SHOWN]
            ],
        )

    report: dict[str, Any] = dict(
        config=source.config,
        kind=source.kind,
        probe=probe.name,
        title=probe.title,
        scores=probe.scores,
        chance_basis=probe.chance,
        measure=probe.measure,
        judged_on=judged_on,
    )
    if found is None:
        reason = not_run or ProbeNotRun("no figures")
        return ProbeReport(**report, not_run=reason.reason, warn=reason.warn)
    return ProbeReport(
        **report,
        overall=scope(found.overall, found.overall.ranked),
        categories={name: scope(figures, figures.ranked) for name, figures in found.categories.items()},
    )


# ---- where rows come from -------------------------------------------------------------------------------


def probe_inputs(sources: Path | None = None) -> ProbeInputs:
    """The rule data the probes read: ``<sources>/rules/`` where it has the file, else the bundled one."""
    from ..checks.ruledata import load_rule_file, rule_file_path
    from ..schema.rules import AttributesFile

    return ProbeInputs(attributes=load_rule_file(AttributesFile, rule_file_path(AttributesFile, sources)))


def folder_rows(folder: Path, kinds: Mapping[str, str]) -> list[Rows]:
    """The parquet file of each config (name → design) of a build folder."""
    from ..emit.data import data_path

    return [
        ParquetRows(name, kind, Path(folder) / data_path(name, "parquet")) for name, kind in kinds.items()
    ]


def verified_folder_rows(folder: Path, kinds: Mapping[str, str]) -> list[Rows]:
    """The rows of each config of a build folder someone hands us, read from the bytes its manifest
    vouches for (P005/P016 when they are not: :func:`..publish.buildfolder.verified_table`)."""
    from ..publish.buildfolder import open_build, verified_table

    build = open_build(Path(folder))
    return [TableRows(name, kind, verified_table(build, name)[0]) for name, kind in kinds.items()]


def audit_compiled(
    compiled: Compiled, folder: Path, *, release: bool = False, side: SideProcess | None = None
) -> list[Diagnostic]:
    """The audit a build makes of the data files it has just written into ``folder``: kept in
    ``compiled.audit``; returns its warnings, and raises its errors (a probe above its bar, for a
    release). ``side``: the build's second process, where models fit meanwhile."""
    from ..diagnostics import has_errors
    from .report import problems, unknown_probe_problems

    project = compiled.project
    kinds = {name: config.kind for name, config in compiled.configs.items()}
    inputs = probe_inputs(project.root)
    compiled.audit = audit_rows(folder_rows(folder, kinds), project.dataset.audit, inputs, side)
    found = problems(
        compiled.audit, release=release, doc=project.dataset_doc, template_files=project.template_files()
    )
    found += unknown_probe_problems(
        project.dataset.audit, probe_names(kinds.values(), inputs), project.dataset_doc
    )
    if has_errors(found):
        raise DiagnosticError(found)
    return found


def load_probe_libraries(project: Project) -> None:
    """Import the libraries the probes of ``project``'s designs need (``Probe.libraries``), ahead of the
    audit: a build does this in its side process while it expands the templates."""
    import importlib
    from contextlib import suppress

    from ..designs import get_design

    inputs = probe_inputs(project.root)
    for kind in sorted({template.kind for template in project.templates}):
        for probe in get_design(kind).probes(inputs):
            for library in probe.libraries:
                with suppress(ImportError):  # the probe itself says so when it runs (ProbeNotRun)
                    importlib.import_module(library)


def build_kinds(folder: Path) -> dict[str, str]:
    """Config → design of a build folder, from its manifest (AU020 when it is not a build folder)."""
    from contextlib import suppress

    from ..emit.manifest import read_manifest
    from ..jsonl import read_json
    from ..reading import RECORD
    from ..sourcefiles import is_jbcompile_manifest

    manifest = Path(folder) / "manifest.json"
    if manifest.exists():  # read bounded, as `score` and `export` read it: F001 too large, F002 not a file
        with suppress(OSError, ValueError):  # not JSON at all: not a manifest jbcompile wrote (AU020)
            read_json(manifest, RECORD)
    if not is_jbcompile_manifest(manifest):
        raise DiagnosticError(
            [
                Diagnostic(
                    "AU020",
                    f"{folder} is not a build folder (no manifest.json written by jbcompile)",
                    path=str(folder),
                    hint="give a folder written by `jbcompile build`, a release file, or --sources",
                )
            ]
        )
    configs = read_manifest(folder).get("configs") or {}
    return {name: str(entry.get("kind")) for name, entry in configs.items() if isinstance(entry, dict)}


def recorded_settings(folder: Path) -> AuditSettings | None:
    """The bars a build folder was audited with (its manifest's ``audit.settings``), if it says."""
    from pydantic import ValidationError

    from ..emit.manifest import read_manifest

    recorded = read_manifest(folder).get("audit")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("settings"), dict):
        return None
    try:
        return AuditSettings.model_validate(recorded["settings"])
    except ValidationError:
        return None


def release_rows(paths: Sequence[Path]) -> list[Rows]:
    """The rows of one or more release files of one design, as one config named ``release``.

    Each file is read by the evaluator's readers (a release format brings its rows to the design's
    columns and derives missing labels); rows whose stereotyped option cannot be derived still count.
    """
    from ..evaluate.dataset import load_rows
    from ..evaluate.registered import detect_kind

    rows: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    for path in paths:
        loaded = load_rows(str(path), "release")
        kind = detect_kind(loaded.columns, str(path)).name
        kinds[str(path)] = kind
        rows.extend(loaded.rows)
    if len(set(kinds.values())) > 1:
        listed = ", ".join(f"{path} ({kind})" for path, kind in kinds.items())
        raise DiagnosticError(
            [
                Diagnostic(
                    "AU021",
                    f"the files hold rows of different designs: {listed}",
                    hint="audit them one by one",
                )
            ]
        )
    (kind,) = set(kinds.values())
    return [TableRows("release", kind, plain_table(rows))]


def plain_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows as a table of flat columns: whole numbers stay numbers, anything else becomes text (nested
    values such as ``answer_info`` are left out: no probe reads them)."""
    import pyarrow as pa

    names = list(dict.fromkeys(name for row in rows for name in row))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        if any(isinstance(v, dict | list) for v in values):
            continue
        if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            columns[name] = pa.array(values, pa.int64())
        else:
            columns[name] = pa.array([None if v is None else str(v) for v in values], pa.string())
    return pa.table(columns)
