"""``run_score``: the metrics of an existing predictions file — ours, a release's rows with a prediction
column, an evaluation script's output or another harness's samples (see :mod:`.formats`) — written as a
run folder (results.json, report.md, charts) like an eval run's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..designs import DEFAULT_DESIGN
from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..emit.manifest import file_sha256
from ..outputs import Change, Output, settle, writing
from ..reading import PREDICTIONS, is_present
from ..text import shortened
from . import predictions as files
from .formats import Adapted, adapt, duplicate_ids, format_name
from .harness_logs import by_epoch, read_eval_file, unanswered
from .jsonfile import limited, read_json_records
from .kind import (
    ANSWERED_BY,
    EVAL_READ,
    HARNESS_READ,
    LOG_LIKELIHOOD,
    RAW_REPLY,
    SHOWN_PROMPT,
    EvalKind,
    EvalOptions,
    Record,
)
from .loop import AT_LIMIT
from .parsing import answer_after, are_texts, parse_prediction_value
from .prompting import LABEL_CHECK_ITEMS, shown_option_labels
from .protocols import check_kind
from .records import (
    check_foreign_rows,
    check_our_records,
    record_kind,
    resolve_predictions,
    row_kind,
    row_options,
)
from .registered import detect_kind, get_eval_kind
from .requests import ScoreRequest, check_score_out, check_score_request, score_inputs, settings_beyond
from .results import SCHEMA_VERSION, Results, RunWarning, library_versions, metrics_block
from .resume import DECODING
from .run import RunResult, cut_replies_warning, write_outputs
from .samples import write_samples_results

SCORE_FILES = ("results.json", "predictions.jsonl", "report.md", "charts/")


def read_jsonl_strict(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a predictions file with their line numbers (JSON Lines, a JSON array, or the
    ``{"score", "entries"}`` object an evaluation script writes); every unreadable line is a diagnostic."""
    if not path.exists():
        raise DiagnosticError(
            [Diagnostic("EV060", "predictions file not found", path=str(path), hint="check the path")]
        )
    if path.is_dir():
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV116", "the predictions path is a folder", path=str(path), hint="give a .jsonl file"
                )
            ]
        )
    is_present(path, PREDICTIONS)  # a FIFO or a device: F002, unopened
    if path.suffix.lower() == ".eval":  # an inspect log: a zip archive
        return read_eval_file(path)
    try:
        lines = read_json_records(path)
    except OSError as error:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV117",
                    f"cannot read the file: {error.strerror or error}",
                    path=str(path),
                    hint="check that the file can be read",
                )
            ]
        ) from None
    if lines.problems:
        raise DiagnosticError(limited(lines.problems))
    failed = unanswered(str(path), lines.records, lines.members)  # an inspect JSON log of a failed run
    if failed:
        raise DiagnosticError(failed)
    if not lines.records:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV062",
                    "the predictions file is empty",
                    path=str(path),
                    hint="give the predictions.jsonl a run wrote, or a file with one row per line",
                )
            ]
        )
    return lines.records


def run_score(request: ScoreRequest) -> RunResult:
    """Score the request's predictions file; the request is left as it was."""
    problems = check_score_request(request)
    if problems:
        raise DiagnosticError(problems)
    return _score(request)  # nothing is written before the folder is held: a stop before says so


@dataclass(frozen=True)
class Scored:
    """One run's scoring, before it is written: its results, kind, records and warnings."""

    results: Results
    kind: EvalKind
    records: list[Record]
    warnings: list[RunWarning]


def _score(request: ScoreRequest) -> RunResult:
    epochs = by_epoch(str(request.predictions), read_jsonl_strict(request.predictions))
    if len(epochs) > 1:  # an inspect log of --epochs N: each epoch a run of its own, then their mean
        return _score_epochs(request, [_scored(request, rows) for rows in epochs])
    scored = _scored(request, epochs[0])
    out = request.out_folder
    # every stop says what is on disk, looked at once the folder is held (a failed write too: the inner
    # files.writing turns it into EV102 before the account is added)
    with (
        files.writing(out),
        writing([Output("--out", out)], score_inputs(request), "score"),
        files.telling_what_is_kept(out, "score"),
        files.writing(out),
    ):
        problems = check_score_out(request)  # again, now that the folder is held
        if problems:
            raise DiagnosticError(problems)
        # the rows as scored, in eval's format: `compare` runs its paired tests on them
        also: dict[Path, Change] = {out / files.PREDICTIONS: files.json_lines(scored.records)}
        # a run held there (an earlier score, or an eval run with --overwrite) is replaced whole
        write_outputs(out, scored.results, scored.kind, also, whole=True)
    return RunResult(scored.results, out, SCORE_FILES, tuple(w.said() for w in scored.warnings))


