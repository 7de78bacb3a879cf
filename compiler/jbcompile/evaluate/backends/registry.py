"""The backends by name: ``--backend NAME`` → ``"module:Class"``, imported only when chosen (a backend's
libraries — torch, vllm, a provider's client — load with it). A new backend is one module and one line
here; its class names its options model (``Options``), so nothing else learns which options it takes.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pydantic import ValidationError

from ...diagnostics import Diagnostic, DiagnosticError
from .base import Backend, BackendConfig, load_error
from .options import BackendOptions

BACKENDS: dict[str, str] = {
    "transformers": "jbcompile.evaluate.backends.transformers:TransformersBackend",
    "vllm": "jbcompile.evaluate.backends.vllm:VllmBackend",
    "openai": "jbcompile.evaluate.backends.openai:OpenAIBackend",
    "anthropic": "jbcompile.evaluate.backends.anthropic:AnthropicBackend",
}


def unknown_backend(name: str) -> Diagnostic:
    return Diagnostic("EV300", f"unknown --backend {name!r}", hint=f"use {', '.join(BACKENDS)}")


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


RANGES = "`jbcompile eval --help` gives each option's range"


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
            hint=f"add --backend {owners[0]}, or leave {_names(flags)} out"
            if owners
            else f"leave {_names(flags)} out",
        )
        for owners, flags in takers.items()
    ]
    taken = {option: value for option, value in given.given.items() if option in model.model_fields}
    try:
        options = model.model_validate({"sampling": given.sampling, **taken})
    except ValidationError as error:  # a library caller's value of the wrong type
        first = error.errors()[0]
        flag = model.flag_of(str(first["loc"][0])) if first["loc"] else f"--backend {name}"
        return [
            *problems,
            Diagnostic("EV308", f"{flag}: {first['msg']}", hint=f"give {flag} a value of its type"),
        ]
    return (
        problems
        + [Diagnostic("EV308", message, hint=RANGES) for message in options.problems()]
        + [Diagnostic("EV308", message, hint=hint) for message, hint in options.refusals()]
    )


def options_for(backend: type[Any], config: BackendConfig) -> Any:
    """``config``'s options as ``backend`` takes them (its ``Options``); an option it does not take, or
    a value out of range, is refused (EV308) as ``jbcompile eval`` refuses it."""
    problems = check_options(backend.name, config.options)
    if problems:
        raise DiagnosticError(problems)
    return backend.Options.from_given(config.options)


class LazyBackend:
    """A run's backend, built the first time the run needs the model — the one place where it is built.

    A resume whose every row is already in the predictions log needs no model: its prompts are hashed
    from their text (with the tokenizer alone, for a chat template), and ``dtype`` and ``describe`` are
    what the backend says before it runs anything. Such a run writes its results without reading a
    checkpoint or starting an engine; any other use (``encode``, ``score``, ``generate``, ``batch_size``,
    ``label_token_ids``) builds the backend first.
    """

    def __init__(self, name: str, config: BackendConfig):
        self.name = name
        self.config = config
        self._backend: Backend | None = None
        self._tokenizer: Any = None

    @property
    def built(self) -> bool:
        return self._backend is not None

    def build(self) -> Backend:
        if self._backend is None:
            self._backend = create_backend(self.name, self.config)
        return self._backend

    @property
    def tokenizer(self) -> Any:
        if self._backend is not None:
            return self._backend.tokenizer
        if self._tokenizer is None:
            try:
                self._tokenizer = backend_class(self.name).load_tokenizer(self.config)
            except DiagnosticError:
                raise
            except Exception as error:  # noqa: BLE001 - as the backend itself reports a failed load
                raise load_error(self.config.model, error) from None
        return self._tokenizer

    @property
    def dtype(self) -> str | None:
        if self._backend is not None:
            return self._backend.dtype
        return backend_class(self.name).describe_idle(self.config)[0]

    def describe(self) -> dict[str, Any]:
        if self._backend is not None:
            return self._backend.describe()
        return backend_class(self.name).describe_idle(self.config)[1]

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def __getattr__(self, name: str) -> Any:  # only called for what this class does not define
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.build(), name)
