"""Harness logs that hold any design's rows, read by ``score`` (docs/harnesses.md): lm-evaluation-harness
samples of the tasks ``jbcompile export lm-eval`` wrote, and inspect's evaluation logs.

An lm-eval samples line holds the row as its ``doc``; the prediction is the option whose label has the
highest log-likelihood (a ``multiple_choice`` task) or the reply (a ``generate_until`` task). The reply of
a ``_gen`` task of ``jbcompile export lm-eval`` (its filter is :data:`EXPORT_FILTERS`) is read by ``score``
itself from ``resps``, as ``eval`` reads a reply — the task's filter is that reader too, but an earlier
export's was a regex that read other options —; another task's filtered reply is the harness's reading.
(Samples of lm-eval's own tasks of a design's benchmark are that design's release format, read first.)

An inspect log is a JSON document (``--log-format json``: an object whose ``samples`` list holds one
object per sample) or an ``.eval`` file (a zip archive, its samples compressed with zstd: read through
inspect-ai's own reader, so it needs inspect-ai installed). A sample of a task that ``jbcompile export
inspect`` wrote carries the dataset's row as its ``metadata`` and the picked option's letter as a
score's ``answer``; any other task whose samples carry a design's columns in ``metadata`` reads the same
way. A sample that never got the model's reply (its ``error`` is set: a failed request, a cancelled
sample) or was never scored holds no answer, and a log whose run did not finish (``status`` started,
cancelled or error) may lack samples: ``score`` refuses such a log whole (EV143) rather than count
those samples as out-of-choice answers or leave them out of the denominators.
(lm-eval writes its samples only once every request is answered: a failed request ends the run before
any samples file exists, and a reply the API left empty is recorded as the empty reply it was.)
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, cast

from .. import limits
from ..diagnostics import Diagnostic, DiagnosticError
from ..reading import FileKind, too_big_decompressed
from ..redaction import redact
from .kind import ANSWERED_BY, EVAL_READ, HARNESS_READ, LOG_LIKELIHOOD, RAW_REPLY, SHOWN_PROMPT, ReleaseFormat

INSPECT_ANSWER = "_inspect_answer"  # the option index read from the sample's score
# the scorer of the setting tasks of `jbcompile export inspect`: jbcompile's reader, whose replies score
# reads itself, as eval reads them (the multiple_choice task's scorer counts inspect's letter)
INSPECT_READER = "jbcompile_reader"
SAMPLE_FIELDS = frozenset({"id", "epoch", "input", "scores", "metadata"})
LETTERS = "ABCDEFGHIJ"


DAMAGED_LOG = "give the .eval file inspect wrote, whole (or its JSON: `inspect log convert --to json`)"


def read_eval_file(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The samples of an ``.eval`` log, numbered 1, 2, … in the log's order."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV142",
                    "reading an inspect .eval log needs inspect-ai",
                    path=str(path),
                    hint="pip install inspect-ai, or convert the log: "
                    "`inspect log convert LOG --to json --output-dir DIR`",
                )
            ]
        ) from None
    from .. import reading

    reading.check_file(path, reading.PREDICTIONS)  # a file, and not above the limit, before inspect opens it
    check_archive(path, reading.PREDICTIONS)  # … and so are its contents once decompressed
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # a damaged archive: inspect raises many kinds
        raise DiagnosticError(
            [Diagnostic("EV142", f"not a readable inspect log: {error}", path=str(path), hint=DAMAGED_LOG)]
        ) from None
    samples = [(index, sample.model_dump(mode="json")) for index, sample in enumerate(log.samples or [], 1)]
    header = {"status": log.status, "error": log.error.model_dump(mode="json") if log.error else None}
    problems = unanswered(str(path), samples, header)
    if problems:
        raise DiagnosticError(problems)
    if not samples:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV062",
                    "the inspect log holds no samples",
                    path=str(path),
                    hint="give the log of a run that evaluated the task's samples",
                )
            ]
        )
    return samples


_BLOCK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then the lengths of the name and the extra field
_STORED, _DEFLATED, _ZSTANDARD = 0, 8, 93  # the compressions inspect writes (zstd now, deflate before)


def check_archive(path: Path, kind: FileKind) -> None:
    """Refuse a zip archive whose members decompress to more than ``kind``'s limit together, before any
    reader inflates them: a few MB can hold GBs (a zip bomb). The sizes the archive declares are summed
    first; then every member is decompressed here a block at a time and counted, since a declared size
    can lie (inspect's reader trusts it). Nothing is kept in memory but one block. Before all that, the
    directory that lists the members is bounded (:func:`check_directory`, F004)."""
    shown = str(path)
    try:
        with path.open("rb") as raw:
            check_directory(raw, shown)  # before zipfile reads the directory, every member of it at once
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            declared = sum(member.file_size for member in members)
            if declared > kind.max_bytes:
                raise DiagnosticError([_inflates_past(shown, kind, declared, lying=False)])
            with path.open("rb") as raw:
                total = 0
                for member in members:
                    for block in _inflated(raw, member, shown):
                        total += len(block)
                        if total > kind.max_bytes:
                            raise DiagnosticError([_inflates_past(shown, kind, declared, lying=True)])
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError) as error:
        raise DiagnosticError(
            [Diagnostic("EV142", f"not a readable inspect log: {error}", path=shown, hint=DAMAGED_LOG)]
        ) from None


# The end records of a zip archive (PKWARE's APPNOTE.TXT, 4.3.14 to 4.3.16): where its central directory
# is, how large, and how many members it lists. zipfile reads the whole directory as it opens an archive.
_END = struct.Struct("<4s4H2LH")  # signature, disks, entries on this disk, entries, size, offset, comment
_END_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # signature, disk of the zip64 end record, its offset, disks
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
# signature, size of the rest, versions, disks, entries on this disk, entries, directory size, offset
_ZIP64_END = struct.Struct("<4sQ2H2L4Q")
_ZIP64_END_SIGNATURE = b"PK\x06\x06"
_END_WINDOW = _END.size + (1 << 16)  # an end record and its comment of at most 64 KiB: where zipfile looks


def declared_directory(raw: BinaryIO) -> tuple[int, int] | None:
    """(members, bytes) of the central directory a zip archive's end records declare: the largest figures
    a reader may take, from the end record zipfile finds (the last one) and from a zip64 end record (the
    one just before its locator, where zipfile reads it, and the one at the offset the locator names),
    where the end record's own say "see the zip64 record" (0xFFFF, 0xFFFFFFFF). None when there is no
    end record: not a zip archive, which zipfile then says."""
    size = raw.seek(0, os.SEEK_END)
    window = min(size, _END_WINDOW)
    raw.seek(size - window)
    tail = raw.read(window)
    at = len(tail) - _END.size
    if not (at >= 0 and tail.startswith(_END_SIGNATURE, at) and tail.endswith(b"\0\0")):
        at = tail.rfind(_END_SIGNATURE)  # an archive with a comment
    if at < 0 or at + _END.size > len(tail):
        return None
    end = _END.unpack_from(tail, at)
    records = _zip64_ends(raw, size, size - window + at)
    if not records:
        return max(end[3], end[4]), end[5]
    members = [count for record in records for count in record[6:8]]
    members += [count for count in end[3:5] if count != 0xFFFF]
    directory = [record[8] for record in records] + ([end[5]] if end[5] != 0xFFFFFFFF else [])
    return max(members), max(directory)


def _zip64_ends(raw: BinaryIO, size: int, end_offset: int) -> list[tuple[Any, ...]]:
    """The zip64 end records of an archive whose end record stands at ``end_offset``: none without a
    locator just before it."""
    if end_offset < _ZIP64_LOCATOR.size:
        return []
    raw.seek(end_offset - _ZIP64_LOCATOR.size)
    locator = _ZIP64_LOCATOR.unpack(raw.read(_ZIP64_LOCATOR.size))
    if locator[0] != _ZIP64_LOCATOR_SIGNATURE:
        return []
    records = []
    for offset in dict.fromkeys((end_offset - _ZIP64_LOCATOR.size - _ZIP64_END.size, locator[2])):
        if 0 <= offset <= size - _ZIP64_END.size:
            raw.seek(offset)
            record = _ZIP64_END.unpack(raw.read(_ZIP64_END.size))
            if record[0] == _ZIP64_END_SIGNATURE:
                records.append(record)
    return records


def check_directory(raw: BinaryIO, shown: str) -> None:
    """Refuse (F004) a zip archive whose end records declare more members or a larger central directory
    than the limits, before zipfile reads that directory: it makes an object of every member first, so
    a small file that declares millions of them would cost minutes and gigabytes before any other bound
    applies."""
    declared = declared_directory(raw)
    if declared is None:
        return
    members, directory = declared
    if members <= limits.MAX_ARCHIVE_ENTRIES and directory <= limits.MAX_ARCHIVE_DIRECTORY_BYTES:
        return
    most = limits.shown(limits.MAX_ARCHIVE_DIRECTORY_BYTES, "bytes")
    raise DiagnosticError(
        [
            Diagnostic(
                "F004",
                f"a zip archive whose end record declares {members:,} members and a directory of "
                f"{directory:,} bytes: an archive is read with at most {limits.MAX_ARCHIVE_ENTRIES:,} "
                f"members and {most} of directory (MAX_ARCHIVE_ENTRIES, MAX_ARCHIVE_DIRECTORY_BYTES); "
                "not opened",
                path=shown,
                hint="split the evaluation into several logs (fewer samples or epochs each); "
                "a damaged archive: write it again",
            )
        ]
    )


def _inflated(raw: BinaryIO, member: zipfile.ZipInfo, shown: str) -> Iterator[bytes]:
    """The decompressed bytes of one member, at most a block at a time, read from its own bytes."""
    if member.flag_bits & 0x1:
        raise zipfile.BadZipFile(f"{member.filename} is encrypted")
    raw.seek(member.header_offset)
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(raw.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for {member.filename}")
    raw.seek(name_length + extra_length, os.SEEK_CUR)
    compressed = _Slice(raw, member.compress_size)
    if member.compress_type == _STORED:
        yield from iter(lambda: compressed.read(_BLOCK), b"")
    elif member.compress_type == _DEFLATED:
        inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        for chunk in iter(lambda: compressed.read(_BLOCK), b""):
            while chunk:
                yield inflate.decompress(chunk, _BLOCK)
                chunk = inflate.unconsumed_tail
    elif member.compress_type == _ZSTANDARD:
        import zstandard  # inspect-ai's own dependency (its zip support), there whenever inspect-ai is

        reader = zstandard.ZstdDecompressor().stream_reader(
            cast(BinaryIO, compressed), read_across_frames=True
        )
        try:
            yield from iter(lambda: reader.read(_BLOCK), b"")
        except zstandard.ZstdError as error:
            raise zipfile.BadZipFile(f"{member.filename}: {error}") from None
    else:
        raise zipfile.BadZipFile(
            f"{member.filename} is compressed with method {member.compress_type}, which inspect never writes"
        )


class _Slice:
    """``size`` bytes of a file from where it stands: one member's compressed data, read as a stream."""

    def __init__(self, raw: BinaryIO, size: int) -> None:
        self.raw, self.left = raw, size

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data = self.raw.read(size)
        self.left -= len(data)
        return data


def _inflates_past(shown: str, kind: FileKind, declared: int, lying: bool) -> Diagnostic:
    limit = limits.shown(kind.max_bytes, "bytes")
    found = (
        f"an archive whose files decompress to more than {limit}, though they declare {declared:,} bytes"
        if lying
        else f"an archive whose files decompress to {declared:,} bytes"
    )
    return too_big_decompressed(shown, kind, found)


FINISHED = "success"  # inspect's status of a run whose every sample ran (started, cancelled, error: not)
SHOWN_IDS = 3  # failed samples named in EV143's message
MAX_SHOWN = 300  # characters of an error's first line shown (one line may hold a whole web page)


def sample_failure(sample: Mapping[str, Any]) -> str | None:
    """Why an inspect sample holds no answer of the model: the first line of the error it stopped on (a
    request that failed, a sample cancelled when another failed), or that it was never scored (``inspect
    eval --no-score``); None for a sample the model answered and the scorer read. A scorer that found
    no letter in a reply still records a score: that is an out-of-choice answer, not a failure."""
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, Mapping) else error
        return first_line(message) or "an error without a message"
    if not sample.get("scores"):
        return "never scored"
    return None


