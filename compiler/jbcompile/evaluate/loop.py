"""The eval loop: the rows left to compute, batch by batch, each batch's replies turned into prediction
records, and every round's records appended to the predictions log before the next round starts.

Data-parallel runs: every process holds the same batch plan; batch ``b`` runs on process ``b % world``;
after each round the records are gathered and only the main process writes. Batches do not depend on
the number of processes, so one and several processes write the same predictions.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..services import Service, service_errors
from . import predictions as files
from .backends.base import Backend, as_reply
from .distributed import Dist
from .kind import Answer, EvalKind, EvalOptions, PreparedPrompts, Record
from .parsing import answer_after
from .prompting import PromptItem
from .requests import Progress

# a record's mark of a reply whose generation stopped at the token limit (absent: it ended, or the
# backend could not tell)
AT_LIMIT = "at_limit"


class Stopped(Exception):
    """A batch stopped by a request that failed for good, with the records of the replies it got."""

    def __init__(self, records: list[Record], diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.records = records
        self.diagnostic = diagnostic


@dataclass
class Batch:
    """How one batch of prompts becomes prediction records: scored by the option labels' log-probability
    (``label_ids``) or generated and read (``max_new_tokens`` … ``answer_is_final``)."""

    backend: Backend
    kind: EvalKind
    options: EvalOptions
    items: Sequence[PromptItem]
    prepared: PreparedPrompts
    encoded: Sequence[Any]
    hashes: Sequence[str]
    label_ids: list[Any] | None
    max_new_tokens: int
    stop_strings: tuple[str, ...]
    answer_is_final: Callable[[str], bool] | None
    thinking: bool
    service: Service | None = None  # the model's library, named when it fails (set by the runner)
    # What stops a run without --thinking whose model turns out to reason (its replies carry reasoning):
    # its protocol's paper decoded a reasoning model otherwise (EV201). Empty: such replies are read.
    if_reasoning: Sequence[Diagnostic] = ()
    # how to go on after that stop: its replies, kept in the request cache, were decoded for another model
    after_reasoning: str | None = None

    def run(self, batch: list[int]) -> list[Record]:
        """The records of the prompts ``batch`` (indexes into ``items``); ``Stopped`` keeps the replies
        of a batch a remote backend could not finish."""
        from .backends.remote import BatchFailed

        sequences = [self.encoded[i] for i in batch]
        keys = [self.items[i].prefix_keys for i in batch]
        results: list[Any]
        library = self.service or getattr(self.backend, "service", None)
        try:
            with (
                service_errors(library, "running the model", allow=(BatchFailed,))
                if library
                else nullcontext()
            ):
                if self.label_ids is not None:
                    results = self.backend.score(sequences, keys, self.label_ids)
                else:
                    results = self.backend.generate(
                        sequences, keys, self.max_new_tokens, self.stop_strings, self.answer_is_final
                    )
        except BatchFailed as failure:
            finished = sorted(failure.done)
            kept = self.records([batch[j] for j in finished], [failure.done[j] for j in finished])
            raise Stopped(kept, failure.diagnostic) from None
        return self.records(batch, results)

    def records(self, batch: list[int], results: list) -> list[Record]:
        """Each prompt's record: the row's metric fields, its prompt hash, and the answer."""
        if self.label_ids is not None:
            return [self._scored(i, logprobs) for i, logprobs in zip(batch, results, strict=True)]
        records = [self._generated(i, output) for i, output in zip(batch, results, strict=True)]
        if self.if_reasoning and not self.thinking and any("reasoning" in record for record in records):
            stop = DiagnosticError(list(self.if_reasoning))  # nothing of a run decoded for another model
            stop.go_on = self.after_reasoning
            raise stop
        return records

    def _scored(self, i: int, logprobs: Sequence[float]) -> Record:
        record = dict(self.prepared.records[self.items[i].example_id])
        best: int | None = max(range(len(logprobs)), key=lambda j: (logprobs[j], -j))
        if not any(math.isfinite(v) for v in logprobs):
            best = None  # no option among a server's top_logprobs: the model answered something else
        record.update(
            prompt_hash=self.hashes[i],
            raw_output=None,
            pred=best,
            option_logprobs=[round(v, 6) if math.isfinite(v) else None for v in logprobs],
        )
        return record

    def _generated(self, i: int, output: str) -> Record:
        reply = as_reply(output, self.thinking)
        record = dict(self.prepared.records[self.items[i].example_id])
        pattern = self.options.answer_pattern  # the kind then reads only what follows it
        text = answer_after(str(reply), pattern) if pattern else str(reply)
        answer = Answer(None)  # a pattern that never matched: out of choice
        if text is not None:
            answer = self.kind.read_answer(text, self.items[i], record, self.options)
        record.update(
            prompt_hash=self.hashes[i], raw_output=str(reply), pred=answer.pred, option_logprobs=None
        )
        if reply.reasoning is not None:
            record["reasoning"] = reply.reasoning
        if reply.at_limit:  # generation stopped at --max-new-tokens: its answer may have been still to come
            record[AT_LIMIT] = True
        record.update(answer.extra)
        return record


@dataclass
class PredictionLog:
    """The predictions log a run appends to (main process). Nothing is written before the first reply;
    a new run's first records bring its run.json. With ``--overwrite`` the log is a hidden file beside
    the old run, which stays whole until the new results replace it."""

    out: Path
    fingerprint: dict[str, Any]
    overwrite: bool

    @property
    def run_path(self) -> Path:
        return self.out / files.RUN

    @property
    def predictions(self) -> Path:
        return self.out / files.PREDICTIONS

    @property
    def path(self) -> Path:
        return self.out / files.OVERWRITING if self.overwrite else self.predictions

    def start(self) -> None:
        """Before the first round: an interrupted --overwrite log starts over; a cut last line goes."""
        with files.writing(self.out):
            if self.overwrite:
                self.path.unlink(missing_ok=True)
            files.repair(self.predictions)

    def keep(self, records: list[Record]) -> None:
        if not records:
            return
        with files.writing(self.out):
            self.out.mkdir(parents=True, exist_ok=True)
            if not self.overwrite and not self.path.exists():
                files.write_atomic(self.run_path, files.dump_json(self.fingerprint))
            files.append_records(self.path, records)

    def stopped(self, diagnostic: Diagnostic) -> DiagnosticError:
        """The run's stop, pointing at the file that keeps what it got — the log, else the request cache
        (the replies of a batch whose every request failed, or that stopped before its first reply),
        else none: a stop before any reply names no file, for none is there."""
        cache = self.out / files.REQUESTS
        kept = [path for path in (self.run_path, self.path, cache) if path.is_file()]
        where = next((p for p in (self.path, cache) if p in kept), None)
        return DiagnosticError([replace(diagnostic, path=str(where) if where else None)], written=kept)


def run_rounds(
    batches: Sequence[list[int]], batch: Batch, log: PredictionLog, dist: Dist, progress: Progress
) -> None:
    """Every batch, ``dist.world`` at a time; each round's records reach the log before the next.
    A batch that stops (``Stopped``) leaves its replies in the log and stops the run (``DiagnosticError``)."""
    if dist.main:
        progress.start(sum(len(b) for b in batches))
    computed_here = 0
    try:
        for round_index in range(math.ceil(len(batches) / dist.world)):
            index = round_index * dist.world + dist.rank
            try:
                mine = batch.run(batches[index]) if index < len(batches) else []
            except Stopped as stopped:  # keep every reply that came back, then stop
                if dist.main:
                    log.keep(stopped.records)
                raise log.stopped(stopped.diagnostic) from None
            computed_here += len(mine)
            gathered = dist.gather(mine)
            if dist.main:
                log.keep(gathered)
                progress.advance(len(gathered))
    finally:
        if dist.main:
            progress.stop()
    if dist.world > 1:
        print(
            f"process {dist.rank + 1}/{dist.world} evaluated {computed_here} rows",
            file=sys.stderr,
            flush=True,
        )