def _score_epochs(request: ScoreRequest, epochs: Sequence[Scored]) -> RunResult:
    """An inspect log of several epochs, as ``eval --samples K`` writes its K runs: each epoch's run in
    ``epoch-k/`` (results.json, predictions.jsonl, report.md, charts), and results.json with every
    metric's mean and sd over the epochs (:func:`.samples.samples_results`) — the mean is what the
    exported task reports under ``--epochs N``."""
    out = request.out_folder
    folders = [f"epoch-{k}" for k in range(1, len(epochs) + 1)]
    with (
        files.writing(out),
        writing([Output("--out", out)], score_inputs(request), "score"),
        files.telling_what_is_kept(out, "score"),
        files.writing(out),
    ):
        problems = check_score_out(request)
        if problems:
            raise DiagnosticError(problems)
        for folder, epoch in zip(folders, epochs, strict=True):
            also: dict[Path, Change] = {out / folder / files.PREDICTIONS: files.json_lines(epoch.records)}
            write_outputs(out / folder, epoch.results, epoch.kind, also, whole=True)
        results, written = write_samples_results(
            out, [e.results for e in epochs], folders, [None] * len(epochs), whole=True
        )
    warnings = dict.fromkeys(w.said() for epoch in epochs for w in epoch.warnings)
    return RunResult(results, out, written, tuple(warnings))


def _scored(request: ScoreRequest, rows: list[tuple[int, dict[str, Any]]]) -> Scored:
    where = str(request.predictions)
    adapted = adapt(rows, where, request.prediction_field)
    if adapted.problems:
        raise DiagnosticError(limited(adapted.problems))
    raw, lines, detected, joined = _joined(request, adapted)
    ours = request.prediction_field is None and _our_records(raw)
    detected = detected or (record_kind(raw[0]) if ours else row_kind(raw[0]))
    if request.kind is not None and detected is not None and detected != request.kind:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV107",
                    f"--kind {request.kind} does not match the file: its rows are {detected} rows",
                    path=where,
                    hint=f"use --kind {detected}, or leave --kind out",
                )
            ]
        )
    kind = get_eval_kind(request.kind or detected or DEFAULT_DESIGN)
    protocol_problems = check_kind(EvalOptions(protocol=request.protocol), kind.name)
    if protocol_problems:
        raise DiagnosticError(protocol_problems)
    problems = duplicate_ids(raw, lines, where)
    if ours:
        problems = check_our_records(kind, raw, lines, where) + problems
        problems += _our_reading_problems(request, kind, raw, lines[0])
        if problems:
            raise DiagnosticError(limited(problems))
        records, ambiguous = raw, list(adapted.ambiguous)
        source_format = "jbcompile"
        task = _our_task(request, records, lines[0])
    else:
        field_name = _field(request, adapted, where)
        if request.dataset is None and _replies_alone(kind, raw):  # one cause, said once (not per row)
            raise DiagnosticError([_replies_without_their_rows(request, field_name)])
        problems += _setting_problems(request, kind)
        problems += _missing_prediction_field(raw, lines, field_name, where)
        problems += check_foreign_rows(kind, raw, lines, where)
        if problems:
            raise DiagnosticError(limited(problems))
        task = request.task or "qa"
        reading = EvalOptions(
            task=task,
            setting=request.setting,
            protocol=request.protocol,
            scoring="generate",
            answer_pattern=request.answer_pattern,
        )
        records, ambiguous = _foreign(request, kind, adapted, field_name, raw, lines, reading)
        source_format = format_name(adapted.format, kind.name)
    if not records:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV128", f"no row can be scored for --task {task}", path=where, hint="see ambiguous_rows"
                )
            ]
        )
    if task not in kind.tasks:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV105",
                    f"{kind.name} has no task {task!r}",
                    path=where,
                    hint=f"use {', '.join(kind.tasks)}",
                )
            ]
        )
    results = Results.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "kind": kind.name,
            "task": task,
            "source": {
                "predictions": where,
                "predictions_sha256": file_sha256(request.predictions),
                "model": request.model,
                "format": source_format,
                "prediction_field": request.prediction_field or (None if ours else adapted.prediction_field),
                # our predictions' setting: the one named, else the one their run.json says they were made
                # with (compare then knows it), else not known
                "setting": request.setting or (_known_setting(request) if ours else None),
                "answer_pattern": request.answer_pattern,
                "dataset": request.dataset,
                "config": request.config if request.dataset else None,
                "revision": request.revision,
                "commit": joined.commit if joined else None,
                "dataset_sha256": joined.sha256 if joined else None,
                "verification": joined.verification if joined else None,
            },
            "seeds": {"bootstrap": request.seed},
            "versions": library_versions(["numpy", "datasets"]),
            "ambiguous_rows": ambiguous,
            **metrics_block(
                kind, records, request.bootstrap, request.seed, request.protocol, _wording(request, ours)
            ),
        }
    )
    carried = _run_warnings(request, kind, records, raw, ours)
    partial = _partial_coverage(request, joined, raw, task)
    if partial is not None:
        carried.append(RunWarning.of(partial))
    if carried:  # what changes how the eval run's figures read changes these too
        results.warnings = carried
    return Scored(results, kind, records, carried)


