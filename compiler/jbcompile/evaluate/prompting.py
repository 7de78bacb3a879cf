"""What a prompt is: a loaded template, the prompt of one row (text or chat messages), its hash.

A kind renders one prompt per row from plain variables with a :class:`PromptTemplate`
(:mod:`.promptfiles` finds and loads the template files), and a backend runs it as a text or as chat
messages (:class:`ChatPrompt`).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jinja2

from ..diagnostics import Diagnostic, DiagnosticError
from ..usertemplates import render

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

    @property
    def shown(self) -> tuple[str, ...]:
        """Every text the model is shown for this row, in order (one here; a conversation's turns)."""
        return (self.text,)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    template: jinja2.Template
    source_sha256: str

    def render(self, **variables: Any) -> str:
        return render(self.template, **variables)


def render_checked(template: PromptTemplate, where: str, **variables: Any) -> str:
    """Render, turning a template error (an undefined variable, what the sandbox refuses, a range beyond
    its bound: a prompt file is the user's code) into a diagnostic."""
    try:
        return template.render(**variables)
    except (jinja2.TemplateError, ArithmeticError, LookupError, TypeError, ValueError) as error:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV013",
                    f"prompt template {template.name} failed on {where}: {error}",
                    hint="use only the variables docs/eval.md lists for prompt templates",
                )
            ]
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


# A label shown right before an option: one letter or digit standing alone, then nothing but spaces and
# punctuation up to the option (``1. ``, ``(A) ``, ``2: ``, ``### 応答A⏎``), after NFKC (``１`` is ``1``).
_LABEL_BEFORE = re.compile(r"(?<![0-9A-Za-z])([0-9A-Za-z])[^\w]*\Z")
LABEL_CHECK_ITEMS = 20  # prompts looked at for the labels a prompt file shows


def shown_option_labels(text: str, options: Sequence[str]) -> list[str] | None:
    """The label a rendered prompt shows right before each option, or None where that cannot be told.

    The options come last, so they are looked for from the end, the last one first, each before the next:
    its label is the letter or digit right before it, with only spaces and punctuation between
    (``1. 七十代の男性``, ``選択肢: 0: 甲 1: 乙``, or a heading ``### 応答A`` on the line above). An option
    not found, or found with no such label before it, leaves the labels untold."""
    text = unicodedata.normalize("NFKC", text)
    shown: list[str] = []
    end = len(text)
    for option in reversed(options):
        wanted = unicodedata.normalize("NFKC", option).strip()
        start = text.rfind(wanted, 0, end) if wanted else -1
        if start < 0:
            return None
        label = _LABEL_BEFORE.search(text, max(0, start - 40), start)
        if label is None:
            return None
        shown.append(label.group(1))
        end = label.start()
    return shown[::-1]


def check_prompts_differ(items: Sequence[PromptItem], template: str) -> None:
    """EV017 when every row gets the same prompt (a prompt file that uses none of the row's variables):
    every answer would answer one question, and the metrics would mean nothing."""
    if len(items) > 1 and len({item.shown for item in items}) == 1:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV017",
                    f"prompt template {template} gives all {len(items):,} rows the same prompt: it shows the "
                    "model none of the row's context, question or options",
                    hint="write the row's variables into the prompt ({{ context }}, {{ question }}, the "
                    "options: docs/eval.md lists them), or extend a bundled layout",
                )
            ]
        )


def check_shown_labels(items: Sequence[PromptItem], labels: Sequence[str], template: str) -> None:
    """EV015 when a prompt shows the options with labels other than the ones replies and
    log-probabilities are read by (options numbered from 1 where answers are read from 0): every
    answer would go to the option beside the one the model chose. Judged on the first prompt (of the
    first ``LABEL_CHECK_ITEMS``) whose labels can be told; a prompt that shows none passes."""
    for item in items[:LABEL_CHECK_ITEMS]:
        told = (shown_option_labels(text, item.options) for text in item.shown)
        shown = next((found for found in told if found is not None), None)
        if shown is None:
            continue
        read = [label.upper() for label in labels[: len(item.options)]]
        if [label.upper() for label in shown] != read:
            first = shown[0].upper()
            taken = f"the option shown as {shown[read.index(first)]!r}" if first in read else "out of choice"
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV015",
                        f"prompt template {template} shows the options as {', '.join(shown)}, but answers "
                        f"are read as {', '.join(read)}: a model that answers {shown[0]!r} for the first "
                        f"option would be scored as choosing {taken}",
                        hint=f"label the options {', '.join(read)} in the prompt, in this order "
                        "(e.g. `{{ loop.index0 }}. {{ option }}` for 0, 1, 2)",
                    )
                ]
            )
        return
