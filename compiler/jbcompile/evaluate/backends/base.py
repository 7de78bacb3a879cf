"""The one interface every backend offers the runner: prompts in, replies or option log-probabilities out.

A backend turns prompt texts into whatever it runs (token ids for an in-process model, the prompt or a
list of chat messages for a server), finds what it scores (the option labels' tokens), and then scores
or generates batch by batch. The runner, the kinds and the predictions log never ask which backend runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ...services import Service
from ..prompting import Prompt, as_text
from .options import BackendOptions, Options, SamplingConfig

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def opens_thinking(prompt: object) -> bool:
    """Whether a rendered prompt ends inside a think block, opened by the model's chat template (as
    DeepSeek-R1's ends its generation prompt with ``<think>``): the reply then begins as thinking."""
    text = str(prompt)
    return text.rfind(THINK_OPEN) > text.rfind(THINK_CLOSE)


# The weights' number types --dtype takes (a backend that loads the weights; a served model's is the
# server's): checked for every backend before anything is loaded, so a run never records another.
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class BackendConfig:
    """What a backend is built from; each backend reads only the fields it needs."""

    model: str
    revision: str | None = None
    dtype: str = "auto"  # one of DTYPES
    trust_remote_code: bool = False
    batch_size: int = 8
    prefix_cache: bool = True
    device: str | None = None  # data-parallel: this process's device; None = auto
    options: BackendOptions = field(default_factory=BackendOptions)  # as given; see ``options_for``
    chat: bool = False  # openai: chat completions (True) or plain completions (False)
    request_cache: Path | None = None  # remote: the file of responses keyed by request

    @property
    def sampling(self) -> SamplingConfig:
        return self.options.sampling


class Reply(str):
    """A generated reply: the final answer's text, with the model's reasoning (if any) beside it, and
    whether generation stopped at the token limit (``at_limit``; None where the backend cannot tell): a
    reply cut there may have had its answer still to come."""

    reasoning: str | None
    at_limit: bool | None

    def __new__(cls, text: str, reasoning: str | None = None, at_limit: bool | None = None) -> Reply:
        made = super().__new__(cls, text)
        made.reasoning = reasoning
        made.at_limit = at_limit
        return made


def as_reply(output: str, thinking: bool = False) -> Reply:
    """A reply's final answer apart from its reasoning.

    Reasoning arrives separately (``Reply.reasoning``: a server's ``reasoning_content``, Anthropic's
    thinking blocks) or inline, as ``<think>…</think>`` before the answer. The answer is what follows the
    last ``</think>``. A reply that opened a think block and never closed it, or — for a thinking model
    (``thinking``), whose chat template opens the block itself — one with no ``</think>`` at all, was cut
    off while thinking: its answer is empty (out-of-choice), as a reader would count it.
    """
    reasoning = getattr(output, "reasoning", None)
    at_limit = getattr(output, "at_limit", None)
    text = str(output)
    if THINK_CLOSE in text:
        inline, _, text = text.rpartition(THINK_CLOSE)
        inline = inline.replace(THINK_OPEN, "", 1).strip()
        reasoning = "\n\n".join(part for part in (reasoning, inline) if part)
    elif THINK_OPEN in text.lstrip()[: len(THINK_OPEN)] or (thinking and reasoning is None):
        reasoning = "\n\n".join(part for part in (reasoning, text.replace(THINK_OPEN, "", 1).strip()) if part)
        text = ""
    return Reply(text, reasoning or None, at_limit)


def final_answer_test(
    answer_is_final: Callable[[str], bool] | None, thinking: bool
) -> Callable[[str], bool] | None:
    """A kind's early-stop test applied to the final answer only: never stop while the model thinks."""
    if answer_is_final is None:
        return None

    def final(text: str) -> bool:
        if THINK_CLOSE in text:
            return answer_is_final(text.rpartition(THINK_CLOSE)[2])
        if thinking or text.lstrip().startswith(THINK_OPEN):
            return False
        return answer_is_final(text)

    return final


class Backend(Protocol):
    """What the runner and the kinds call. ``Sequence`` items are whatever ``encode`` returned."""

    name: str
    service: ClassVar[Service]  # the library it runs on, named when that library fails (jbcompile.services)
    Options: ClassVar[type[Options]]  # the options it takes (see :mod:`.options`)
    tokenizer: Any  # offers ``chat_template`` and ``apply_chat_template`` (the kinds wrap chat prompts)
    batch_size: int
    dtype: str | None

    def encode(self, texts: Sequence[Prompt], *, chat: bool) -> list[Sequence[Any]]: ...

    def label_token_ids(self, labels: Sequence[str], sample_prompt: Prompt, *, chat: bool) -> list[Any]: ...

    def score(
        self, sequences: Sequence[Sequence[Any]], keys: Sequence[tuple[str, ...]], label_ids: Sequence[Any]
    ) -> list[list[float]]: ...

    def generate(
        self,
        sequences: Sequence[Sequence[Any]],
        keys: Sequence[tuple[str, ...]],
        max_new_tokens: int,
        stop_strings: Sequence[str] = (),
        answer_is_final: Callable[[str], bool] | None = None,
    ) -> list[str]: ...

    def describe(self) -> dict[str, Any]:
        """What results.json records: backend, server model id and version, usage, settings."""
        ...

    def close(self) -> None: ...

    # Answered from the configuration alone, without loading a model (see ``LazyBackend``):

    @classmethod
    def load_tokenizer(cls, config: BackendConfig) -> Any:
        """The tokenizer the backend would hold (chat templates), without the model."""
        ...

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        """``(dtype, describe())`` of this backend before it has run anything."""
        ...