def _run_warnings(
    request: ScoreRequest, kind: EvalKind, records: list[Record], rows: list[Record], ours: bool
) -> list[RunWarning]:
    """The warnings of the eval run whose predictions.jsonl is scored (a results.json beside it).

    Our records scored as eval read them carry the run's warnings as they are. Its replies read again
    (``--prediction-field raw_output``) carry EV055, which is about the replies (a reasoning model given
    a non-reasoning model's room), and get EV054 afresh: the replies the run's backend says stopped at
    the limit of its run.json, counted against the new reading (:func:`.run.cut_replies_warning`)."""
    if request.predictions.name != files.PREDICTIONS:
        return []
    folder = request.predictions.parent
    earlier = files.json_object(folder / files.RESULTS)
    if not earlier:
        return []
    found = earlier.get("warnings")
    carried = []
    for entry in found if isinstance(found, list) else []:
        try:
            carried.append(RunWarning.model_validate(entry))
        except ValidationError:
            continue  # an edited results.json: what cannot be read is no warning of eval's
    if ours:
        return carried
    carried = [warning for warning in carried if warning.code == "EV055"]
    settings = files.json_object(folder / files.RUN) or {}
    limit = _run_limit(settings, earlier)
    if limit is None:
        return carried
    cut = {str(row.get("example_id")) for row in rows if row.get(AT_LIMIT) is True}
    flagged = [{**record, AT_LIMIT: str(record.get("example_id")) in cut} for record in records]
    # the hint names the settings with more room under the run's own options (a rerun of eval's)
    found_options = settings.get("options")
    options: dict[str, Any] = found_options if isinstance(found_options, dict) else {}
    protocol = earlier.get("protocol")
    ran = EvalOptions(
        task=str(options.get("task") or request.task or "qa"),
        setting=options.get("setting") if isinstance(options.get("setting"), str) else request.setting,
        scoring="generate",
        protocol=protocol.get("name") if isinstance(protocol, dict) else None,
    )
    try:
        roomier = settings_beyond(kind, ran, limit)
    except (KeyError, ValueError):  # an edited run.json: the hint names no setting
        roomier = []
    cut_warning = cut_replies_warning(flagged, limit, roomier, request.answer_pattern)
    return carried + ([RunWarning.of(cut_warning)] if cut_warning else [])


def _run_limit(settings: dict[str, Any], results: dict[str, Any]) -> int | None:
    """The new tokens an eval run's replies were generated under: its run.json's ``decoding`` (as sent),
    else its results.json's ``scoring``."""
    for block in (settings.get(DECODING), results.get("scoring")):
        limit = block.get("max_new_tokens") if isinstance(block, dict) else None
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return limit
    return None


