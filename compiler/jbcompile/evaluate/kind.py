"""What a benchmark kind plugs into the evaluator: its prompts, answer reading and metrics.

The runner, backends, bootstrap and report never branch on kind. A design's package subclasses
``EvalKind`` and returns the instance from its spec's ``evaluator()`` (see :mod:`jbcompile.designs`).
The values it declares live here too — its report's charts (:class:`ChartSpec`), its papers'
protocols (:class:`Protocol`, read by :mod:`.protocols`) and the release formats it reads
(:class:`ReleaseFormat`, read by :mod:`.formats`) — so that this module asks no registry:
:mod:`.registered` finds the registered designs' parts.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..diagnostics import Diagnostic
from ..limits import MAX_SHOTS
from . import bootstrap
from .parsing import answer_after, parse_prediction_value, reply_is_final
from .prompting import Prompt, PromptItem, PromptTemplate, apply_chat_template
from .tables import fmt_number

Row = Mapping[str, Any]
Record = dict[str, Any]


DEFAULT_SHOTS = 3  # the evaluator's default --shots (a kind whose prompts carry none takes it as 0)


@dataclass(frozen=True)
class EvalOptions:
    """The choices of one run that shape prompts and answers (not the model or the hardware)."""

    task: str = "qa"
    setting: str | None = "basic"  # None: the kind's first setting (``requests.with_defaults``)
    shots: int = DEFAULT_SHOTS
    seed: int = 0
    scoring: str = "logprob"
    chat: bool = False
    prompt_file: Path | None = None
    protocol: str | None = None  # a paper's protocol (evaluate/protocols.py), or None
    # where a generated reply's answer is: read after the last match of this regular expression
    # (``--answer-pattern``, for a prompt file whose replies put the answer after a marker of their own)
    answer_pattern: str | None = None
    thinking: bool = False  # a reasoning model (``--thinking``; the run's request says so, and sets this)


THINKING_TOKENS = 4096  # added to the default generation limit of a thinking model (--thinking)
# where a reply ends by default: the model starts a new section in the prompts' own layout (a base model
# going on with the next example)
SECTION_STOP = ("###",)


@dataclass(frozen=True)
class ChartSpec:
    file: str
    title: str
    metrics: tuple[str, ...]  # one bar per metric and category; "shares" charts take one list metric
    ylabel: str
    style: str = "bars"  # bars | shares
    ylim: tuple[float, float] | None = None


@dataclass(frozen=True)
class Column:
    """One column of a paper's table: its heading, the metric, and how the paper prints it (its sign is
    the kind's: ``EvalKind.signed_metrics``)."""

    heading: str
    metric: str
    percent: bool = True  # the paper prints ×100 with one decimal


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    # the (setting, shots) of the runs the paper prints this table for; empty: every run the protocol's
    # other tables cover (a table of a few settings only must not stand as the paper's for the others)
    covers: tuple[tuple[str, int], ...] = ()

    def heading_for(self, setting: str | None, shots: int | None) -> str:
        """The table's heading for a run: where the paper prints it for some settings only, which; and
        where the run is known to be none of them, that its figures are not the paper's."""
        return self.heading_for_runs([(setting, shots)])

    def heading_for_runs(self, runs: Sequence[tuple[str | None, int | None]]) -> str:
        """The heading for the (setting, shots) of one run (the report) or of runs side by side
        (`compare`), by one rule: a run known to be outside the table's ``covers`` is said to be, so that
        no figures stand as the paper's where the paper printed none."""
        if not self.covers:
            return self.title
        covered = " or ".join(f"setting `{s}` with {n} shots" for s, n in self.covers)
        outside = sum(1 for s, n in runs if s is not None and n is not None and (s, n) not in self.covers)
        if outside:
            whose = (
                "this run"
                if len(runs) == 1
                else "these runs"
                if outside == len(runs)
                else f"{outside} of these {len(runs)} runs"
            )
            return f"{self.title} — not in the paper for {whose}: the paper prints it for {covered} only"
        return f"{self.title}, the paper's for {covered}"

    @property
    def key(self) -> str:
        """The line under the table that names each column's metric (results.json's name for it)."""
        return "Columns: " + ", ".join(f"{c.heading} = `{c.metric}`" for c in self.columns) + "."


