"""Any server that speaks the OpenAI API: the hosted API, ``vllm serve``, SGLang, TGI, llama.cpp's server,
Ollama, ``transformers serve``.

``--chat`` sends chat completions (the server applies the model's chat template), otherwise plain
completions (base models). ``--scoring logprob`` asks for one token with its ``top_logprobs`` and reads
the option labels among them; a server that returns none gets a diagnostic, not a guess. The key comes
from ``OPENAI_API_KEY``; retries, concurrency and the request cache are ``remote``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ..prompting import Prompt, as_messages, as_text
from .base import BackendConfig, Reply
from .remote import RemoteBackend, RemoteOptions, secret_from_env


class OpenAIOptions(RemoteOptions):
    top_logprobs: int = 20  # tokens asked for when scoring by log-probability

    def checks(self) -> list[tuple[bool, str]]:
        return [*super().checks(), (self.top_logprobs >= 1, "--top-logprobs must be 1 or more")]


class OpenAIBackend(RemoteBackend):
    name = "openai"
    Options = OpenAIOptions
    options: OpenAIOptions
    key_variables = ("OPENAI_API_KEY",)

    def __init__(self, config: BackendConfig):
        openai = optional_import("openai", "api", "the openai backend")

        super().__init__(config)
        self.connection_errors = (openai.APIConnectionError,)  # timeouts are a subclass
        self.secret = secret_from_env(self.key_variables, self.name)
        # retries are the generic layer's (counted, Retry-After honoured), never the client's own
        self.client = openai.OpenAI(
            api_key=self.secret,
            base_url=self.options.base_url,
            max_retries=0,
            timeout=self.options.timeout,
        )
        self.chat = config.chat

    def _sampling(self) -> dict[str, Any]:
        sampling = self.config.sampling
        params: dict[str, Any] = {"temperature": sampling.temperature}
        if sampling.top_p != 1.0:
            params["top_p"] = sampling.top_p
        if sampling.seed is not None:
            params["seed"] = sampling.seed
        return params

    def generate_request(
        self, prompt: Prompt, max_new_tokens: int, stop_strings: Sequence[str]
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, **self._sampling()}
        if stop_strings:
            body["stop"] = list(stop_strings)
        if self.chat:
            return {
                "endpoint": "chat.completions",
                **body,
                "messages": as_messages(prompt),
                "max_completion_tokens": max_new_tokens,
            }
        return {"endpoint": "completions", **body, "prompt": as_text(prompt), "max_tokens": max_new_tokens}

    def score_request(self, prompt: Prompt) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, "temperature": 0.0}
        if self.chat:
            return {
                "endpoint": "chat.completions",
                **body,
                "messages": as_messages(prompt),
                "max_completion_tokens": 1,
                "logprobs": True,
                "top_logprobs": self.options.top_logprobs,
            }
        return {
            "endpoint": "completions",
            **body,
            "prompt": as_text(prompt),
            "max_tokens": 1,
            "logprobs": self.options.top_logprobs,
        }

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        body = {key: value for key, value in request.items() if key != "endpoint"}
        if request["endpoint"] == "chat.completions":
            return self.client.chat.completions.create(**body).model_dump(mode="json")
        return self.client.completions.create(**body).model_dump(mode="json")

    def reply_of(self, response: dict[str, Any]) -> Reply:
        choice = (response.get("choices") or [{}])[0]
        message = choice.get("message")
        if message is None:  # plain completions
            return Reply(choice.get("text") or "")
        # servers name the reasoning differently: vLLM / DeepSeek ``reasoning_content``, others ``reasoning``
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return Reply(message.get("content") or "", reasoning if isinstance(reasoning, str) else None)

    def option_logprobs(self, response: dict[str, Any], labels: Sequence[str]) -> list[float]:
        """Each label's log-probability among the first token's ``top_logprobs`` (−inf when absent)."""
        choice = (response.get("choices") or [{}])[0]
        top: dict[str, float] = {}
        logprobs = choice.get("logprobs") or {}
        if "content" in logprobs:  # chat: [{token, logprob, top_logprobs: [{token, logprob}]}]
            first = (logprobs.get("content") or [{}])[0]
            top = {entry["token"]: entry["logprob"] for entry in first.get("top_logprobs") or []}
        elif logprobs.get("top_logprobs"):  # completions: [{token: logprob}]
            top = dict(logprobs["top_logprobs"][0] or {})
        if not top:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV306",
                        f"the server returned no top_logprobs for model {self.config.model!r}",
                        hint="this server or model does not expose log-probabilities; use --scoring generate",
                    )
                ]
            )
        return [_label_logprob(top, label) for label in labels]

    def tokens_of(self, response: dict[str, Any]) -> tuple[int, int]:
        usage = response.get("usage") or {}
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _label_logprob(top: dict[str, float], label: str) -> float:
    """The label's own token if listed, else the best token that is the label once spaces are stripped."""
    if label in top:
        return float(top[label])
    near = [value for token, value in top.items() if token.strip() == label]
    return float(max(near)) if near else -math.inf