def _joined(request: ScoreRequest, adapted: Adapted) -> tuple[list[Record], list[int], str | None, Any]:
    """The rows (joined with the dataset's by example_id when ``--dataset`` is given), their lines, the
    kind the format or the dataset tells, and the dataset's rows as loaded (None without ``--dataset``)."""
    raw, lines = adapted.rows, adapted.lines
    if not request.dataset:
        return raw, lines, adapted.kind, None
    from .dataset import load_rows

    settle(request.dataset)  # a local build a kill cut short is finished first (a Hub id: nothing there)
    loaded = load_rows(request.dataset, request.config, request.revision)
    detected = adapted.kind or detect_kind(loaded.columns, request.dataset).name
    by_id = {str(row["example_id"]): row for row in loaded.rows}
    unnamed = [line for r, line in zip(raw, lines, strict=True) if not files.has_example_id(r)]
    if unnamed:  # joined by example_id: a row without one joins nothing (not a row "the dataset lacks")
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV115",
                    f"{len(unnamed)} prediction(s) without an example_id",
                    path=str(request.predictions),
                    line=unnamed[0],
                    hint="give each prediction the example_id of its row (--dataset joins them by it)",
                )
            ]
        )
    unknown = [
        (line, str(r.get("example_id")))
        for r, line in zip(raw, lines, strict=True)
        if str(r.get("example_id")) not in by_id
    ]
    if unknown:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV063",
                    f"{len(unknown)} prediction(s) name rows the dataset lacks, e.g. {unknown[0][1]!r}",
                    path=str(request.predictions),
                    line=unknown[0][0],
                    hint=f"the dataset's ids look like {next(iter(by_id), '')!r}",
                )
            ]
        )
    return [{**by_id[str(r["example_id"])], **r} for r in raw], lines, detected, loaded


SHOWN_CATEGORIES = 10  # categories without a prediction named in EV057 (the message gives the count)


def _partial_coverage(
    request: ScoreRequest, joined: Any, raw: Sequence[Record], task: str
) -> Diagnostic | None:
    """EV057 (a warning, kept in results.json and report.md): ``--dataset`` has rows the predictions do
    not answer. Their figures are scored as what they are — those rows' — as a run of ``eval --limit`` is
    (a harness's ``--limit``, a sample of the rows), but a reader who takes them for the dataset's would
    be misled: a category with no prediction is simply absent from the tables. Said with the counts and
    the categories left out, never refused (a part scored on purpose is common)."""
    if joined is None:
        return None
    chosen = _run_settings(request)
    if chosen.get("limit") or chosen.get("sample"):  # an eval run's own --limit/--sample: its results say so
        return None
    rows = joined.rows_for(task)
    given = {str(record.get("example_id")) for record in raw}
    left = [row for row in rows if str(row.get("example_id")) not in given]
    if not left:
        return None
    categories = sorted({str(row.get("category")) for row in rows})
    answered = {str(row.get("category")) for row in rows if str(row.get("example_id")) in given}
    absent = [category for category in categories if category not in answered]
    unanswered = {str(row.get("category")) for row in left}
    in_part = sorted(unanswered & answered)
    config = f" (config {request.config})" if request.config else ""
    message = (
        f"the predictions cover {len(rows) - len(left):,} of the {len(rows):,} rows of --dataset "
        f"{request.dataset}{config}: the figures are of those rows only"
    )
    if absent:
        named = ", ".join(absent[:SHOWN_CATEGORIES]) + (", …" if len(absent) > SHOWN_CATEGORIES else "")
        verb = "has" if len(absent) == 1 else "have"
        message += f"; {len(absent)} of its {len(categories)} categories {verb} no prediction: {named}"
    if in_part:
        message += f"; {len(in_part)} {'is' if len(in_part) == 1 else 'are'} answered in part"
    return Diagnostic(
        "EV057",
        message,
        severity=Severity.WARNING,
        hint="score the predictions of every row for the dataset's figures, or report these as a subset's",
    )


def _our_task(request: ScoreRequest, records: list[Record], first_line: int) -> str:
    """The task our predictions name (the first line's; the others agree, EV127), against ``--task``."""
    task = str(records[0].get("task", request.task or "qa"))
    if request.task is not None and request.task != task:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV127",
                    f"--task {request.task} contradicts the file: its predictions are of task {task}",
                    path=str(request.predictions),
                    line=first_line,
                    hint=f"leave --task out (or give --task {task}); to score task {request.task}, "
                    f"run `jbcompile eval --task {request.task}`",
                )
            ]
        )
    return task


