"""``results.json``: the typed model of the file ``eval`` and ``score`` write and ``score``, ``compare``,
``report`` and the CLI read (its JSON Schema is published as ``docs/schemas/results.schema.json``).

The envelope — what was run, on what, how — is typed; metrics stay dicts of named numbers, as each
design names its own (docs/eval.md, "Metrics"). One model writes and reads: a file is written as
``Results.to_json()``, which leaves out what a run did not set (``score`` has no ``model``, ``eval`` of
our own rows no ``ambiguous_rows``), so the same run gives the same bytes; the order of the fields below
is the order in the file. Reading is lenient, as readers always were: older files (``schema_version`` 1)
and partial ones (a run written by another tool) are read with what they hold, unknown fields kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..diagnostics import Diagnostic, Severity
from ..text import shown_name

SCHEMA_VERSION = 2  # 2: metric conventions named apart (docs/eval.md, "Schema versions")
CONFIDENCE = 0.95

Number = int | float  # int first: a count stays a whole number
MetricValue = Number | list[Number | None] | None  # a number, a list of shares, or undefined (null)
Interval = list[Number] | list[list[Number] | None] | None  # [low, high], one per share, or null


class _Part(BaseModel):
    """A block of results.json: unknown fields are kept (a newer writer's), nothing is coerced away."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)


class ModelInfo(_Part):
    name: str | None = None
    revision: str | None = None
    dtype: str | None = None
    trust_remote_code: bool | None = None


class DatasetInfo(_Part):
    path: str | None = None
    config: str | None = None
    revision: str | None = None
    commit: str | None = None
    manifest: dict[str, Any] | None = None  # the build's manifest.json: version and sources hash
    rows: int | None = None
    evaluated: int | None = None
    limit: int | None = None  # --limit N: the first N rows were evaluated (absent without it)
    sample: int | None = None  # --sample N: a stratified sample of N rows (absent without it)
    format: str | None = None  # a release's own format (rows read as they are)
    sha256: str | None = (
        None  # the content read (a file's, or a build config's data files'): names it anywhere
    )
    # what the rows were checked against: "manifest" (a build's manifest.json, every data file's sha256),
    # "commit" (a Hub commit), "unverified" (a folder without a jbcompile manifest, a release file, the Hub
    # offline); absent in files written before 0.3.1
    verification: str | None = None


class PromptInfo(_Part):
    setting: str | None = None
    template: str | None = None
    template_sha256: str | None = None
    prompt_file: str | None = None
    chat: bool | None = None
    shots: int | None = None
    shot_ids: list[str] | None = None
    shot_notes: list[str] | None = None  # where the shots could not be drawn as the kind's rule says


class ScoringInfo(_Part):
    method: str | None = None  # logprob | generate
    max_new_tokens: int | None = None
    stop_strings: list[str] | None = None
    stop_at_answer_line: bool | None = None
    answer_pattern: str | None = None  # --answer-pattern: a reply is read after its last match
    answer_pattern_matched: int | None = None  # …how many of the run's replies it matched
    # a two-turn setting's first turns (an explanation, then the answer): their own limit and stop strings
    first_turn_max_new_tokens: int | None = None
    first_turn_stop_strings: list[str] | None = None


class SourceInfo(_Part):
    """What ``score`` read: the predictions file and, when joined, the dataset."""

    predictions: str | None = None
    # the predictions file's content: a score of a run's own predictions.jsonl is known by it (compare)
    predictions_sha256: str | None = None
    model: str | None = None  # score --model: the model that wrote the predictions, as reports name it
    format: str | None = None  # jbcompile, a release or harness format, or a design's own rows
    prediction_field: str | None = None
    setting: str | None = None  # score --setting: the prompt setting whose replies were read
    answer_pattern: str | None = None  # score --answer-pattern: replies read after its last match
    dataset: str | None = None
    config: str | None = None
    revision: str | None = None
    commit: str | None = None
    dataset_sha256: str | None = None  # the --dataset content joined (as DatasetInfo.sha256)
    verification: str | None = None  # …and what it was checked against (as DatasetInfo.verification)


class Sampling(_Part):
    temperature: Number | None = None
    top_p: Number | None = None
    seed: int | None = None


class Usage(_Part):
    """What the backend did in this invocation (a backend counts what it can)."""

    requests: int | None = None
    retries: int | None = None
    replies: int | None = None
    cached: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class BackendInfo(_Part):
    """How the model was run, as the backend describes itself (``Backend.describe``); a backend sets
    the fields that concern it."""

    name: str | None = None
    base_url: str | None = None  # remote backends, without credentials
    server_model: str | None = None
    server_version: str | None = None
    version: str | None = None  # of the library that ran the model
    sampling: Sampling | None = None
    concurrency: int | None = None  # remote backends
    parallel: dict[str, int] | None = None  # vllm
    prefix_caching: bool | None = None  # vllm
    engine_args: dict[str, Any] | None = None  # vllm
    usage: Usage | None = None


class Seeds(_Part):
    shots: int | None = None
    bootstrap: int | None = None


class ProtocolInfo(_Part):
    """A paper's protocol (``--protocol``), as :meth:`.protocols.Protocol.describe` records it."""

    name: str
    paper: str | None = None
    scoring: str | None = None
    shots: list[int] | None = None
    settings: list[str] | None = None
    ooc: str | None = None
    max_new_tokens: str | None = None
    reading: str | None = None  # how the paper read a reply
    headline: list[str] = []  # the metrics of the paper's tables, in their column order
    # whose wording the prompts had: jbcompile | prompt-file (named in prompt_file) | release | harness |
    # unknown (protocols.PROMPT_WORDINGS); a file written before the last three says jbcompile
    prompt_wording: str | None = None
    prompt_file: str | None = None
    note: str | None = None


class BootstrapInfo(_Part):
    resamples: int | None = None
    unit: str | None = None
    confidence: float | None = None
    seed: int | None = None


class AmbiguousRow(_Part):
    """A row whose stereotyped option could not be derived (it counts for accuracy, not for bias)."""

    example_id: str | int | None = None
    line: int | None = None
    problem: str | None = None


class RunWarning(_Part):
    """A warning that changes how a run's figures are read (EV054: most replies cut at the token limit;
    EV055: a model that reasoned, run as one that answers at once; EV056: most rows with no option label
    among a server's top log-probabilities): said on the terminal, and kept with the figures so that
    results.json, report.md and a comparison of the run say it too."""

    code: str = Field(pattern=r"^EV\d{3}$")  # a code of the evaluator's (shown as it is in reports)
    message: str
    hint: str | None = None

    @classmethod
    def of(cls, warning: Diagnostic) -> RunWarning:
        """A warning as results.json keeps it: its code, message and hint (a run's warnings name no file)."""
        return cls(code=warning.code, message=warning.message, hint=warning.hint)

    def said(self) -> Diagnostic:
        """The warning read back, said on one line (a line break in it cannot forge another)."""
        hint = shown_name(self.hint) if self.hint else self.hint
        return Diagnostic(self.code, shown_name(self.message), severity=Severity.WARNING, hint=hint)


class Metrics(_Part):
    """Point estimates: ``overall`` and ``by_category``, each a dict of the design's named metrics."""

    overall: dict[str, MetricValue] = {}
    by_category: dict[str, dict[str, MetricValue]] = {}


class Intervals(_Part):
    """95% bootstrap intervals in the shape of :class:`Metrics`."""

    overall: dict[str, Interval] = {}
    by_category: dict[str, dict[str, Interval]] = {}


class SamplesInfo(_Part):
    """``--samples K``: the K runs' folders and seeds, and every metric's mean and sd over them."""

    count: int | None = None
    seeds: list[int | None] | None = None
    runs: list[str] | None = None
    metrics_mean: Metrics | None = None
    metrics_sd: Metrics | None = None


# What every results.json that eval and score write holds (the published schema requires these; the
# model itself reads files without them too).
WRITTEN_ALWAYS = ("schema_version", "kind", "task", "seeds", "versions", "protocol", "bootstrap", "metrics")


def _require_written(schema: dict[str, Any]) -> None:
    schema["required"] = list(WRITTEN_ALWAYS)


class Results(_Part):
    """One run's results.json. ``eval`` sets model … thinking; ``score`` sets source and ambiguous_rows;
    ``--samples`` sets samples (and writes no intervals: ``metrics`` holds the means)."""

    model_config = ConfigDict(
        extra="allow", validate_assignment=True, json_schema_extra=_require_written, title="results.json"
    )

    schema_version: int = SCHEMA_VERSION
    kind: str | None = None
    task: str | None = None
    model: ModelInfo | None = None
    source: SourceInfo | None = None
    dataset: DatasetInfo | None = None
    prompt: PromptInfo | None = None
    scoring: ScoringInfo | None = None
    backend: BackendInfo | None = None
    thinking: bool | None = None
    seeds: Seeds | None = None
    versions: dict[str, str | None] | None = None
    ambiguous_rows: list[AmbiguousRow] | None = None
    warnings: list[RunWarning] | None = None  # set only where the run has one
    protocol: ProtocolInfo | None = None
    bootstrap: BootstrapInfo | None = None
    samples: SamplesInfo | None = None
    metrics: Metrics
    metrics_ci: Intervals | None = None

    @classmethod
    def of(cls, value: Results | Mapping[str, Any]) -> Results:
        """``value`` as the model (results.json's content read as it is, or the model itself)."""
        return value if isinstance(value, Results) else cls.model_validate(value)

    def to_json(self) -> dict[str, Any]:
        """The file's content: every field set, in the model's order, nothing else."""
        return self.model_dump(mode="json", exclude_unset=True)

    @property
    def headline(self) -> list[str] | None:
        """The metrics the protocol's tables head with, or None without a protocol."""
        return list(self.protocol.headline) if self.protocol else None

    @property
    def setting(self) -> str | None:
        """The named prompt setting the run's answers were asked (``eval --setting``) or read as
        (``score --setting``), else None."""
        if self.prompt is not None and self.prompt.setting:
            return self.prompt.setting
        return self.source.setting if self.source is not None else None

    @property
    def model_name(self) -> str | None:
        """The model whose answers these are: the one ``eval`` ran, or the one ``score --model`` named."""
        if self.model is not None:
            return self.model.name
        return self.source.model if self.source is not None else None

    @property
    def is_eval(self) -> bool:
        """Written by ``eval`` (it names a model), not by ``score`` (it names a source)."""
        return self.model is not None


def read_results(path: Path) -> Results:
    """results.json as the model; ``ValueError`` (``ValidationError`` among them) when it is not one,
    DiagnosticError when it is no regular file, too large, or holds a key twice (F001–F003)."""
    from .. import reading
    from ..jsonl import read_json

    return Results.model_validate(read_json(path, reading.RECORD))


def results_problem(error: ValueError) -> str:
    """Why a file is not results.json, in one line."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        return f"results.json does not hold a run's results ({where}: {first['msg']})"
    return f"results.json is not JSON: {error}"


def schema() -> dict[str, Any]:
    """The JSON Schema of the files eval and score write, as published in docs/schemas/results.schema.json
    (``python -m jbcompile.evaluate.results > docs/schemas/results.schema.json`` writes it again)."""
    generated = Results.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **generated}


def schema_text() -> str:
    """The published schema file's text."""
    return json.dumps(schema(), ensure_ascii=False, indent=2) + "\n"


def metrics_block(
    kind: Any,
    records: Sequence[Mapping[str, Any]],
    resamples: int,
    seed: int,
    protocol: str | None = None,
    wording: tuple[str, str | None] = ("jbcompile", None),
) -> dict[str, Any]:
    """The protocol, bootstrap, metrics and metrics_ci fields of a run over ``records`` (``wording``:
    whose prompt wording, and the prompt file's name where it was the user's)."""
    from .protocols import get_protocol

    described = get_protocol(protocol)
    task = str(records[0].get("task") or "qa") if records else "qa"  # a run's records share their task
    return {
        "protocol": described.describe(task, *wording) if described else None,
        "bootstrap": {
            "resamples": resamples,
            "unit": kind.cluster_unit,
            "confidence": CONFIDENCE,
            "seed": seed,
        },
        "metrics": kind.metrics(records),
        "metrics_ci": kind.intervals(records, resamples, seed),
    }


def library_versions(names: Sequence[str]) -> dict[str, str | None]:
    """results.json's ``versions``: Python, jbcompile and the named libraries (None: not installed)."""
    import sys
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    found: dict[str, str | None] = {"python": sys.version.split()[0], "jbcompile": __version__}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


if __name__ == "__main__":
    import sys

    sys.stdout.write(schema_text())