def first_line(text: Any) -> str:
    """The first line of an error's message, redacted (an error may quote a request and its key)."""
    lines = str(text or "").strip().splitlines()
    line = redact(lines[0].strip()) if lines else ""
    return line if len(line) <= MAX_SHOWN else line[: MAX_SHOWN - 1] + "…"


def unanswered(
    path: str, samples: list[tuple[int, dict[str, Any]]], log: Mapping[str, Any]
) -> list[Diagnostic]:
    """EV143 for an inspect log (its samples, and ``log``: the log's own ``status`` and ``error``) whose
    run did not finish or holds samples the model never answered; nothing for any other file (one
    without samples is inspect's when it has a ``status``).

    Refused whole, never scored without those samples: a sample that failed is no out-of-choice answer,
    and scoring the others would shrink every denominator without a word of it in the results."""
    if not (InspectSamples().matches(samples[0][1]) if samples else "status" in log):
        return []
    status = log.get("status")
    unfinished = isinstance(status, str) and status != FINISHED
    failed = [(line, sample, why) for line, sample in samples if (why := sample_failure(sample)) is not None]
    if not unfinished and not failed:
        return []
    parts = []
    if unfinished:
        error = log.get("error")
        said = first_line(error.get("message") if isinstance(error, Mapping) else error)
        said = f": {said}" if said else ""
        parts.append(f"its run did not finish (status {status}{said}), so samples may be missing")
    if failed:
        ids = ", ".join(redact(str(sample.get("id"))) for _, sample, _ in failed[:SHOWN_IDS])
        more = f" and {len(failed) - SHOWN_IDS} more" if len(failed) > SHOWN_IDS else ""
        parts.append(
            f"{len(failed)} of {len(samples)} samples hold no answer of the model ({ids}{more}; the first: "
            f"{failed[0][2]}), which is no out-of-choice answer"
        )
    return [
        Diagnostic(
            "EV143",
            f"an inspect log of a failed run: {'; '.join(parts)}. Not scored: scoring the samples that "
            "were answered would change the denominators",
            path=path,
            line=failed[0][0] if failed else None,
            hint="fix the cause, then rerun the failed samples in inspect (`inspect eval-retry LOG`) and "
            "score the log it writes; a log written with --no-score: `inspect score LOG` first",
        )
    ]