def _field(request: ScoreRequest, adapted: Adapted, where: str) -> str:
    """The column of a foreign file that holds the prediction (EV064 when nothing says which)."""
    field_name = request.prediction_field or adapted.prediction_field
    if field_name is None:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV064",
                    "these are not jbcompile predictions; say which column holds the predicted answer "
                    f"(the file's columns: {_columns_of(adapted.rows)})",
                    path=where,
                    hint="add --prediction-field NAME (an option index, label, option text or reply)",
                )
            ]
        )
    return field_name


def _columns_of(rows: Sequence[Record], most: int = 40) -> str:
    """The columns of a file's rows, in the order they first appear (for a message)."""
    names = list(dict.fromkeys(key for row in rows for key in row))
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _missing_prediction_field(
    rows: Sequence[Record], lines: Sequence[int], field_name: str, path: str
) -> list[Diagnostic]:
    """A prediction column the rows lack, said once for the file (not once per row), with its columns."""
    missing = [line for row, line in zip(rows, lines, strict=True) if field_name not in row]
    if not missing:
        return []
    where = "no row has it" if len(missing) == len(rows) else f"{len(missing)} of {len(rows)} rows lack it"
    return [
        Diagnostic(
            "EV040",
            f"the prediction column {field_name!r}: {where} (the columns: {_columns_of(rows)})",
            path=path,
            line=missing[0],
            hint="name the column that holds the predicted answer with --prediction-field",
        )
    ]


def _setting_problems(request: ScoreRequest, kind: EvalKind) -> list[Diagnostic]:
    """``--setting`` names how the replies were asked for: one of the kind's settings, and under a
    protocol one its paper used."""
    from .protocols import get_protocol

    setting, where = request.setting, str(request.predictions)
    if setting is None:
        return []
    if setting not in kind.settings:
        message = f"{kind.name} has no prompt setting {setting!r}"
        return [Diagnostic("EV021", message, path=where, hint=f"use {', '.join(kind.settings)}")]
    protocol = get_protocol(request.protocol)
    if protocol is not None and setting not in protocol.settings:
        used = ", ".join(protocol.settings)
        return [
            Diagnostic(
                "EV201",
                f"--protocol {protocol.name} uses --setting {used}; --setting {setting} is not the paper's "
                "protocol",
                path=where,
                hint="drop --protocol to read these replies as that setting's",
            )
        ]
    return []


def _our_reading_problems(
    request: ScoreRequest, kind: EvalKind, records: Sequence[Record], first_line: int
) -> list[Diagnostic]:
    """Our predictions carry the answers ``eval`` read (``pred``): ``--setting`` has nothing to read, and
    a protocol whose reading they did not follow is refused (EV066) rather than shown as the paper's."""
    where = str(request.predictions)
    if request.answer_pattern:
        return [
            Diagnostic(
                "EV067",
                "--answer-pattern says how a column of replies is to be read; jbcompile predictions carry "
                "the answers their run read (pred)",
                path=where,
                hint="leave --answer-pattern out (or score the replies with --prediction-field raw_output "
                "--dataset …, which reads them again)",
            )
        ]
    if request.setting is not None:  # names the setting the replies were asked with (recorded)
        ran = _known_setting(request)
        if ran is not None and ran != request.setting:
            return [
                Diagnostic(
                    "EV067",
                    f"--setting {request.setting} contradicts the run that made these predictions: it used "
                    f"--setting {ran} (its {files.RUN})",
                    path=where,
                    hint=f"leave --setting out (or give --setting {ran})",
                )
            ]
        problems = _setting_problems(request, kind)
        if problems:
            return problems
    by_logprob = sum(1 for record in records if record.get("option_logprobs") is not None)
    problem = _by_likelihood(request.protocol, by_logprob, len(records), "(option_logprobs)")
    problem = (
        problem or _run_options_problem(request, kind) or kind.records_problem(records, request.protocol)
    )
    if problem is None:
        return []
    return [
        _not_the_protocols(request, problem, first_line, f"evaluate again with --protocol {request.protocol}")
    ]


