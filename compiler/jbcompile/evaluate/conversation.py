"""Prompts asked after an earlier exchange (two-turn prompting), for any kind.

A setting that talks twice (e.g. reasoning asked for in a first turn) gives each row a :class:`TurnItem`:
the first user turn, how long its reply may be, and the final user turn (``text``).
:func:`conversation_texts` runs
every first turn with the backend (greedy, batched and prefix-shared like any generation), then writes
each final prompt as the whole conversation — with ``--chat`` the tokenizer's chat template over
``[user, assistant, user]``, without it the turns one after the other — which the runner scores or
generates from like any single-turn prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .kind import SECTION_STOP
from .prompting import Prompt, PromptItem, apply_chat_template, prompt_hash

FIRST_TURN_STOP = SECTION_STOP  # a reply ends where the model starts a new section of its own


@dataclass(frozen=True)
class TurnItem(PromptItem):
    """A prompt whose final turn (``text``) follows a first exchange (``first`` and the model's reply)."""

    first: str = ""
    first_max_new_tokens: int = 100
    # where the first reply ends: a model's own new section — but a reasoning model may write one while it
    # thinks (its replies then stop at the limit or its end token, as its final turns do)
    first_stop: tuple[str, ...] = FIRST_TURN_STOP

    @property
    def shown(self) -> tuple[str, ...]:
        return (self.first, self.text)


def plain_conversation(exchanges: Sequence[tuple[str, str]], final: str) -> str:
    """Earlier turns and replies, then the final prompt, as one text for a model without chat template."""
    return "".join(f"{user}{reply.strip()}\n\n" for user, reply in exchanges) + final


def chat_conversation(tokenizer: Any, exchanges: Sequence[tuple[str, str]], final: str) -> Prompt:
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
        stops = tuple(s for s in items[batch[0]].first_stop if all(s in items[i].first_stop for i in batch))
        outputs = backend.generate([encoded[i] for i in batch], [keys[i] for i in batch], limit, stops)
        for i, output in zip(batch, outputs, strict=True):
            replies[i] = output
    return replies


def conversation_texts(
    items: Sequence[PromptItem],
    backend: Any,
    *,
    chat: bool,
    earlier: Mapping[str, tuple[Any, Any]] | None = None,
) -> tuple[list[Prompt], dict[str, str]]:
    """The text each item is run as, and the first-turn reply of every two-turn item (by example_id).

    ``earlier``: an earlier run's first reply and final prompt hash by example_id (a resume). A reply
    is reused when the final prompt it makes has that hash — it answered this very first turn — so a
    resume runs only the first turns of rows it has not done (and none, without loading the model,
    when every row is done).
    """

    def final_text(item: TurnItem, reply: str) -> Prompt:
        exchange = [(item.first, reply)]
        if chat:
            return chat_conversation(backend.tokenizer, exchange, item.text)
        return plain_conversation(exchange, item.text)

    two_turn = [item for item in items if isinstance(item, TurnItem)]
    replies: dict[str, str] = {}
    for turn in two_turn:
        reply, hashed = (earlier or {}).get(turn.example_id, (None, None))
        if isinstance(reply, str) and prompt_hash(final_text(turn, reply)) == hashed:
            replies[turn.example_id] = reply
    fresh = [item for item in two_turn if item.example_id not in replies]
    replies.update(zip((i.example_id for i in fresh), first_replies(backend, fresh, chat=chat), strict=True))
    texts: list[Prompt] = []
    for item in items:
        if isinstance(item, TurnItem):
            texts.append(final_text(item, replies[item.example_id]))
        else:
            texts.append(apply_chat_template(backend.tokenizer, item.text) if chat else item.text)
    return texts, replies
