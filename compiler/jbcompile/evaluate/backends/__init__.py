"""Backends: one module per way of running a model, behind the one interface of ``base.Backend``.

``transformers`` (in-process, prefix-shared batches), ``vllm`` (vLLM's offline engine), ``openai`` (any
OpenAI-compatible server), ``anthropic`` (the Messages API). The two remote ones share ``remote``: the
requests in flight, retries, the request cache and the usage count live there once.
"""

from .base import (
    BACKENDS,
    Backend,
    BackendConfig,
    BackendOptions,
    LazyBackend,
    Reply,
    SamplingConfig,
    as_reply,
    common_prefix_length,
    create_backend,
    final_answer_test,
    plan_batches,
)
from .transformers import TransformersBackend

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendConfig",
    "BackendOptions",
    "LazyBackend",
    "Reply",
    "SamplingConfig",
    "TransformersBackend",
    "as_reply",
    "common_prefix_length",
    "create_backend",
    "final_answer_test",
    "plan_batches",
]