class LocalTokens:
    """Tokens for a backend that holds the model's own tokenizer (transformers, vllm): both then run
    exactly the same token ids, so their answers can be compared row by row."""

    tokenizer: Any

    @classmethod
    def load_tokenizer(cls, config: BackendConfig) -> Any:
        """The model's own tokenizer (the one both backends encode with)."""
        transformers = optional_import("transformers", "eval")

        return transformers.AutoTokenizer.from_pretrained(
            config.model, revision=config.revision, trust_remote_code=config.trust_remote_code
        )

    def encode(self, texts: Sequence[Prompt], *, chat: bool) -> list[list[int]]:
        """Token ids of whole prompts; a chat-templated text already holds its special tokens (a local
        tokenizer's chat template gives text: every prompt here is a ``str``)."""
        prompts = [as_text(prompt) for prompt in texts]
        return [list(ids) for ids in self.tokenizer(prompts, add_special_tokens=not chat)["input_ids"]]

    def label_token_ids(self, labels: Sequence[str], sample_prompt: Prompt, *, chat: bool) -> list[int]:
        """The first token of each option label as it follows a prompt (one forward pass scores all)."""
        base = self.encode([sample_prompt], chat=chat)[0]
        ids = []
        for label in labels:
            joined = self.encode([as_text(sample_prompt) + label], chat=chat)[0]
            if joined[: len(base)] == base and len(joined) > len(base):
                ids.append(joined[len(base)])
            else:
                ids.append(self.tokenizer(label, add_special_tokens=False)["input_ids"][0])
        if len(set(ids)) != len(ids):
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV051",
                        f"option labels {list(labels)} share their first token in this tokenizer",
                        hint="score with --scoring generate, or use a prompt whose labels differ in their "
                        "first token",
                    )
                ]
            )
        return ids


# What a folder saved with save_pretrained holds: (what it is, the names that give it)
MODEL_FOLDER_PARTS = (
    ("config.json", ("config.json",)),
    (
        "tokenizer files",
        ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json", "vocab.txt"),
    ),
    ("weights", ("*.safetensors", "*.bin", "*.pt", "*.gguf", "*.safetensors.index.json")),
)


def missing_model_parts(folder: Path) -> list[str]:
    """What a local --model folder lacks of a saved model; the loaders' own errors do not say it (an empty
    folder gives "Couldn't instantiate the backend tokenizer from one of: …")."""
    return [
        what
        for what, patterns in MODEL_FOLDER_PARTS
        if not any(next(folder.glob(pattern), None) is not None for pattern in patterns)
    ]


def load_error(model: str, error: BaseException, hint: str | None = None) -> DiagnosticError:
    """A model that cannot be loaded, whatever the backend: one message, one code."""
    reason = (str(error).splitlines() or [type(error).__name__])[0]
    folder = Path(model)
    missing = missing_model_parts(folder) if folder.is_dir() else []
    if missing:
        everything = len(missing) == len(MODEL_FOLDER_PARTS)
        reason = "the folder holds no model" if everything else "the folder holds no complete model"
        reason += f" (no {', no '.join(missing)})"
        hint = (
            "point --model at the folder a model was saved into with save_pretrained (config.json, the "
            "tokenizer's files and the weights, *.safetensors), or give a Hub id"
        )
    return DiagnosticError(
        [
            Diagnostic(
                "EV050",
                f"cannot load model {model!r}: {reason}",
                hint=hint
                or "give a Hub id or a local folder saved with save_pretrained; "
                "--trust-remote-code if the model ships its own code",
            )
        ]
    )


def plan_batches(lengths: Sequence[int], keys: Sequence[tuple[str, ...]], batch_size: int) -> list[list[int]]:
    """Deterministic, full batches of prompt indices: groups kept contiguous, longest batches first.

    Groups (same keys) are ordered by their outermost key, then by length, and laid end to end; the line
    is cut every ``batch_size`` prompts. So a batch's prompts are of similar length and share their outer
    prefix, a group is split only at a batch boundary (its shared prefix is then run once per part), and
    every batch but the last is full: on small models the number of forward passes is what costs.
    The longest batch runs first, so memory trouble shows at once; the others keep the line's order, so
    a category's batches follow one another and its instruction and shots are computed once.
    """
    size = max(1, batch_size)
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, key in enumerate(keys):
        groups.setdefault(tuple(key), []).append(index)
    ordered = sorted(
        groups.items(), key=lambda kv: (kv[0][:1], -max(lengths[i] for i in kv[1]), kv[0], kv[1][0])
    )
    line = [index for _, members in ordered for index in members]
    batches = [line[start : start + size] for start in range(0, len(line), size)]
    if batches:
        longest = min(range(len(batches)), key=lambda b: (-max(lengths[i] for i in batches[b]), b))
        batches.insert(0, batches.pop(longest))
    return batches


def common_prefix_length(sequences: Sequence[Sequence[int]], start: int, limit: int) -> int:
    """Common prefix length of ``sequences``: at least ``start`` (already shared), at most ``limit``.

    The prefix all share is the one the lexicographically first and last share, so only those two are
    walked token by token (``os.path.commonprefix`` does that for any sequences)."""
    if limit <= start:
        return start
    shared = os.path.commonprefix([list(seq[start:limit]) for seq in sequences])
    return start + len(shared)


def library_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None