Samples = list[tuple[int, dict[str, Any]]]


def by_epoch(path: str, samples: Samples) -> list[Samples]:
    """An inspect log's samples, one list per epoch (``--epochs N``), in the epochs' order: ``score`` scores
    each as a run of its own and reports their mean and sd, the mean being what the exported task reports
    (each epoch's metrics, then their mean). One list for any other file, or a log of one epoch.

    EV144 where the epochs cannot be told apart or do not hold the same samples (an edited log): each
    epoch's metrics would then be of other rows, and their mean no figure inspect reported."""
    if not samples or not InspectSamples().matches(samples[0][1]):
        return [samples]
    epochs: dict[Any, Samples] = {}
    for line, sample in samples:
        epoch = sample.get("epoch")
        epochs.setdefault(epoch if isinstance(epoch, int | str | float | None) else repr(epoch), []).append(
            (line, sample)
        )
    if len(epochs) < 2:
        return [samples]
    numbered = all(isinstance(e, int) and not isinstance(e, bool) for e in epochs)
    ids = {e: sorted(str(sample.get("id")) for _, sample in part) for e, part in epochs.items()}
    first = ids[next(iter(ids))]
    odd = [e for e in epochs if ids[e] != first or not isinstance(e, int) or isinstance(e, bool)]
    if numbered and not odd:
        return [epochs[e] for e in sorted(epochs)]
    why = "epochs that hold different samples" if numbered else "samples without an epoch number"
    raise DiagnosticError(
        [
            Diagnostic(
                "EV144",
                f"an inspect log of {len(epochs)} epochs with {why}: score scores each epoch as a run of its "
                "own, and these are not runs over the same rows",
                path=path,
                line=epochs[odd[0]][0][0],
                hint="score the log inspect wrote, unedited (each epoch holds every sample once, with its "
                "epoch number)",
            )
        ]
    )


