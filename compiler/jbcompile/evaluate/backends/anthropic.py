"""Anthropic's Messages API: generation only (it returns no log-probabilities), extended thinking included.

Every prompt is sent as messages (a plain prompt is one user turn). With ``--thinking-budget N`` the
model thinks first; its thinking blocks go to the predictions log's ``reasoning`` field and only the text
blocks are parsed. The key comes from ``ANTHROPIC_API_KEY``; retries, concurrency and the request cache
are ``remote``'s. A response is read as the server sent it and checked for what is read (a ``content``
list of blocks, text where a block holds text, counts as usage); anything else is a
:class:`~.remote.ServerFault`. A message with no content block is the model's out-of-choice answer only
when ``stop_reason`` says why (``max_tokens``, ``refusal``, ``tool_use``); an empty ``end_turn`` is a
fault.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ...extras import optional_import
from ...services import ANTHROPIC, service_errors
from ..prompting import Prompt, as_messages
from .base import BackendConfig, Reply
from .registry import options_for
from .remote import RemoteBackend, RemoteOptions, json_body, need, secret_from_env, token_count

# stop reasons that explain a message without content blocks
EMPTY_FOR_A_REASON = frozenset({"max_tokens", "refusal", "tool_use"})


class AnthropicOptions(RemoteOptions):
    thinking_budget: int | None = None  # extended thinking (tokens); None = off

    def checks(self) -> list[tuple[bool, str]]:
        budget = self.thinking_budget
        return [
            *super().checks(),
            (budget is None or budget >= 1024, "--thinking-budget must be 1024 or more"),
        ]

    def own_decoding(self) -> str | None:
        if self.thinking_budget is None:
            return None
        return (
            "--thinking-budget: Anthropic's extended thinking takes no temperature (the API samples at "
            "its own) and thinks up to its budget of at least 1,024 tokens before the answer's limit"
        )


class AnthropicBackend(RemoteBackend):
    name = "anthropic"
    service = ANTHROPIC
    Options = AnthropicOptions
    options: AnthropicOptions
    key_variables = ("ANTHROPIC_API_KEY",)

    def __init__(self, config: BackendConfig):
        anthropic = optional_import("anthropic", "api", "the anthropic backend")

        super().__init__(config)
        self.connection_errors = (anthropic.APIConnectionError,)  # timeouts are a subclass
        self.secret = secret_from_env(self.key_variables, self.name)
        with service_errors(ANTHROPIC, "creating the client", secrets=(self.secret,)):
            self.client = anthropic.Anthropic(
                api_key=self.secret,
                base_url=self.options.base_url,
                max_retries=0,
                timeout=self.options.timeout,
            )
            self._arguments = frozenset(inspect.signature(self.client.messages.create).parameters)

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        """With extended thinking the service samples as it does: no temperature or top-p of ours is
        sent, so none is recorded."""
        message, described = super().describe_idle(config)
        if options_for(cls, config).thinking_budget is not None:
            described["sampling"] = {**described["sampling"], "temperature": None, "top_p": None}
        return message, described

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
        raw = self.client.messages.with_raw_response.create(**known, extra_body=extra or None)
        return json_body(raw.http_response)

    def reply_of(self, response: dict[str, Any]) -> Reply:
        need(
            response.get("type", "message") == "message",
            f"a reply of type {response.get('type')!r}, not a message",
        )
        blocks: Any = response.get("content")
        need(isinstance(blocks, list), "a message without a content list")
        text: list[str] = []
        thinking: list[str] = []
        for block in blocks:
            need(
                isinstance(block, dict) and isinstance(block.get("type"), str),
                "a content block without a type",
            )
            field = {"text": "text", "thinking": "thinking"}.get(block["type"])
            if field is None:  # redacted thinking, tool use …: nothing to read
                continue
            need(isinstance(block.get(field), str), f"a {block['type']} block whose {field} is not text")
            (text if field == "text" else thinking).append(block[field])
        # a message of no block at all is the model's out-of-choice answer only where stop_reason says why
        # (the token limit, a refusal, a tool call); an "end_turn" with nothing in it is retried, never kept
        need(
            bool(blocks) or response.get("stop_reason") in EMPTY_FOR_A_REASON,
            f"an empty message with stop_reason {response.get('stop_reason')!r}",
        )
        return Reply(
            "".join(text),
            "\n\n".join(thinking) if thinking else None,
            at_limit=response.get("stop_reason") == "max_tokens",
        )

    def tokens_of(self, response: dict[str, Any]) -> tuple[int, int]:
        usage = response.get("usage")
        return token_count(usage, "input_tokens"), token_count(usage, "output_tokens")

    def server_of(self, response: dict[str, Any]) -> tuple[str | None, str | None]:
        return super().server_of(response)[0], None
