"""The code an exported task runs without jbcompile: a copy of jbcompile's own functions.

:func:`runtime_source` writes one Python module's text: the design's metric counters and formulas
(``count``, ``formulas``, with :func:`jbcompile.evaluate.bootstrap.ratio`), the row helpers of its
:class:`~jbcompile.export.HarnessExport`, its prompt templates, and the harness's glue (``glue/*.py.in``,
which calls those names). Copying the functions, rather than rewriting them, is what makes a harness's
numbers equal ``jbcompile score``'s; the export tests check that they do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import __version__, reading
from ..evaluate.bootstrap import ratio
from . import ExportConfig

GLUE = Path(__file__).resolve().parent / "glue"

HEADER = '''"""{title}

Written by `jbcompile export` (jbcompile {version}) from {dataset} v{dataset_version}; export again
rather than edit. The metric functions below are copied from jbcompile's source, so the numbers equal
those of `jbcompile score` on the same answers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
import numpy as np

Counts = Mapping[str, Any]
'''


def _source(function: Callable[..., Any]) -> str:
    return inspect.getsource(function).rstrip() + "\n"


def prompt_sources(kind: str) -> dict[str, str]:
    """The design's prompt templates, by the names its templates extend (``<kind>/<file>.j2``)."""
    from ..designs import get_design

    folder = get_design(kind).prompts_dir
    return {f"{kind}/{p.name}": reading.read_text(p, reading.PROMPT) for p in sorted(folder.glob("*.j2"))}


def runtime_source(
    title: str,
    dataset: str,
    dataset_version: str,
    config: ExportConfig,
    glue: str,
    constants: Mapping[str, Any],
) -> str:
    """The text of one exported module: header, constants, copied functions, then the glue file."""
    export = config.export
    values: dict[str, Any] = {
        "KIND": config.kind,
        "TASK": export.task,
        "COUNT_NAMES": export.count_names,
        "METRICS": export.metrics,
        "OPTION_LABELS": export.option_labels,
        "PROMPTS": prompt_sources(config.kind),
        **constants,
    }
    parts = [
        HEADER.format(title=title, version=__version__, dataset=dataset, dataset_version=dataset_version)
    ]
    parts.append("".join(f"{name} = {value!r}\n" for name, value in values.items()))
    for function in (ratio, export.count, export.formulas, *export.helpers):
        parts.append(_source(function))
    parts.append(reading.read_text(GLUE / "common.py.in", reading.PROMPT))
    parts.append(reading.read_text(GLUE / glue, reading.PROMPT))
    return "\n\n".join(part.strip("\n") + "\n" for part in parts)