def answer_index(scores: Any) -> int | None:
    """The option a sample's scorer recorded as its answer (a single letter); None when there is none."""
    if not isinstance(scores, Mapping):
        return None
    for score in scores.values():
        answer = score.get("answer") if isinstance(score, Mapping) else None
        if isinstance(answer, str):
            letter = answer.strip()
            return LETTERS.index(letter) if len(letter) == 1 and letter in LETTERS else None
    return None


LM_EVAL_ANSWER = "_lm_eval_answer"  # an option index, or the filtered reply of a generate_until task
LM_EVAL_FIELDS = frozenset({"doc_id", "doc", "arguments", "filtered_resps"})


def lm_eval_reply(sample: Mapping[str, Any]) -> str | None:
    """A ``generate_until`` sample's reply as the model wrote it (``resps``, before lm-eval's filters:
    the exported tasks' filter keeps the first label that stands alone), else None."""
    responses = sample.get("resps")
    first = responses[0] if isinstance(responses, list) and len(responses) == 1 else None
    if isinstance(first, list) and len(first) == 1:
        first = first[0]
    return first if isinstance(first, str) else None


# The filter names of the `_gen` tasks `jbcompile export lm-eval` writes: jbcompile's reader, and the regex
# filter of earlier exports
EXPORT_FILTER = "jbcompile"
EXPORT_FILTERS = frozenset({EXPORT_FILTER, "option"})


