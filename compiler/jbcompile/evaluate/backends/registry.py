"""The backends by name: ``--backend NAME`` → ``"module:Class"``, imported only when chosen (a backend's
libraries — torch, vllm, a provider's client — load with it). A new backend is one module and one line
here; its class names its options model (``Options``), so nothing else learns which options it takes.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ...diagnostics import Diagnostic, DiagnosticError
from .options import BackendOptions

if TYPE_CHECKING:
    from .base import Backend, BackendConfig

BACKENDS: dict[str, str] = {
    "transformers": "jbcompile.evaluate.backends.transformers:TransformersBackend",
    "vllm": "jbcompile.evaluate.backends.vllm:VllmBackend",
    "openai": "jbcompile.evaluate.backends.openai:OpenAIBackend",
    "anthropic": "jbcompile.evaluate.backends.anthropic:AnthropicBackend",
}


def unknown_backend(name: str) -> Diagnostic:
    return Diagnostic("EV300", f"unknown --backend {name!r}; use {', '.join(BACKENDS)}")


def backend_class(name: str) -> type[Backend]:
    """The class of the backend called ``name`` (EV300 for a name no backend has)."""
    if name not in BACKENDS:
        raise DiagnosticError([unknown_backend(name)])
    module, _, attribute = BACKENDS[name].partition(":")
    return getattr(import_module(module), attribute)


def create_backend(name: str, config: BackendConfig) -> Backend:
    """The backend called ``name``, loaded (a model read, an engine started or a client made)."""
    return backend_class(name)(config)  # type: ignore[call-arg]


def _names(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def check_options(name: str, given: BackendOptions) -> list[Diagnostic]:
    """Every problem with the options given to backend ``name``, before anything is loaded: options it
    does not take (each said with the backends that do take it), then values out of their range."""
    if name not in BACKENDS:
        return [unknown_backend(name)]
    model = backend_class(name).Options
    takers: dict[tuple[str, ...], list[str]] = {}
    for option in given.given:
        if option not in model.model_fields:
            owners = tuple(n for n in BACKENDS if option in backend_class(n).Options.model_fields)
            flag = next((backend_class(n).Options.flag_of(option) for n in owners), repr(option))
            takers.setdefault(owners, []).append(flag)
    problems = [
        Diagnostic(
            "EV308",
            f"{_names(flags)} {'are' if len(flags) > 1 else 'is'} for the {_names(list(owners))} backend"
            + ("s" if len(owners) > 1 else "")
            if owners
            else f"no backend takes {_names(flags)}",
        )
        for owners, flags in takers.items()
    ]
    taken = {option: value for option, value in given.given.items() if option in model.model_fields}
    try:
        options = model.model_validate({"sampling": given.sampling, **taken})
    except ValidationError as error:  # a library caller's value of the wrong type
        first = error.errors()[0]
        flag = model.flag_of(str(first["loc"][0])) if first["loc"] else f"--backend {name}"
        return [*problems, Diagnostic("EV308", f"{flag}: {first['msg']}")]
    return problems + [Diagnostic("EV308", message) for message in options.problems()]
