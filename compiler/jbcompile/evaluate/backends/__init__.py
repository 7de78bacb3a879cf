"""Backends: one module per way of running a model, behind the one interface of ``base.Backend``.

``transformers`` (in-process, prefix-shared batches), ``vllm`` (vLLM's offline engine), ``openai`` (any
OpenAI-compatible server), ``anthropic`` (the Messages API), found by name in ``registry``. The two remote
ones share ``remote``: the requests in flight, retries, the request cache and the usage count live there
once. Each backend names the options it takes (``options``: its own model, checked before a run).
"""

from .base import (
    Backend,
    BackendConfig,
    Reply,
    as_reply,
    common_prefix_length,
    final_answer_test,
    plan_batches,
)
from .options import BackendOptions, Options, SamplingConfig
from .registry import BACKENDS, LazyBackend, backend_class, check_options, create_backend
from .transformers import TransformersBackend

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendConfig",
    "BackendOptions",
    "LazyBackend",
    "Options",
    "Reply",
    "SamplingConfig",
    "TransformersBackend",
    "as_reply",
    "backend_class",
    "check_options",
    "common_prefix_length",
    "create_backend",
    "final_answer_test",
    "plan_batches",
]