def exported_reply(sample: Mapping[str, Any]) -> str | None:
    """The reply of a sample of an exported ``_gen`` task, which ``score`` reads itself; else None."""
    return lm_eval_reply(sample) if sample.get("filter") in EXPORT_FILTERS else None


def how_answered(sample: Mapping[str, Any]) -> str:
    """Whose reading of a generate_until sample's reply counts: ``eval``'s for an exported task's."""
    return EVAL_READ if exported_reply(sample) is not None else HARNESS_READ


def lm_eval_answer(sample: Mapping[str, Any]) -> tuple[int | str | None, str | None]:
    """The prediction of one lm-eval sample (an option index, or the reply: the filtered one, or for an
    exported task the reply itself), and the reply as the model wrote it; (None, None) when it cannot be
    read."""
    responses = sample.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        return None, None
    if len(responses) == 1 and isinstance(responses[0], str):  # generate_until: the filtered reply
        reply = lm_eval_reply(sample) or responses[0]
        return exported_reply(sample) or responses[0], reply
    try:
        scores = [float(r[0] if isinstance(r, list | tuple) else r) for r in responses]
    except (TypeError, ValueError, IndexError):
        return None, None
    best = max(range(len(scores)), key=lambda k: (scores[k], -k))  # numpy's argmax: the first maximum
    return best, None