@dataclass(frozen=True)
class Protocol:
    name: str
    kind: str
    paper: str
    scoring: str
    shots: tuple[int, ...]  # the values the paper used; the first is the default
    settings: tuple[str, ...]  # likewise
    ooc: str  # how answers outside the options count in the headline metrics
    tables: tuple[Table, ...]  # the paper's main table first
    note: str = ""
    # how the paper decoded and read replies, where it says so (the design's kind applies it)
    max_new_tokens: str = "kind default (the paper states none)"
    reading: str = "as a person reads a reply (docs/eval.md, Raw replies)"
    # the sampling temperature the paper decoded at (None: it states none), and for a reasoning model
    # (--thinking) where it used another
    temperature: float | None = None
    reasoning_temperature: float | None = None
    # the tables of another task, where the paper lays that task out otherwise (e.g. bias detection)
    task_tables: tuple[tuple[str, tuple[Table, ...]], ...] = ()
    # which of the paper's tables holds the numbers of a (task, setting, shots), e.g. ("qa", "warning",
    # 3, "Table 14"); a combination it lacks is one the paper reports no table for
    paper_table: tuple[tuple[str, str, int, str], ...] = ()

    def paper_table_of(self, task: str, setting: str | None, shots: int | None) -> str | None:
        """The paper's table of a run's task, setting and shots (None: the paper reports none)."""
        return next(
            (where for t, s, n, where in self.paper_table if (t, s, n) == (task, setting, shots)), None
        )

    def temperature_for(self, thinking: bool) -> float | None:
        """The temperature the paper decoded at: its reasoning model's for ``thinking`` (None: not stated)."""
        if thinking and self.reasoning_temperature is not None:
            return self.reasoning_temperature
        return self.temperature

    def tables_for(self, task: str) -> tuple[Table, ...]:
        """The paper's tables for ``task``: its own layout where it has one, else the main tables."""
        return dict(self.task_tables).get(task, self.tables)

    def headline_for(self, task: str) -> tuple[str, ...]:
        return tuple(column.metric for table in self.tables_for(task) for column in table.columns)

    @property
    def headline(self) -> tuple[str, ...]:
        return tuple(column.metric for table in self.tables for column in table.columns)

    def describe(
        self, task: str = "qa", prompt_wording: str = "jbcompile", prompt_file: str | None = None
    ) -> dict[str, Any]:
        """What results.json records of the protocol (``scoring.max_new_tokens`` there is the limit used),
        with whose wording the run's prompts had (``protocols.prompt_wording``): the protocol fixes the
        paper's scoring, not its prompt."""
        return {
            "name": self.name,
            "paper": self.paper,
            "scoring": self.scoring,
            "shots": list(self.shots),
            "settings": list(self.settings),
            "ooc": self.ooc,
            "max_new_tokens": self.max_new_tokens,
            "reading": self.reading,
            "headline": list(self.headline_for(task)),
            "prompt_wording": prompt_wording,
            **({"prompt_file": prompt_file} if prompt_file else {}),
            "note": self.note,
        }


RAW_REPLY = "_raw_reply"  # a harness's reply as the model wrote it: raw_output, and what `score` reads
# How a harness chose the prediction it recorded, where a format says (absent: a column of the user's,
# taken as it is given): ``HARNESS_READ``, from the reply by the harness's own reader (an inspect
# scorer's letter, an lm-eval filter, a release's evaluation script) — `score` reads the reply itself
# when asked for a reading of its own (a protocol, a setting); ``LOG_LIKELIHOOD``, the most likely
# option, with no reply to read (refused under a protocol whose paper generated); ``EVAL_READ``, a reply to
# a task of `jbcompile export` that read it by jbcompile's own reader (or by a regex, in earlier exports):
# `score` reads the reply itself, always, as ``eval`` reads it
ANSWERED_BY = "_answered_by"
HARNESS_READ, LOG_LIKELIHOOD, EVAL_READ = "harness", "log-likelihood", "eval"
SHOWN_PROMPT = "_shown_prompt"  # the prompt a harness's reply answered, where its log keeps it


