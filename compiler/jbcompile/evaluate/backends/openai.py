"""Any server that speaks the OpenAI API: the hosted API, ``vllm serve``, SGLang, TGI, llama.cpp's server,
Ollama, ``transformers serve``.

``--chat`` sends chat completions (the server applies the model's chat template), otherwise plain
completions (base models). ``--scoring logprob`` asks for one token with its ``top_logprobs`` and reads
the option labels among them; a server that returns none gets a diagnostic, not a guess. The key comes
from ``OPENAI_API_KEY``; retries, concurrency and the request cache are ``remote``'s.

A response is read as the server sent it (the raw JSON, not the client's lenient model of it) and checked
for what is read: a first choice with a text (completions) or a message whose content is text (chat),
log-probabilities that are numbers, usage counts that are counts. Anything else is a
:class:`~.remote.ServerFault`. A message whose content is null is the model's out-of-choice answer only
when the reply says why it holds no text — ``finish_reason`` ``length`` (the token limit, often reached
while thinking), ``content_filter`` or ``tool_calls``, a ``refusal``, tool calls, or reasoning — and is
then kept like any answer; a null content that says nothing of the kind (``"stop"``) is a fault.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ...services import OPENAI, service_errors
from ..prompting import Prompt, as_messages, as_text
from .base import BackendConfig, Reply
from .remote import RemoteBackend, RemoteOptions, ServerFault, json_body, need, secret_from_env, token_count


class OpenAIOptions(RemoteOptions):
    top_logprobs: int = 20  # tokens asked for when scoring by log-probability

    def checks(self) -> list[tuple[bool, str]]:
        return [*super().checks(), (self.top_logprobs >= 1, "--top-logprobs must be 1 or more")]


class OpenAIBackend(RemoteBackend):
    name = "openai"
    service = OPENAI
    Options = OpenAIOptions
    options: OpenAIOptions
    key_variables = ("OPENAI_API_KEY",)

    def __init__(self, config: BackendConfig):
        openai = optional_import("openai", "api", "the openai backend")

        super().__init__(config)
        self.connection_errors = (openai.APIConnectionError,)  # timeouts are a subclass
        self.secret = secret_from_env(self.key_variables, self.name)
        # retries are the generic layer's (counted, Retry-After honoured), never the client's own
        with service_errors(OPENAI, "creating the client", secrets=(self.secret,)):
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
        endpoint = (
            self.client.chat.completions
            if request["endpoint"] == "chat.completions"
            else self.client.completions
        )
        return json_body(endpoint.with_raw_response.create(**body).http_response)

    def reply_of(self, response: dict[str, Any]) -> Reply:
        choice = _first_choice(response)
        if "message" not in choice:  # plain completions
            text: Any = choice.get("text")
            need(isinstance(text, str), f"a completion without text ({_shown(text)})")
            return Reply(text, at_limit=choice.get("finish_reason") == "length")
        message = choice["message"]
        need(isinstance(message, dict), f"a choice whose message is not an object ({_shown(message)})")
        need("content" in message, "a message without content")
        content = message["content"]
        need(
            content is None or isinstance(content, str),
            f"a message content that is not text ({_shown(content)})",
        )
        # servers name the reasoning differently: vLLM / DeepSeek ``reasoning_content``, others ``reasoning``
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        reasoning = reasoning if isinstance(reasoning, str) and reasoning else None
        # null content is the model's own answer (out of choice) only where the reply says why it holds
        # no text; a bare null "stop" is a server that lost the answer: retried, never kept
        need(
            content is not None or reasoning is not None or _says_why_it_is_empty(choice, message),
            f"a message with null content and finish_reason {_shown(choice.get('finish_reason'))}, "
            "without a refusal, tool calls or reasoning",
        )
        return Reply(content or "", reasoning, at_limit=choice.get("finish_reason") == "length")

    def option_logprobs(self, response: dict[str, Any], labels: Sequence[str]) -> list[float]:
        """Each label's log-probability among the first token's ``top_logprobs`` (−inf when absent)."""
        choice = _first_choice(response)
        logprobs: Any = choice.get("logprobs") or {}
        need(isinstance(logprobs, dict), f"logprobs that are not an object ({_shown(logprobs)})")
        top: dict[str, float] = {}
        if logprobs.get("content"):  # chat: [{token, logprob, top_logprobs: [{token, logprob}]}]
            tokens = logprobs["content"]
            need(
                isinstance(tokens, list) and isinstance(tokens[0], dict),
                "logprobs.content is not a list of tokens",
            )
            entries = tokens[0].get("top_logprobs") or []
            need(isinstance(entries, list), "top_logprobs that are not a list")
            for entry in entries:
                need(
                    isinstance(entry, dict) and isinstance(entry.get("token"), str),
                    "a top_logprobs entry without a token",
                )
                top[entry["token"]] = _logprob(entry.get("logprob"))
        elif logprobs.get("top_logprobs"):  # completions: [{token: logprob}]
            first = logprobs["top_logprobs"]
            need(isinstance(first, list), f"top_logprobs that are not a list ({_shown(first)})")
            need(isinstance(first[0] or {}, dict), f"top_logprobs that are not objects ({_shown(first[0])})")
            top = {str(token): _logprob(value) for token, value in (first[0] or {}).items()}
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
        usage = response.get("usage")
        return token_count(usage, "prompt_tokens"), token_count(usage, "completion_tokens")


def _first_choice(response: dict[str, Any]) -> dict[str, Any]:
    """The first choice of a response; a response without one holds no answer (a server fault)."""
    choices: Any = response.get("choices")
    need(isinstance(choices, list) and len(choices) > 0, f"a reply without choices ({_shown(choices)})")
    need(isinstance(choices[0], dict), f"a choice that is not an object ({_shown(choices[0])})")
    return choices[0]


# finish reasons that explain a message without content: the token limit (a model that thought until
# it), the provider's content filter, a call of a tool (none is offered: a model's own choice all the same)
EMPTY_FOR_A_REASON = frozenset({"length", "content_filter", "tool_calls", "function_call"})


def _says_why_it_is_empty(choice: dict[str, Any], message: dict[str, Any]) -> bool:
    """Does a choice whose message has null content say why (a finish reason, a refusal, tool calls)?"""
    refusal, calls = message.get("refusal"), message.get("tool_calls") or message.get("function_call")
    return (
        choice.get("finish_reason") in EMPTY_FOR_A_REASON
        or (isinstance(refusal, str) and bool(refusal.strip()))
        or bool(calls)
    )


def _logprob(value: Any) -> float:
    """A log-probability: a number that is not NaN and not above 0 (−inf is a valid "never")."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and not math.isnan(value) and value <= 1e-6):
        raise ServerFault(f"a log-probability that is not one ({_shown(value)})")
    return float(value)


def _shown(value: Any) -> str:
    """A value of a malformed reply, short, for the diagnostic."""
    import json

    from ...text import shortened

    return shortened(json.dumps(value, ensure_ascii=False, default=str))


def _label_logprob(top: dict[str, float], label: str) -> float:
    """The label's own token if listed, else the best token that is the label once spaces are stripped."""
    if label in top:
        return float(top[label])
    near = [value for token, value in top.items() if token.strip() == label]
    return float(max(near)) if near else -math.inf
