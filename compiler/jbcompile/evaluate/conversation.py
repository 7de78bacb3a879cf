"""Prompts asked after an earlier exchange (two-turn prompting), for any kind.

A setting that talks twice (SOBACO's cot-e and cot-r) gives each row a :class:`TurnItem`: the first user
turn, how long its reply may be, and the final user turn (``text``). :func:`conversation_texts` runs
every first turn with the backend (greedy, batched and prefix-shared like any generation), then writes
each final prompt as the whole conversation — with ``--chat`` the tokenizer's chat template over
``[user, assistant, user]``, without it the turns one after the other — which the runner scores or
generates from like any single-turn prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .prompting import PromptItem, apply_chat_template

FIRST_TURN_STOP = ("###",)  # a reply ends where the model starts a new section of its own


@dataclass(frozen=True)
class TurnItem(PromptItem):
    """A prompt whose final turn (``text``) follows a first exchange (``first`` and the model's reply)."""

    first: str = ""
    first_max_new_tokens: int = 100


def plain_conversation(exchanges: Sequence[tuple[str, str]], final: str) -> str:
    """Earlier turns and replies, then the final prompt, as one text for a model without chat template."""
    return "".join(f"{user}{reply.strip()}\n\n" for user, reply in exchanges) + final


def chat_conversation(tokenizer: Any, exchanges: Sequence[tuple[str, str]], final: str) -> str:
    """The conversation in the tokenizer's chat template, ready for the final reply."""
    messages: list[dict[str, str]] = []
    for user, reply in exchanges:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": reply.strip()}]
    messages.append({"role": "user", "content": final})
    if not getattr(tokenizer, "chat_template", None):
        apply_chat_template(tokenizer, final)  # raises the diagnostic single-turn prompts give
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def first_replies(backend: Any, items: Sequence[TurnItem], *, chat: bool) -> list[str]:
    """The model's reply to each item's first turn (greedy; one batch plan like the runner's)."""
    from .backends import plan_batches

    if not items:
        return []
    texts = [apply_chat_template(backend.tokenizer, item.first) if chat else item.first for item in items]
    encoded = backend.encode(texts, chat=chat)
    keys = [item.prefix_keys for item in items]
    replies = [""] * len(items)
    for batch in plan_batches([len(ids) for ids in encoded], keys, backend.batch_size):
        limit = max(items[i].first_max_new_tokens for i in batch)
        outputs = backend.generate(
            [encoded[i] for i in batch], [keys[i] for i in batch], limit, FIRST_TURN_STOP
        )
        for i, output in zip(batch, outputs, strict=True):
            replies[i] = output
    return replies


def conversation_texts(
    items: Sequence[PromptItem], backend: Any, *, chat: bool
) -> tuple[list[str], dict[str, str]]:
    """The text each item is run as, and the first-turn reply of every two-turn item (by example_id)."""
    two_turn = [item for item in items if isinstance(item, TurnItem)]
    replies = dict(
        zip((item.example_id for item in two_turn), first_replies(backend, two_turn, chat=chat), strict=True)
    )
    texts = []
    for item in items:
        if isinstance(item, TurnItem):
            exchange = [(item.first, replies[item.example_id])]
            texts.append(
                chat_conversation(backend.tokenizer, exchange, item.text)
                if chat
                else plain_conversation(exchange, item.text)
            )
        else:
            texts.append(apply_chat_template(backend.tokenizer, item.text) if chat else item.text)
    return texts, replies
