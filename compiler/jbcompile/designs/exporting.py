"""What a design lets another harness run (``jbcompile export``): the type its spec's ``harness_export()``
returns. It lies here, below the designs and the exporter both, so that neither imports the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HarnessExport:
    """What a design lets a harness run, and the functions the exported code copies.

    Every function in ``helpers`` must be self-contained (it may use the standard library, numpy, the
    metric functions and the names ``COUNT_NAMES`` / ``OPTION_LABELS``): its source is copied into the
    exported module. The names the exported glue calls are ``prompt_variables(doc, task)``,
    ``choices_of(doc)``, ``gold_of_doc(doc)``, ``question_of_doc(doc)``, ``record_of(doc, pred)`` (the
    record that ``count`` reads) and ``prepare_records(records)`` (what the design's evaluator does to
    the records of a run before counting, e.g. group them into cases).
    """

    count: Callable[..., Any]  # the design's ``count(record)`` (see jbcompile.evaluate.bootstrap)
    formulas: Callable[..., Any]  # the design's ``formulas(counts)``
    count_names: tuple[str, ...]
    helpers: tuple[Callable[..., Any], ...]
    metrics: tuple[str, ...]  # the metrics a harness reports, each a scalar of ``formulas``
    lower_is_better: frozenset[str]  # bias scores: nearer 0 (or lower) is better
    settings: tuple[str, ...]  # the prompt settings a harness can run (prompts/<setting>.j2)
    task: str  # the evaluator task the harness runs (e.g. ``qa``)
    option_labels: tuple[str, ...]  # what a generated reply names an option by (e.g. "0", "1", "2")
    cannot: str  # one paragraph for the README: what of the design the harnesses cannot express