class LmEvalSamples(ReleaseFormat):
    """``--log_samples`` lines of a task `jbcompile export lm-eval` wrote: the doc is the dataset's row,
    the options are scored in the row's order."""

    name = "lm-eval"
    kind = None  # the design is told by the row's columns
    prediction_field = LM_EVAL_ANSWER

    def matches(self, row: Mapping[str, Any]) -> bool:
        return set(row) >= LM_EVAL_FIELDS

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        doc = row.get("doc")
        if not isinstance(doc, Mapping) or not doc:
            return None, "doc is not an object"
        answer, reply = lm_eval_answer(row)
        if answer is None:
            return None, "filtered_resps holds neither log-likelihoods nor a reply"
        converted = dict(doc)
        converted.setdefault("example_id", row.get("doc_id"))
        converted[LM_EVAL_ANSWER] = answer
        converted[RAW_REPLY] = reply
        converted[ANSWERED_BY] = how_answered(row) if isinstance(answer, str) else LOG_LIKELIHOOD
        converted[SHOWN_PROMPT] = lm_eval_prompt(row) if isinstance(answer, str) else None
        return converted, None

    def field_problems(self, prediction_field: str | None, path: str) -> list[Diagnostic]:
        return _no_field(
            prediction_field, LM_EVAL_ANSWER, path, "lm-evaluation-harness logs", "filtered_resps"
        )


class InspectSamples(ReleaseFormat):
    """The samples of an inspect log whose ``metadata`` holds a dataset row."""

    name = "inspect"
    kind = None  # the design is told by the row's columns
    prediction_field = INSPECT_ANSWER

    def matches(self, row: Mapping[str, Any]) -> bool:
        return set(row) >= SAMPLE_FIELDS

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        metadata = row.get("metadata")
        if not isinstance(metadata, Mapping) or not metadata:
            return None, "the sample's metadata does not hold the dataset row"
        converted = dict(metadata)
        converted.setdefault("example_id", row.get("id"))
        pred = answer_index(row.get("scores"))
        converted[INSPECT_ANSWER] = pred
        output = row.get("output")
        choices = output.get("choices") if isinstance(output, Mapping) else None
        message = choices[0].get("message") if isinstance(choices, list) and choices else None
        converted[RAW_REPLY] = message_text(message.get("content")) if isinstance(message, Mapping) else None
        scores = row.get("scores")
        ours = isinstance(scores, Mapping) and INSPECT_READER in scores and converted[RAW_REPLY] is not None
        # an exported setting task's reply is read as eval reads it; another scorer's letter is its own
        converted[ANSWERED_BY] = EVAL_READ if ours else HARNESS_READ
        converted[SHOWN_PROMPT] = inspect_prompt(row)
        return converted, None

    def field_problems(self, prediction_field: str | None, path: str) -> list[Diagnostic]:
        return _no_field(prediction_field, INSPECT_ANSWER, path, "inspect logs", "each score's answer letter")


def message_text(content: Any) -> str | None:
    """The text of an inspect message: its content, or the text parts of a list of parts (a reasoning
    model's reasoning part is not the reply)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        part["text"]
        for part in content
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    return "".join(texts) if texts else None


def inspect_prompt(sample: Mapping[str, Any]) -> str | None:
    """The prompt an inspect sample's model answered: the last user message (a solver such as
    ``multiple_choice()`` writes its own, lettered options and all), else the sample's input."""
    messages = sample.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return message_text(message.get("content"))
    given = sample.get("input")
    return given if isinstance(given, str) else None


def lm_eval_prompt(sample: Mapping[str, Any]) -> str | None:
    """The prompt of a ``generate_until`` sample: its request's context (``gen_args_0``'s ``arg_0``, or
    in older lm-eval versions the first item of ``arguments``' first pair)."""
    arguments = sample.get("arguments")
    if isinstance(arguments, Mapping):
        request = arguments.get("gen_args_0")
        context = request.get("arg_0") if isinstance(request, Mapping) else None
    else:
        first = arguments[0] if isinstance(arguments, list) and arguments else None
        context = first[0] if isinstance(first, list | tuple) and first else None
    return context if isinstance(context, str) else None


def _no_field(given: str | None, own: str, path: str, logs: str, where: str) -> list[Diagnostic]:
    """A ``--prediction-field`` for a log that keeps its prediction in one place of its own."""
    if given in (None, own):
        return []
    return [
        Diagnostic(
            "EV135",
            f"--prediction-field {given} does not apply to {logs}: the prediction is read from {where}",
            path=path,
            hint="leave --prediction-field out",
        )
    ]


HARNESS_FORMATS: tuple[ReleaseFormat, ...] = (LmEvalSamples(), InspectSamples())
