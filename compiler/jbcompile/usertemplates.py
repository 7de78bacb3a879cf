"""The Jinja environment of templates a user hands the tool: dataset card templates and prompt files.

Such a template may come from someone else (a benchmark repository's ``cards/``, a prompt file shared
with a paper), so it renders in Jinja's sandbox: it reaches the variables it is given and nothing of
Python's internals (no environment variable, file or process: ``lipsum.__globals__`` is refused), it
cannot change what it is given, its ranges are bounded (Jinja's ``MAX_RANGE``), and what it renders is
bounded (``limit`` characters, a repeated string included): a template that would fill the memory stops
with an error instead.
"""

from __future__ import annotations

from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

MAX_POWER = 10_000  # the largest exponent ``**`` takes (a huge power is a long computation, not a value)


class _Bounded(ImmutableSandboxedEnvironment):
    """The sandbox, with ``*`` and ``**`` held to what ``output_limit`` can show."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, output_limit: int, **options: Any) -> None:
        super().__init__(**options)
        self.output_limit = output_limit

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for sized, times in ((left, right), (right, left)):
                repeated = isinstance(sized, str | list | tuple) and isinstance(times, int)
                if repeated and len(sized) * times > self.output_limit:
                    raise SecurityError(f"a repeated text beyond {self.output_limit:,} characters")
        elif isinstance(right, int | float) and abs(right) > MAX_POWER:
            raise SecurityError(f"an exponent beyond {MAX_POWER:,}")
        return super().call_binop(context, operator, left, right)


def user_environment(loader: jinja2.BaseLoader, output_limit: int) -> jinja2.Environment:
    """The sandboxed environment of a user's templates; :func:`render` renders its templates."""
    return _Bounded(
        output_limit,
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template: jinja2.Template, **variables: Any) -> str:
    """``template`` rendered, stopped with a :class:`SecurityError` beyond its environment's
    ``output_limit`` characters (before the text is held: it is built piece by piece)."""
    limit = getattr(template.environment, "output_limit", None)
    pieces: list[str] = []
    size = 0
    for piece in template.generate(**variables):
        size += len(piece)
        if limit is not None and size > limit:
            raise SecurityError(f"the template renders more than {limit:,} characters")
        pieces.append(piece)
    return "".join(pieces)