def _wording(request: ScoreRequest, ours: bool) -> tuple[str, str | None]:
    """Whose prompt the scored replies answered: another harness's (jbcompile sent none of it), or for
    our predictions what the run.json of their run folder names (not known without it)."""
    from .protocols import UNKNOWN, prompt_wording
    from .run import wording_of

    if not ours:
        return prompt_wording(None, harness=True), None
    options = _run_options(request)
    if options is None:
        return UNKNOWN, None
    return wording_of(options.get("prompt_file"))


def _known_setting(request: ScoreRequest) -> str | None:
    setting = (_run_options(request) or {}).get("setting")
    return setting if isinstance(setting, str) else None


def _run_settings(request: ScoreRequest) -> dict[str, Any]:
    """The run.json of the run whose predictions.jsonl is scored; empty when there is none."""
    if request.predictions.name != files.PREDICTIONS:
        return {}
    return files.json_object(request.predictions.parent / files.RUN) or {}


def _run_options(request: ScoreRequest) -> dict[str, Any] | None:
    """The options of the run whose predictions.jsonl is scored (its run.json), None when not known."""
    options = _run_settings(request).get("options")
    return options if isinstance(options, dict) else None


def _our_records(rows: Sequence[Record]) -> bool:
    """Rows an eval run wrote (each with the answer it read, ``pred``, and its ``gold``)."""
    return all("pred" in row and "gold" in row for row in rows)


def _replies_alone(kind: EvalKind, rows: Sequence[Record]) -> bool:
    """Rows an eval run wrote, which hold its replies but none of the options they chose from."""
    count = len(kind.option_labels)
    return _our_records(rows) and not any(are_texts(row_options(row, count)) for row in rows)


def _replies_without_their_rows(request: ScoreRequest, field_name: str) -> Diagnostic:
    """An eval run's predictions read again from a column (its replies): they hold no options, so the
    rows they answered must come from the dataset, which the run's run.json names where it is there."""
    settings = _run_settings(request)
    dataset, config = settings.get("dataset"), settings.get("config")
    named = f"--dataset {dataset}" if isinstance(dataset, str) else "--dataset DATASET"
    if isinstance(config, str):
        named += f" --config {config}"
    return Diagnostic(
        "EV040",
        f"these are an eval run's predictions: reading their {field_name!r} again needs the options of the "
        "rows they answered, which they do not hold",
        path=str(request.predictions),
        hint=f"add the dataset the run evaluated: {named}"
        + (" (as its run.json names it)" if isinstance(dataset, str) else ""),
    )


def _run_options_problem(request: ScoreRequest, kind: EvalKind) -> str | None:
    """Our predictions do not say with which setting, shots and scoring they were made; the run.json of
    their run folder does. Where it says the run used one that ``--protocol``'s paper did not, the
    predictions cannot stand for the paper's table (a copy without its run.json cannot be told)."""
    from .protocols import get_protocol

    protocol = get_protocol(request.protocol)
    options = _run_options(request)
    if protocol is None or options is None:
        return None
    used: list[tuple[str, Any, tuple[Any, ...]]] = [
        ("--scoring", options.get("scoring"), (protocol.scoring,)),
        ("--setting", options.get("setting"), protocol.settings),
    ]
    if kind.few_shot:  # a zero-shot kind's run.json may hold the default it never used
        used.append(("--shots", options.get("shots"), protocol.shots))
    differ = [
        f"{flag} {value}" for flag, value, allowed in used if value is not None and value not in allowed
    ]
    if not differ:
        return None
    return (
        f"the run that made these predictions used {', '.join(differ)} (its {files.RUN}), which "
        f"--protocol {protocol.name}'s paper did not"
    )


def _by_likelihood(protocol_name: str | None, count: int, total: int, how: str) -> str | None:
    """Why predictions chosen by (log-)likelihood cannot stand for a protocol whose paper generated its
    answers, which can fall outside the options; None when none was, or the protocol scores so too."""
    from .protocols import get_protocol

    protocol = get_protocol(protocol_name)
    if protocol is None or protocol.scoring != "generate" or count == 0:
        return None
    return (
        f"{count} of {total} predictions were chosen by log-likelihood {how}: --protocol {protocol.name}'s "
        "paper generated its answers, which can fall outside the options"
    )


