"""vLLM's offline engine (``vllm.LLM``): the same token ids as the transformers backend, run by vLLM.

Prefix caching is on (``--no-prefix-cache`` turns it off): the instruction and shots every prompt of a
category shares are computed once. ``--tensor-parallel-size``, ``--pipeline-parallel-size`` and
``--data-parallel-size`` go to vLLM as they are, so a 70B model runs on a multi-GPU node and larger
set-ups use vLLM's own multi-node support (a Ray cluster; see docs/eval.md). ``logprob`` scoring asks
vLLM for the option labels' log-probabilities of the first generated token (``logprob_token_ids``), from
the one model load. The prompts are tokenized here with the model's own tokenizer, exactly as the
transformers backend does, and given to vLLM as token ids.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, cast

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ...services import VLLM
from .base import BackendConfig, LocalTokens, Reply, library_version, load_error
from .options import Options, flag
from .registry import options_for

# vLLM schedules its own batches; the runner hands it this many prompts at a time, so that replies reach
# the predictions log now and then while vLLM still sees enough prompts to fill its batches.
PROMPTS_PER_CALL = 256


KV_CACHE_SETTING = "VLLM_CPU_KVCACHE_SPACE"  # GiB of memory vLLM's CPU build keeps for the KV cache


def _no_usage() -> dict[str, int]:
    return {"requests": 0, "input_tokens": 0, "output_tokens": 0}


class VllmOptions(Options):
    """Passed through to vLLM's engine as they are."""

    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    engine_args: tuple[tuple[str, Any], ...] = flag("--vllm-arg", default=())  # any other vllm.LLM argument

    def checks(self) -> list[tuple[bool, str]]:
        sizes = (self.tensor_parallel_size, self.pipeline_parallel_size, self.data_parallel_size)
        return [
            *super().checks(),
            (
                min(sizes) >= 1,
                "--tensor-parallel-size, --pipeline-parallel-size and --data-parallel-size must be 1 or more",
            ),
        ]


