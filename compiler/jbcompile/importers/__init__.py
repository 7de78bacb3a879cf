"""Importers: released benchmark data in foreign formats brought in as editable sources.

The importers themselves live in their design's package (``designs/<name>/``) and register through the
design's ``importers()``; this package holds the one interface they implement and what they share:

- ``interface``: :class:`Importer` (its command line as data, ``read``, ``verify_round_trip``);
- ``registry``: :func:`all_importers`, every design's importers, which the CLI builds ``jbcompile
  import <name>`` from;
- ``run``: the steps every import takes (refuse a bad --out or input, read, write atomically, round trip);
- ``draft``: the :class:`~.draft.SourcesDraft` an importer fills; ``writer`` writes it as a sources
  folder;
- ``report``: the :class:`~.report.ImportReport` of what came in and what did not, and why;
- ``releases``: a release's JSON Lines rows, read by the tool's one reader (:mod:`jbcompile.jsonl`);
- ``align``: the spans that vary across the filled texts of one template (its lexical slots).
"""

from __future__ import annotations

from .interface import Imported, Importer, Input, Option, ProgressBar, Tick, no_progress
from .registry import all_importers

__all__ = [
    "Importer",
    "Imported",
    "Input",
    "Option",
    "ProgressBar",
    "Tick",
    "all_importers",
    "no_progress",
]