class ReleaseFormat:
    """One foreign file format a design reads: how to recognise a row, and how to bring it to the
    design's columns (labels the format lacks are derived, never guessed)."""

    name: ClassVar[str]  # recorded as the run's ``format``
    kind: ClassVar[str | None]  # the design whose rows this format holds (None: told by the row's columns)
    prediction_field: ClassVar[str | None] = None  # where the format keeps its prediction, if it does
    verbatim_prompt: ClassVar[bool] = False  # its rows carry the release's whole prompt: send it as it is

    def matches(self, row: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        """The row in the design's columns, or (None, why it cannot be read)."""
        return dict(row), None

    def field_problems(self, prediction_field: str | None, path: str) -> list[Diagnostic]:
        """A ``--prediction-field`` the format cannot honour."""
        return []

    def finish(self, rows: list[dict[str, Any]], lines: Sequence[int]) -> list[dict[str, Any]]:
        """Labels derived over the whole file, in place; returns the rows whose labels are unclear."""
        return []


@dataclass
class PreparedPrompts:
    items: list[PromptItem]
    records: dict[str, Record]  # example_id -> the row's fields that the metrics need
    shot_ids: list[str] = field(default_factory=list)
    # where the shots could not be drawn as the kind's rule says (too few rows of a kind): said in
    # results.json (prompt.shot_notes), the report and on the terminal, never silently
    shot_notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    pred: int | None  # option index, None = out-of-choice
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. quoted evidence


@dataclass
class ForeignRecords:
    """Records derived from another harness's file, with the rows whose labels could not be derived."""

    records: list[Record]
    ambiguous: list[dict[str, Any]] = field(default_factory=list)


class EvalKind(ABC):
    name: str
    tasks: tuple[str, ...]
    settings: tuple[str, ...]
    generation_only_settings: frozenset[str] = frozenset()
    option_labels: tuple[str, ...] = ("0", "1", "2")
    required_columns: frozenset[str] = frozenset()
    default_config: str = "lite"
    count_names: tuple[str, ...] = ()
    no_interval: tuple[str, ...] = ()  # metrics reported without a confidence interval (sizes)
    integer_metrics: tuple[str, ...] = ("n", "n_valid")  # counts, reported as whole numbers
    # the label fields of our predictions' records the metrics read (beside gold and pred, which every
    # kind has): checked by `score` and when a run resumes, so a damaged value is never counted as another
    record_options: tuple[str, ...] = ()  # option indexes
    record_optional_options: tuple[str, ...] = ()  # option indexes or null (a label not known)
    record_values: ClassVar[Mapping[str, tuple[Any, ...]]] = {}  # a field's allowed values
    # the fields of our predictions' records (predictions.jsonl): what tells a file of them apart
    record_fields: tuple[str, ...] = ()
    # the columns a foreign row (another harness's file) of this design is recognised by
    row_signature: frozenset[str] = frozenset()
    row_excludes: frozenset[str] = frozenset()  # …and columns such a row never has
    release_formats: tuple[ReleaseFormat, ...] = ()  # foreign file formats read as this design's rows
    # what report.md shows: the per-category table's metrics, in order, and the charts
    table_metrics: tuple[str, ...] = ()
    charts: tuple[ChartSpec, ...] = ()
    # the record fields whose every combination `eval --sample N` keeps represented (evaluate/selection.py)
    strata_fields: tuple[str, ...] = ("category",)
    # metrics printed with their sign, zero as +0.0, wherever a table shows them (as the kind's paper
    # prints them, e.g. a bias score); the others as numbers are usually printed
    signed_metrics: frozenset[str] = frozenset()
    # whether the kind's prompts carry examples (``--shots``): a kind whose prompts never do runs, and
    # is recorded, zero-shot, and refuses a --shots it would not use (EV032)
    few_shot: bool = True

    def metric_text(self, name: str, value: Any, digits: int = 3) -> str:
        """A metric's value as every table and the console print it: one rounding rule
        (:func:`.tables.fmt_number`), and the sign where the kind's paper prints one."""
        return fmt_number(value, digits, signed=name in self.signed_metrics)

    @property
    def settings_help(self) -> str:
        """The prompt settings as ``--help`` lists them."""
        return ", ".join(self.settings)

    def record_problems(self, record: Record) -> list[str]:
        """Why a record's label fields cannot be counted as they are: each value is what its field
        allows (``record_options`` …), and the fields agree with each other (``record_consistency``)."""
        n_options = len(self.option_labels)
        problems = [
            f"{name} must be an option index 0–{n_options - 1}, found {record[name]!r}"
            for name in self.record_options
            if name in record and not option_index(record[name], n_options)
        ]
        problems += [
            f"{name} must be an option index 0–{n_options - 1} or null, found {record[name]!r}"
            for name in self.record_optional_options
            if name in record and record[name] is not None and not option_index(record[name], n_options)
        ]
        problems += [
            f"{name} must be {' or '.join(json.dumps(value) for value in allowed)}, found {record[name]!r}"
            for name, allowed in self.record_values.items()
            if name in record and not _one_of(record[name], allowed)
        ]
        return problems or self.record_consistency(record)

    def record_consistency(self, record: Record) -> list[str]:
        """Label fields that contradict each other (checked once each field's value is allowed)."""
        return []

    def matches(self, columns: Sequence[str]) -> bool:
        return self.required_columns <= set(columns)

    def recognises_row(self, row: Mapping[str, Any]) -> bool:
        """Is a row of another harness's file one of this design's rows (by its columns)?"""
        keys = set(row)
        return bool(self.row_signature) and self.row_signature <= keys and not (self.row_excludes & keys)

    def foreign_row_problems(self, row: Mapping[str, Any]) -> list[str]:
        """Why a foreign row's labels cannot be counted (beside its category, checked for every design)."""
        n_options = len(self.option_labels)
        return [
            f"{name} must be an option index 0–{n_options - 1}, found {row[name]!r}"
            for name in ("label", "biased_label", "unknown_label", "target_label")
            if row.get(name) is not None and not option_index(row[name], n_options)
        ]

    @property
    def protocols(self) -> tuple[Protocol, ...]:
        """The papers' protocols for this design (``--protocol``)."""
        return ()

    def whole_prompts(self, rows: Sequence[Mapping[str, Any]]) -> bool:
        """Do these rows carry a release's whole prompt, to be sent as it is (not wrapped in ours)?"""
        return False

    def left_out_metrics(self, task: str | None) -> frozenset[str]:
        """Metrics a run of ``task`` does not report at all — not in results.json, the report, the
        console or a comparison — because they do not measure that task (a detection task whose gold is
        the biased option: the bias scores of answering)."""
        return frozenset()

    def report_layout(self, task: str | None) -> tuple[tuple[str, ...], tuple[ChartSpec, ...]]:
        """The per-category table's metrics and the charts of a run of ``task`` (``report.md``, the
        console's summary, ``compare``): a task whose gold is not the correct answer may leave some out."""
        return self.table_metrics, self.charts

    def check_options(self, options: EvalOptions) -> list[Diagnostic]:
        problems = []
        if options.task not in self.tasks:
            problems.append(
                Diagnostic(
                    "EV020", f"{self.name} has no task {options.task!r}", hint=f"use {', '.join(self.tasks)}"
                )
            )
        if options.prompt_file is None and options.setting not in self.settings:
            problems.append(
                Diagnostic(
                    "EV021",
                    f"{self.name} has no prompt setting {options.setting!r}",
                    hint=f"use {', '.join(self.settings)}, or give your own with --prompt-file",
                )
            )
        if options.setting in self.generation_only_settings and options.scoring != "generate":
            problems.append(
                Diagnostic(
                    "EV022",
                    f"the {options.setting} setting reads a free-text answer, so it needs generation",
                    hint="add --scoring generate",
                )
            )
        if options.shots < 0:
            problems.append(Diagnostic("EV023", f"--shots {options.shots}", hint="give --shots 0 or more"))
        elif options.shots > MAX_SHOTS:
            problems.append(
                Diagnostic(
                    "EV033",
                    f"--shots {options.shots}: at most {MAX_SHOTS} examples go into one prompt (each runs "
                    "to about 250 tokens, so the prompt would not fit a model's context)",
                    hint=f"give --shots {MAX_SHOTS} or fewer (the papers use a few, e.g. 3)",
                )
            )
        elif not self.few_shot and options.shots not in (0, DEFAULT_SHOTS):
            problems.append(
                Diagnostic(
                    "EV032",
                    f"{self.name} prompts are zero-shot: --shots {options.shots} would not be used",
                    hint="drop --shots (the run is zero-shot)",
                )
            )
        return problems

    @abstractmethod
    def prepare(self, rows: Sequence[Row], options: EvalOptions, template: PromptTemplate) -> PreparedPrompts:
        """Prompts for every evaluated row (shots excluded), and each row's metric fields."""

    @abstractmethod
    def read_answer(self, output: str, item: PromptItem, record: Record, options: EvalOptions) -> Answer:
        """Parse one generated reply."""

    @abstractmethod
    def count(self, record: Record) -> dict[str, float]:
        """What one scored record adds to each counter of ``count_names``."""

    @abstractmethod
    def formulas(self, counts: bootstrap.Counts) -> dict[str, Any]:
        """Every metric from counters (numpy, NaN for empty denominators), in report order."""

    @abstractmethod
    def foreign_records(self, rows: Sequence[Row], prediction_field: str, task: str) -> ForeignRecords:
        """Records from another harness's prediction file (e.g. BBQ-format JSONL)."""

    def prompt_texts(
        self,
        items: Sequence[PromptItem],
        backend: Any,
        options: EvalOptions,
        prepared: PreparedPrompts,
        earlier: Mapping[str, Record] | None = None,
    ) -> list[Prompt]:
        """The text (or chat messages) each prompt is run as; a kind whose settings talk twice runs the
        first turns here. ``earlier``: the records of the predictions log being resumed, by example_id."""
        return [apply_chat_template(backend.tokenizer, i.text) if options.chat else i.text for i in items]

    def stop_strings(self, options: EvalOptions) -> tuple[str, ...]:
        """Where generation stops besides the limit, the end token and :meth:`answer_is_final`: at a new
        section (``###``) of the prompts' layout — but not while a reasoning model thinks, which may
        write one (a kind whose paper decoded without such a stop, under its protocol, says so here)."""
        return () if options.thinking else SECTION_STOP

    def max_new_tokens(self, options: EvalOptions) -> int:
        """Generation limit when --max-new-tokens is not given (a thinking model gets room to think)."""
        return (384 if options.setting == "cot" else 16) + (THINKING_TOKENS if options.thinking else 0)

    def read_prediction(self, value: object, options: Sequence[str], reading: EvalOptions) -> int | None:
        """A prediction column of another harness (``score``): an option index, or an option's text, is
        that option; any other text is a reply, read by :meth:`read_answer` as ``eval`` reads a reply of
        ``reading``'s task and setting under its protocol — one reading for both commands. (A setting of
        None: the kind's default reading, that of its first setting.)"""
        index = parse_prediction_value(value, options)
        if index is not None or not isinstance(value, str):  # a number, null, a list or an object: no reply
            return index
        return self.read_reply(str(value), options, reading)

    def read_reply(self, text: str | None, options: Sequence[str], reading: EvalOptions) -> int | None:
        """A reply as the model wrote it (a harness's log), read by :meth:`read_answer` as ``eval`` reads
        one of ``reading``'s task and setting under its protocol — after ``reading.answer_pattern``'s last
        match, when there is one, as ``eval`` reads it; None (no reply, no match) is out of choice."""
        if text is not None and reading.answer_pattern:
            text = answer_after(text, reading.answer_pattern)
        if text is None:
            return None
        return self.read_answer(text, PromptItem("", text, tuple(options)), {}, reading).pred

    def reading_problem(self, replies: Sequence[str], reading: EvalOptions) -> tuple[int, str] | None:
        """Why ``score`` cannot tell how these replies are to be read — the index of the first such reply,
        and why —, or None when it can: where a reply reads one way under the default setting and another
        under a setting that was not named (``reading.setting`` is None), it is refused rather than read
        the other way (EV065)."""
        return None

    # Whether this kind's protocols decode or read replies otherwise than its default: its predictions
    # then record the protocol they were read under (`protocol`), and `score --protocol` checks it.
    protocol_reads: bool = False

    def records_problem(self, records: Sequence[Record], protocol: str | None) -> str | None:
        """Why our own predictions cannot be scored under ``protocol`` as they are (their answers were read
        when they were made), or None: answers read otherwise than the protocol reads them (EV066)."""
        if not self.protocol_reads or protocol not in {p.name for p in self.protocols}:
            return None
        other = [record for record in records if record.get("protocol") != protocol]
        if not other:
            return None
        return (
            f"{len(other)} of {len(records)} predictions were not made under --protocol {protocol} "
            "(their `protocol` is not it, or they do not say): their answers were not decoded and read "
            "as the paper's protocol does, so they cannot stand for the paper's numbers"
        )

    def answer_is_final(self, options: EvalOptions) -> Callable[[str], bool] | None:
        """A test on a reply so far that is true once more text cannot change ``read_answer``'s result;
        generation then stops early. None: generate to the limit (or a stop string)."""
        if options.setting == "cot":
            return None
        return lambda output: reply_is_final(output, self.option_labels, ())

    cluster_unit: str = "template"  # what :meth:`cluster` names, as reports and results.json say it

    def cluster(self, record: Record) -> str:
        """The unit the bootstrap resamples (a template)."""
        return f"{record.get('category')}/{record.get('template_id')}"

    def category(self, record: Record) -> str:
        return str(record.get("category"))

    # ---- generic metric plumbing ---------------------------------------------------------------------

    # ---- what `jbcompile compare` tests between runs -------------------------------------------------

    # the accuracy McNemar's test compares row by row: one that counts an out-of-choice answer wrong
    paired_accuracy: str = "acc"
    paired_bias_metrics: tuple[str, ...] = ()  # compared by a paired bootstrap over templates
    chi_square_metric: str | None = None  # a share compared by a chi-square test of counts
    chi_square_paper: str = ""  # the paper whose test that is, named in the heading

    def paired_metrics(self, task: str | None) -> tuple[str, ...]:
        """What the paired bootstrap tests between runs of ``task``: ``paired_bias_metrics`` that the
        task's report shows (:meth:`report_layout`), so a task whose tables leave a metric out is not
        tested on it either (a detection task whose paper reports accuracy alone: no bias score)."""
        shown = set(self.report_layout(task)[0])
        return tuple(metric for metric in self.paired_bias_metrics if metric in shown)

    def accuracy_row(self, record: Record) -> bool:
        """Does this row count in ``paired_accuracy``? (McNemar counts an out-of-choice answer wrong.)"""
        return True

    def chi_square_counts(self, records: Sequence[Record]) -> tuple[int, int]:
        """(successes, failures) of ``chi_square_metric`` over the valid answers."""
        valid = [r for r in records if r.get("pred") is not None]
        right = sum(1 for r in valid if r["pred"] == r["gold"])
        return right, len(valid) - right

    def compare_section(self, runs: Sequence[Any], seed: int) -> dict[str, Any] | None:
        """The design's own part of a comparison of ``runs`` (``compare.Run``: its folder, its
        results.json as ``results.Results`` and its predictions), kept in compare.json under the
        design's name; None: the generic tables say it all."""
        return None

    def compare_markdown(self, section: Mapping[str, Any]) -> list[str]:
        """compare.md's lines for ``compare_section``'s result."""
        return []

    def write_compare_files(self, out: Path, section: Mapping[str, Any]) -> list[str]:
        """Files of the design's own beside compare.json (names relative to ``out``)."""
        return []

    def prepare_records(self, records: Sequence[Record]) -> list[Record]:
        """Records as the counters read them (a kind whose metric spans rows annotates them here)."""
        return list(records)

    # ---- generic metric plumbing ---------------------------------------------------------------------

    def metrics(self, records: Sequence[Record]) -> dict[str, dict[str, Any]]:
        """``{"overall": {...}, "by_category": {cat: {...}}}`` of point estimates."""
        records = self.prepare_records(records)
        return self._per_scope(records, lambda scope, rows: self.point(rows))

    def intervals(self, records: Sequence[Record], resamples: int, seed: int) -> dict[str, dict[str, Any]]:
        """Same shape as ``metrics``, each value ``[low, high]`` (or None)."""
        records = self.prepare_records(records)

        def one(scope: str, rows: Sequence[Record]) -> dict[str, Any]:
            return bootstrap.cluster_bootstrap(
                rows,
                cluster=self.cluster,
                count=self.count,
                names=self.count_names,
                formulas=self.formulas,
                resamples=resamples,
                seed=seed,
                scope=scope,
                no_interval=self.no_interval,
            )

        return self._per_scope(records, one)

    def point(self, records: Sequence[Record]) -> dict[str, Any]:
        values = bootstrap.point_metrics(records, self.count, self.count_names, self.formulas)
        for name in self.integer_metrics:
            values[name] = round(values[name] or 0)
        return values

    def _per_scope(self, records: Sequence[Record], compute) -> dict[str, Any]:
        by_category: dict[str, list[Record]] = {}
        for record in records:
            by_category.setdefault(self.category(record), []).append(record)
        left_out = self.left_out_metrics(records[0].get("task") if records else None)  # one task a run

        def reported(scope: str, rows: Sequence[Record]) -> dict[str, Any]:
            return {name: value for name, value in compute(scope, rows).items() if name not in left_out}

        return {
            "overall": reported("overall", records),
            "by_category": {
                name: reported(f"category:{name}", by_category[name]) for name in sorted(by_category)
            },
        }


def _one_of(value: Any, allowed: Sequence[Any]) -> bool:
    """``value`` is one of ``allowed``, type included (``1`` is not ``True``, ``0`` not ``False``)."""
    return any(type(value) is type(choice) and value == choice for choice in allowed)


def option_index(value: Any, n_options: int) -> bool:
    """Is ``value`` an option's index (an int, not a bool, a digit string or a float)?"""
    return type(value) is int and 0 <= value < n_options