def _not_the_protocols(request: ScoreRequest, problem: str, line: int | None, again: str) -> Diagnostic:
    """EV066: predictions that were not made (or read) as ``--protocol`` makes them."""
    return Diagnostic(
        "EV066",
        problem,
        path=str(request.predictions),
        line=line,
        hint=f"score them without --protocol {request.protocol}, or {again}",
    )


def _harness_replies(
    request: ScoreRequest,
    kind: EvalKind,
    adapted: Adapted,
    field_name: str,
    rows: list[Record],
    lines: list[int],
) -> tuple[set[int], list[Diagnostic]]:
    """The one rule for a prediction a harness recorded itself (:data:`.kind.ANSWERED_BY`), whatever the
    format: an inspect scorer's letter, an lm-eval filter's label, a release's evaluation script's, or an
    option chosen by log-likelihood.

    Asked for a reading of its own — ``--protocol`` (the paper's reading) or ``--setting`` (that setting's)
    — ``score`` reads the reply the harness kept instead of the harness's answer: it is put in the
    prediction column, and the indexes of those rows are returned (read as replies, not as a column).
    Under a protocol whose paper generated, answers chosen by log-likelihood are refused (EV066). A reply
    to a task of `jbcompile export` (``EVAL_READ``) is read so always: its prompt was jbcompile's."""
    if field_name != adapted.prediction_field:  # a column the user named: taken as it is
        return set(), []
    answered = [row.get(ANSWERED_BY) for row in rows]
    likely = [line for how, line in zip(answered, lines, strict=True) if how == LOG_LIKELIHOOD]
    problem = _by_likelihood(request.protocol, len(likely), len(rows), f"(this {adapted.format} log)")
    if problem is not None:
        again = "generate the replies (e.g. a generate_until task) and score those"
        return set(), [_not_the_protocols(request, problem, likely[0], again)]
    asked = [
        f"{option} {value}"
        for option, value in (
            ("--protocol", request.protocol),
            ("--setting", request.setting),
            ("--answer-pattern", request.answer_pattern),
        )
        if value is not None
    ]
    if likely and asked and request.protocol is None:  # nothing for them to read: said, not ignored
        option = asked[0].split()[0]
        return set(), [
            Diagnostic(
                "EV067",
                f"{option} says how replies are read; {len(likely)} of {len(rows)} answers of this "
                f"{adapted.format} log were chosen by log-likelihood, with no reply",
                path=str(request.predictions),
                line=likely[0],
                hint=f"leave {option} out",
            )
        ]
    ours = {index for index, how in enumerate(answered) if how == EVAL_READ}
    if not asked:  # the harness's own reading stands, but for an exported task's replies: eval's
        for index in ours:
            rows[index][field_name] = rows[index].get(RAW_REPLY)
        return ours, []
    replies = ours | {index for index, how in enumerate(answered) if how == HARNESS_READ}
    other = _other_labels(
        request, kind, [(rows[i], lines[i]) for i in sorted(replies)], adapted.format, asked[0]
    )
    if other is not None:
        return set(), [other]
    for index in replies:
        rows[index][field_name] = rows[index].get(RAW_REPLY)
    return replies, []


def _other_labels(
    request: ScoreRequest, kind: EvalKind, rows: Sequence[tuple[Record, int]], log: str, asked: str
) -> Diagnostic | None:
    """EV068 when the prompt a harness's replies answered showed the options with other labels than the
    kind reads replies by (inspect's ``multiple_choice()`` letters them A, B, C where a kind may read 0,
    1, 2): read by the kind, every reply would be out of choice or another option. Judged as
    ``eval`` judges a prompt file (:func:`.prompting.shown_option_labels`), on the first prompt (of the
    first ``LABEL_CHECK_ITEMS``) whose labels can be told."""
    read = [label.upper() for label in kind.option_labels]
    for row, line in rows[:LABEL_CHECK_ITEMS]:
        prompt, options = row.get(SHOWN_PROMPT), row_options(row, len(read))
        shown = (
            shown_option_labels(prompt, options) if isinstance(prompt, str) and are_texts(options) else None
        )
        if shown is None:
            continue
        if [label.upper() for label in shown] == read[: len(shown)]:
            return None
        return Diagnostic(
            "EV068",
            f"the {log} log's prompt showed the options as {', '.join(shown)}, but {kind.name} replies are "
            f"read by the labels {', '.join(read)}: read as {asked} reads them, its replies would name "
            "no option or another one",
            path=str(request.predictions),
            line=line,
            hint=f"drop {asked.split()[0]} to count the harness's own answers, or run `jbcompile eval` "
            f"with {asked} (its prompts show {', '.join(read)})",
        )
    return None


