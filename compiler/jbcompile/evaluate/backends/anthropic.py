"""Anthropic's Messages API: generation only (it returns no log-probabilities), extended thinking included.

Every prompt is sent as messages (a plain prompt is one user turn). With ``--thinking-budget N`` the
model thinks first; its thinking blocks go to the predictions log's ``reasoning`` field and only the text
blocks are parsed. The key comes from ``ANTHROPIC_API_KEY``; retries, concurrency and the request cache
are ``remote``'s.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ...extras import optional_import
from ..prompting import Prompt, as_messages
from .base import BackendConfig, Reply
from .remote import RemoteBackend, RemoteOptions, secret_from_env


class AnthropicOptions(RemoteOptions):
    thinking_budget: int | None = None  # extended thinking (tokens); None = off

    def checks(self) -> list[tuple[bool, str]]:
        budget = self.thinking_budget
        return [
            *super().checks(),
            (budget is None or budget >= 1024, "--thinking-budget must be 1024 or more"),
        ]


class AnthropicBackend(RemoteBackend):
    name = "anthropic"
    Options = AnthropicOptions
    options: AnthropicOptions
    key_variables = ("ANTHROPIC_API_KEY",)

    def __init__(self, config: BackendConfig):
        anthropic = optional_import("anthropic", "api", "the anthropic backend")

        super().__init__(config)
        self.connection_errors = (anthropic.APIConnectionError,)  # timeouts are a subclass
        self.secret = secret_from_env(self.key_variables, self.name)
        self.client = anthropic.Anthropic(
            api_key=self.secret,
            base_url=self.options.base_url,
            max_retries=0,
            timeout=self.options.timeout,
        )
        self._arguments = frozenset(inspect.signature(self.client.messages.create).parameters)

    def generate_request(
        self, prompt: Prompt, max_new_tokens: int, stop_strings: Sequence[str]
    ) -> dict[str, Any]:
        messages = as_messages(prompt)
        system = [m["content"] for m in messages if m["role"] == "system"]
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [m for m in messages if m["role"] != "system"],
            "max_tokens": max_new_tokens,
        }
        if system:
            body["system"] = "\n\n".join(system)
        budget = self.options.thinking_budget
        if budget:
            # thinking needs room beyond its budget for the answer, and takes no temperature or stops
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = budget + max_new_tokens
            return body
        sampling = self.config.sampling
        body["temperature"] = sampling.temperature
        if sampling.top_p != 1.0:
            body["top_p"] = sampling.top_p
        if stop_strings:
            body["stop_sequences"] = list(stop_strings)
        return body

    def send(self, request: dict[str, Any]) -> dict[str, Any]:
        # fields this client version has no argument for (recent ones dropped temperature and top_p)
        # travel in the body as they are, so the request the server gets is the same
        known = {key: value for key, value in request.items() if key in self._arguments}
        extra = {key: value for key, value in request.items() if key not in self._arguments}
        return self.client.messages.create(**known, extra_body=extra or None).model_dump(mode="json")

    def reply_of(self, response: dict[str, Any]) -> Reply:
        blocks = response.get("content") or []
        text = "".join(block.get("text") or "" for block in blocks if block.get("type") == "text")
        thinking = [block.get("thinking") or "" for block in blocks if block.get("type") == "thinking"]
        return Reply(text, "\n\n".join(thinking) if thinking else None)

    def tokens_of(self, response: dict[str, Any]) -> tuple[int, int]:
        usage = response.get("usage") or {}
        return int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)

    def server_of(self, response: dict[str, Any]) -> tuple[str | None, str | None]:
        return response.get("model"), None