class VllmBackend(LocalTokens):
    name = "vllm"
    service = VLLM  # what the runner names when the library fails (jbcompile.services)
    Options = VllmOptions

    def __init__(self, config: BackendConfig):
        self.config = config
        self.options = options = options_for(VllmBackend, config)
        self.batch_size = max(config.batch_size, PROMPTS_PER_CALL)
        single = (
            options.tensor_parallel_size * options.pipeline_parallel_size * options.data_parallel_size == 1
        )
        if single:
            # one device: run the engine in this process (no spawned engine process to start or clean up)
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        vllm = optional_import("vllm", "vllm", "the vllm backend")  # it brings torch and transformers
        self.dtype = self.describe_idle(config)[0]
        try:
            self.tokenizer = self.load_tokenizer(config)
            _refuse_unsupported_head_size(config)
            extra: dict[str, Any] = dict(options.engine_args)
            if options.data_parallel_size > 1:
                extra["data_parallel_size"] = options.data_parallel_size
            self.llm: Any = vllm.LLM(
                model=config.model,
                revision=config.revision,
                dtype=cast(Any, self.dtype),  # the user's --dtype, which vLLM checks against its Literal
                trust_remote_code=config.trust_remote_code,
                enable_prefix_caching=config.prefix_cache,
                tensor_parallel_size=options.tensor_parallel_size,
                pipeline_parallel_size=options.pipeline_parallel_size,
                seed=0 if config.sampling.seed is None else config.sampling.seed,
                **extra,
            )
        except DiagnosticError:
            raise
        except Exception as error:  # noqa: BLE001 - engine start-up fails in many ways: "cannot load this"
            raise engine_error(config.model, error) or load_error(config.model, error) from None
        self.usage = _no_usage()

    def _run(self, sequences: Sequence[Sequence[int]], params: Any) -> list[Any]:
        TokensPrompt = optional_import("vllm.inputs", "vllm").TokensPrompt

        assert self.llm is not None, "the engine was closed"
        prompts = [TokensPrompt(prompt_token_ids=list(ids)) for ids in sequences]
        try:
            outputs = self.llm.generate(prompts, params, use_tqdm=False)
        except RuntimeError as error:  # a kernel refusing the model shows only once the first batch runs
            raise engine_error(self.config.model, error) or error from None
        self.usage["requests"] += len(outputs)
        self.usage["input_tokens"] += sum(len(ids) for ids in sequences)
        self.usage["output_tokens"] += sum(len(out.outputs[0].token_ids) for out in outputs)
        return [out.outputs[0] for out in outputs]

    def score(self, sequences, keys, label_ids) -> list[list[float]]:
        """The labels' log-probabilities as the first token after each prompt (vLLM's raw log-probs)."""
        SamplingParams = optional_import("vllm", "vllm").SamplingParams

        params = SamplingParams(temperature=0.0, max_tokens=1, logprob_token_ids=list(label_ids))
        scores = []
        for output in self._run(sequences, params):
            first = output.logprobs[0]
            scores.append([float(first[token].logprob) for token in label_ids])
        return scores

    def generate(
        self,
        sequences,
        keys,
        max_new_tokens: int,
        stop_strings: Sequence[str] = (),
        answer_is_final: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Continuations decoded without special tokens; a stop string is kept, as transformers keeps it.

        vLLM has no per-token hook, so a row runs to its limit, a stop string or the end token rather
        than stopping once its answer line is complete; the parsed answers are the same.
        """
        SamplingParams = optional_import("vllm", "vllm").SamplingParams

        sampling = self.config.sampling
        params = SamplingParams(
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            seed=sampling.seed,
            max_tokens=max_new_tokens,
            stop=list(stop_strings) or None,
            include_stop_str_in_output=True,
            skip_special_tokens=True,
        )
        return [
            Reply(output.text, at_limit=getattr(output, "finish_reason", None) == "length")
            for output in self._run(sequences, params)
        ]

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        torch = optional_import("torch", "vllm", "the vllm backend")

        options = options_for(cls, config)
        # "auto" means what the transformers backend picks: float32 on CPU, so the two agree there
        dtype = config.dtype if config.dtype != "auto" or torch.cuda.is_available() else "float32"
        return dtype, {
            "name": cls.name,
            "server_model": config.model,
            "server_version": None,
            "version": library_version("vllm") or library_version("vllm-cpu"),
            "sampling": asdict(config.sampling),
            "parallel": {
                "tensor": options.tensor_parallel_size,
                "pipeline": options.pipeline_parallel_size,
                "data": options.data_parallel_size,
            },
            "prefix_caching": config.prefix_cache,
            "engine_args": dict(options.engine_args),
            "usage": _no_usage(),
        }

    def describe(self) -> dict[str, Any]:
        return {**self.describe_idle(self.config)[1], "usage": dict(self.usage)}

    def close(self) -> None:
        """Free the engine (and its memory) before the run's report is written."""
        import gc

        self.llm = None
        gc.collect()


def _head_size(config: BackendConfig) -> int | None:
    """The model's attention head dimension, from its configuration (None when it does not say)."""
    transformers = optional_import("transformers", "vllm")
    model_config = transformers.AutoConfig.from_pretrained(
        config.model, revision=config.revision, trust_remote_code=config.trust_remote_code
    )
    text = model_config.get_text_config() if hasattr(model_config, "get_text_config") else model_config
    size = getattr(text, "head_dim", None)
    hidden, heads = getattr(text, "hidden_size", None), getattr(text, "num_attention_heads", None)
    if size is None and isinstance(hidden, int) and isinstance(heads, int) and heads:
        size = hidden // heads
    return size if isinstance(size, int) else None


def _refuse_unsupported_head_size(config: BackendConfig) -> None:
    """On vLLM's CPU build, refuse a head dimension its attention kernels lack before the engine starts
    (vLLM itself only fails once the first batch runs, with a bare RuntimeError)."""
    try:
        platform = optional_import("vllm.platforms", "vllm").current_platform
        if not platform.is_cpu():
            return
        attention = optional_import("vllm.v1.attention.backends.cpu_attn", "vllm").CPUAttentionBackend
        supported = list(attention.get_supported_head_sizes())
    except (DiagnosticError, AttributeError):  # another vLLM layout: its own error stays the fallback
        return
    size = _head_size(config)
    if size is not None and size not in supported:
        raise DiagnosticError([unsupported_head_size(config.model, size, supported)])


def unsupported_head_size(model: str, size: int | None, supported: Sequence[int] = ()) -> Diagnostic:
    listed = f" (it has kernels for {', '.join(map(str, supported))})" if supported else ""
    which = f"head dimension {size}" if size is not None else "head dimension"
    return Diagnostic(
        "EV311",
        f"vLLM's CPU attention does not support the {which} of model {model!r}{listed}",
        hint="run this model with --backend transformers, or with vLLM on a GPU",
    )


def engine_error(model: str, error: BaseException) -> DiagnosticError | None:
    """vLLM's known failures said with their real cause and the setting that fixes them (None for any
    other failure, which stays the generic "cannot load model")."""
    text = str(error)
    head = re.search(r"Unsupported CPU attention configuration: head_dim=(\d+)", text)
    if head:
        return DiagnosticError([unsupported_head_size(model, int(head.group(1)))])
    if "on kv cache allocation is less than requested memory for kv" in text:
        available = re.search(r"Available memory on node \d+ \(([\d.]+)/", text)
        requested = re.search(r"requested memory for kv \(([\d.]+)", text)
        amounts = (
            f": {requested.group(1)} GiB asked for, {available.group(1)} GiB available"
            if available and requested
            else ""
        )
        given = os.environ.get(KV_CACHE_SETTING)
        setting = (
            f"{KV_CACHE_SETTING}={given}" if given else f"{KV_CACHE_SETTING} (not set: a share of memory)"
        )
        return DiagnosticError(
            [
                Diagnostic(
                    "EV312",
                    f"vLLM cannot reserve its KV cache for model {model!r} under {setting}{amounts}",
                    hint=f"set {KV_CACHE_SETTING} to the GiB this machine can spare (e.g. "
                    f"{KV_CACHE_SETTING}=4), or free memory",
                )
            ]
        )
    if "KV cache is needed, which is larger than the available KV cache memory" in text or (
        "No available memory for the cache blocks" in text
    ):
        longest = re.search(r"estimated maximum model length is (\d+)", text)
        shorter = f"--vllm-arg max_model_len={longest.group(1)}" if longest else "--vllm-arg max_model_len=N"
        return DiagnosticError(
            [
                Diagnostic(
                    "EV312",
                    f"vLLM's KV cache is too small for model {model!r} at its full context length",
                    hint=f"on a CPU raise {KV_CACHE_SETTING} (GiB), on a GPU --vllm-arg "
                    f"gpu_memory_utilization=0.95; or shorten the context: {shorter}",
                )
            ]
        )
    return None
