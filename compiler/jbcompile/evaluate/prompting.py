"""What a prompt is: a loaded template, the prompt of one row (text or chat messages), its hash.

A kind renders one prompt per row from plain variables with a :class:`PromptTemplate`
(:mod:`.promptfiles` finds and loads the template files), and a backend runs it as a text or as chat
messages (:class:`ChatPrompt`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import jinja2

from ..diagnostics import Diagnostic, DiagnosticError

# How a chat prompt kept as messages is hashed (and so how predictions.jsonl has named it since 0.2.0):
# this marker, then the messages' JSON. It is only ever hashed, never sent or parsed.
CHAT_HASH_PREFIX = "\x00messages:"

Message = dict[str, str]  # {"role": …, "content": …}


@dataclass(frozen=True)
class ChatPrompt:
    """A chat prompt that stays a list of messages: a chat API's server applies the model's template
    (see ``backends.remote.MessagesTemplate``), so the kinds hand it on as it is."""

    messages: tuple[Message, ...]

    @property
    def hashed(self) -> str:
        """The text its ``prompt_hash`` is taken of."""
        return CHAT_HASH_PREFIX + json.dumps(list(self.messages), ensure_ascii=False)

    def __len__(self) -> int:
        """How long the prompt is, as the batch plan orders prompts (the hashed text's length)."""
        return len(self.hashed)


Prompt = str | ChatPrompt  # what a kind renders and a backend runs: a text, or chat messages


def as_messages(prompt: Prompt) -> list[Message]:
    """The messages of a prompt: a chat prompt's own, a plain text as one user turn."""
    if isinstance(prompt, ChatPrompt):
        return [dict(message) for message in prompt.messages]
    return [{"role": "user", "content": prompt}]


def as_text(prompt: Prompt) -> str:
    """The text of a prompt a local tokenizer runs (its chat template gives text, never messages)."""
    if isinstance(prompt, ChatPrompt):
        raise TypeError("a chat prompt kept as messages is for a backend that sends messages")
    return prompt


@dataclass(frozen=True)
class PromptItem:
    """One prompt to run: the row it asks about, its text, and the options it offers.

    ``prefix_keys`` are grouping hints, outermost first (e.g. category, then question): items that share
    a key share a long token prefix, which the backend computes once and reuses.
    """

    example_id: str
    text: str
    options: tuple[str, ...]
    prefix_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    template: jinja2.Template
    source_sha256: str

    def render(self, **variables: Any) -> str:
        return self.template.render(**variables)


def render_checked(template: PromptTemplate, where: str, **variables: Any) -> str:
    """Render, turning a template error (e.g. an undefined variable) into a diagnostic."""
    try:
        return template.render(**variables)
    except jinja2.TemplateError as error:
        raise DiagnosticError(
            [Diagnostic("EV013", f"prompt template {template.name} failed on {where}: {error}")]
        ) from None


def apply_chat_template(tokenizer: Any, text: str) -> Prompt:
    """Wrap a prompt as one user turn with the tokenizer's chat template, ready for the reply."""
    if not getattr(tokenizer, "chat_template", None):
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV014", "--chat was given but the tokenizer has no chat template", hint="drop --chat"
                )
            ]
        )
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def prompt_hash(prompt: Prompt) -> str:
    """16 hex digits of the sha256 of the exact prompt (predictions.jsonl's ``prompt_hash``)."""
    text = prompt.hashed if isinstance(prompt, ChatPrompt) else prompt
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
