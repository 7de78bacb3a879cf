"""The reply reader of the exported ``_gen`` tasks: ``jbcompile eval``'s own, called from the harness.

An lm-eval ``generate_until`` task of ``jbcompile export lm-eval`` reads each reply through its filter
``reader.ReadReply`` (written beside the task files), which calls :func:`read_as_eval` of the jbcompile
installed where the harness runs. Copying the reader into the export, as the metric functions are copied,
would copy half of :mod:`jbcompile.evaluate.parsing`; a regex of the export's own read other options than
``eval`` on ordinary replies (``答えは0ではなく2です。``: 0). So the ``_gen`` tasks need jbcompile, and
without it they stop with an ImportError that says so, rather than read replies another way.
"""

from __future__ import annotations

from collections.abc import Sequence


def read_as_eval(kind: str, reply: str, options: Sequence[str], *, task: str, setting: str) -> int | None:
    """The option ``jbcompile eval --scoring generate --setting SETTING`` reads in ``reply`` (None: out of
    choice), by the design's own reader (:meth:`jbcompile.evaluate.kind.EvalKind.read_reply`)."""
    from ..evaluate.kind import EvalOptions
    from ..evaluate.registered import get_eval_kind

    reading = EvalOptions(task=task, setting=setting, scoring="generate")
    return get_eval_kind(kind).read_reply(reply, tuple(options), reading)