def _foreign(
    request: ScoreRequest,
    kind: EvalKind,
    adapted: Adapted,
    field_name: str,
    raw: list[Record],
    lines: list[int],
    reading: EvalOptions,
) -> tuple[list[Record], list[dict[str, Any]]]:
    """Another harness's rows as the kind's records, read as ``reading`` says, and the rows whose labels
    could not be derived (numbered by the file's lines)."""
    where = str(request.predictions)
    harness_replies, problems = _harness_replies(request, kind, adapted, field_name, raw, lines)
    if problems:
        raise DiagnosticError(problems)
    replies = [(line, row[field_name]) for row, line in zip(raw, lines, strict=True)]
    replies = [(line, value) for line, value in replies if isinstance(value, str)]
    unclear = kind.reading_problem([value for _, value in replies], reading)
    if unclear is not None:
        index, why = unclear
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV065",
                    why,
                    path=where,
                    line=replies[index][0],
                    hint="name the setting the replies were asked with: --setting NAME",
                )
            ]
        )
    unmatched = _pattern_problem(request, kind, raw, lines, field_name, harness_replies)
    if unmatched is not None:
        raise DiagnosticError([unmatched])
    for index in harness_replies:  # a reply the model wrote, read as `eval` reads it (never as an index)
        row = raw[index]
        options = row_options(row, len(kind.option_labels))
        reply = row[field_name]
        row[field_name] = kind.read_reply(reply, options, reading) if are_texts(options) else None
    raw_values = resolve_predictions(kind, raw, field_name, reading)
    try:
        foreign = kind.foreign_records(raw, field_name, request.task or "qa")
    except DiagnosticError as error:
        # the kinds number rows 1, 2, …; the user's file has its own line numbers
        renumbered = [
            replace(d, path=where, line=lines[d.line - 1] if d.line and d.line <= len(lines) else d.line)
            for d in error.diagnostics
        ]
        raise DiagnosticError(limited(renumbered)) from None
    records, ambiguous = foreign.records, list(adapted.ambiguous) + foreign.ambiguous
    for record in records:
        record["raw_output"] = raw_values.get(str(record.get("example_id")), record.get("raw_output"))
    for entry in ambiguous:
        line = entry.get("line")
        if isinstance(line, int) and line <= len(lines) and entry not in adapted.ambiguous:
            entry["line"] = lines[line - 1]
    return records, _unique(ambiguous)


def _pattern_problem(
    request: ScoreRequest,
    kind: EvalKind,
    rows: list[Record],
    lines: list[int],
    field_name: str,
    harness_replies: set[int],
) -> Diagnostic | None:
    """EV069 when ``--answer-pattern`` matches none of the replies it is to read (a value that is an
    option's index or text is that option whatever the pattern): every answer would be out of choice
    because of the pattern, not the model."""
    pattern = request.answer_pattern
    if pattern is None:
        return None
    replies: list[tuple[int, str]] = []
    for index, (row, line) in enumerate(zip(rows, lines, strict=True)):
        value = row.get(field_name)
        options = row_options(row, len(kind.option_labels))
        texts = options if are_texts(options) else []
        if isinstance(value, str) and (
            index in harness_replies or parse_prediction_value(value, texts) is None
        ):
            replies.append((line, value))
    if not replies or any(answer_after(reply, pattern) is not None for _, reply in replies):
        return None
    example = shortened(" ".join(replies[0][1].split()))
    return Diagnostic(
        "EV069",
        f"--answer-pattern {pattern!r} matches none of the {len(replies)} replies (e.g. {example!r}): "
        "every answer would be out of choice",
        path=str(request.predictions),
        line=replies[0][0],
        hint="give a pattern that matches just before where these replies put their answer (see the "
        "reply above), or leave --answer-pattern out",
    )


def _unique(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for entry in entries:
        key = (entry.get("example_id"), entry.get("problem"))
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out
