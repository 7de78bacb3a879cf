"""The options a run gives its backend, and each backend's own, checked model of the ones it takes.

``BackendOptions`` is what the user gave (``jbcompile eval``'s backend flags, or a library caller's
keywords), by name: sampling, which every backend takes, and whatever else was given. A backend class
names its options model (``Backend.Options``, a subclass of :class:`Options`): the options it takes,
their defaults and their ranges. An option given to a backend whose model lacks it is refused — never
recorded as if it had been used — by :func:`.registry.check_options`, which says which backends take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class SamplingConfig:
    """Decoding settings; the default (temperature 0) is greedy decoding."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


class BackendOptions(BaseModel):
    """The backend options of a run as given, by name (``BackendOptions(base_url=…, concurrency=4)``);
    which backend takes which is each backend's to say (its ``Options``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    sampling: SamplingConfig = SamplingConfig()

    @property
    def given(self) -> dict[str, Any]:
        """Every option given besides sampling."""
        return dict(self.model_extra or {})


def flag(name: str, **field: Any) -> Any:
    """A field of an options model that ``jbcompile eval`` sets with the flag ``name``."""
    return Field(json_schema_extra={"flag": name}, **field)


class Options(BaseModel):
    """A backend's options: the base takes sampling alone; a backend's subclass adds its own, and
    ``problems`` says which values are out of range (each as the flag's message)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sampling: SamplingConfig = SamplingConfig()

    @classmethod
    def flag_of(cls, name: str) -> str:
        """The ``jbcompile eval`` flag that sets option ``name`` (``--vllm-arg`` for engine_args)."""
        extra = cls.model_fields[name].json_schema_extra if name in cls.model_fields else None
        found = extra.get("flag") if isinstance(extra, Mapping) else None
        return str(found) if found else "--" + name.replace("_", "-")

    @classmethod
    def from_given(cls, given: BackendOptions) -> Options:
        """The options as this backend takes them (``ValueError`` for one it does not take: the caller
        checks with :func:`.registry.check_options` first)."""
        return cls.model_validate({"sampling": given.sampling, **given.given})

    def checks(self) -> list[tuple[bool, str]]:
        """Each range check as (passes, the message naming the flag); a subclass adds its own."""
        return [
            (self.sampling.temperature >= 0, "--temperature must be 0 or more"),
            (0 < self.sampling.top_p <= 1, "--top-p must be more than 0 and at most 1"),
        ]

    def problems(self) -> list[str]:
        """The messages of the checks that fail."""
        return [message for ok, message in self.checks() if not ok]

    def refusals(self) -> list[tuple[str, str]]:
        """Values refused for what they hold rather than for their range, each as (message, hint)."""
        return []

    def own_decoding(self) -> str | None:
        """Why the backend will not decode as ``sampling`` and the generation limit say (an option that
        hands decoding to the service), or None: a protocol whose paper fixes them refuses such a run."""
        return None
