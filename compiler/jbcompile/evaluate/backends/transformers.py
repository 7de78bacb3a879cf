"""The transformers backend: batched log-prob scoring and greedy generation, with shared-prefix reuse.

Prompts of one category share their instruction and examples, and the option orders of one question
share everything up to the options. Each batch is run as a shallow prefix tree: the longest common
token prefix of every group is computed once, its key/value cache is copied to the group's members
(``Cache.reorder_cache``), and only the rest is run per prompt. Padding therefore sits in the middle of
a sequence; the attention mask hides it and position ids are counted from the mask, so every prompt sees
exactly the positions it would see alone. ``--no-prefix-cache`` (or a model whose cache is not a plain
``DynamicCache``) runs whole prompts instead.

Every forward pass reads only its last position's logits, so on CPU (see :func:`_tune_attention`) the
last layer attends for that position alone; the earlier layers, whose outputs every later key and value
need, attend for all. And on CPU greedy decoding writes each step's keys and values into room the cache
keeps for them (:func:`_make_room`) instead of growing it by a copy at every step.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from ...diagnostics import Diagnostic, DiagnosticError
from ...extras import optional_import
from ...services import TRANSFORMERS
from ..parsing import holds_line_break
from .base import BackendConfig, LocalTokens, Reply, common_prefix_length, library_version, load_error
from .options import Options
from .registry import options_for

log = logging.getLogger(__name__)

# Outermost prefixes kept between batches: one per category in flight is enough, as batches are grouped.
PREFIX_STORE_SIZE = 4
# transformers' SDPA attention with the CPU shortcuts of _cpu_attention (registered under this name with
# transformers' attention and mask interfaces; see _tune_attention).
CPU_ATTENTION = "jbcompile_cpu_sdpa"
# Tokens decoded to see whether a part-of-a-character token ended a line: a line break is at most 3 bytes.
LINE_WINDOW = 8
# Attention kinds that add a 4D float mask to their scores as given (decoding builds that mask itself).
ADDITIVE_MASK_ATTENTION = ("sdpa", "eager", CPU_ATTENTION)
# The layer whose attention (under CPU_ATTENTION) attends only each row's last query; see _last_query_only.
_LAST_QUERY_LAYER: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "last_query_layer", default=None
)


def _is_oom(error: BaseException) -> bool:
    torch = optional_import("torch", "eval")

    oom_type = getattr(torch, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(error, oom_type):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


class TransformersBackend(LocalTokens):
    """A causal LM from the Hub or a folder, loaded with ``from_pretrained`` like any model."""

    name = "transformers"
    service = TRANSFORMERS  # what the runner names when the library fails (jbcompile.services)
    Options = Options  # sampling alone

    def __init__(self, config: BackendConfig):
        torch = optional_import("torch", "eval", "the transformers backend")
        transformers = optional_import("transformers", "eval", "the transformers backend")

        self.config = config
        self.options = options_for(TransformersBackend, config)
        self.batch_size = max(1, config.batch_size)
        self.prefix_cache = config.prefix_cache
        cuda = torch.cuda.is_available()
        dtype = _resolve_dtype(config.dtype, cuda)
        if config.device is not None and config.device != "cpu":
            device_map: Any = {"": config.device}
        elif cuda and config.device is None:
            device_map = "auto"
        else:
            device_map = None
        torch.manual_seed(0)
        try:
            self.tokenizer = self.load_tokenizer(config)
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                config.model,
                revision=config.revision,
                dtype=dtype,
                device_map=device_map,
                trust_remote_code=config.trust_remote_code,
            )
        except Exception as error:  # noqa: BLE001 - hub, file, config and memory errors: "cannot load this"
            raise load_error(config.model, error) from None
        self.model.eval()
        accepted = inspect.signature(self.model.forward).parameters
        self._logits_to_keep = "logits_to_keep" in accepted
        # Without position ids (ALiBi models such as BLOOM or MPT) a model places tokens by itself, so a
        # padding gap inside a sequence is not safe: prompts then run whole, left-padded, as elsewhere.
        self._takes_positions = "position_ids" in accepted
        # The cache argument's name: ``cache`` in newer transformers (5.24 deprecates ``past_key_values``,
        # to be removed in 5.40), ``past_key_values`` before; the output field carries the same name.
        self._cache_name = "cache" if "cache" in accepted else "past_key_values"
        tuning = _tune_attention(self.model)
        self._additive_mask, self._last_layer = tuning.additive_mask, tuning.last_layer
        if not self._takes_positions and self.prefix_cache:
            self.prefix_cache = False
            log.warning("this model takes no position ids; prefix reuse is off")
        self.dtype = str(dtype).replace("torch.", "")
        weight = self.model.get_input_embeddings().weight
        assert isinstance(weight, torch.Tensor)  # a module's attributes are typed Tensor | Module
        self.input_device = weight.device
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids: frozenset[int] = frozenset([eos] if isinstance(eos, int) else (eos or []))
        self._plain_cache = True  # until a forward pass shows otherwise
        self._prefix_store: dict[tuple[int, ...], Any] = {}  # outermost prefixes, least recently used first
        self._token_texts: dict[int, str | None] = {}

    @classmethod
    def describe_idle(cls, config: BackendConfig) -> tuple[str | None, dict[str, Any]]:
        torch = optional_import("torch", "eval")

        dtype = str(_resolve_dtype(config.dtype, torch.cuda.is_available())).replace("torch.", "")
        return dtype, {
            "name": cls.name,
            "server_model": None,
            "server_version": None,
            "version": library_version("transformers"),
            "sampling": asdict(config.sampling),
            "usage": None,
        }

    def describe(self) -> dict[str, Any]:
        return self.describe_idle(self.config)[1]  # running changes nothing it describes

    def close(self) -> None:
        """Nothing to release: the model is freed with the object."""

    # ---- running ---------------------------------------------------------------------------------

    def score(
        self, sequences: Sequence[Sequence[int]], keys: Sequence[tuple[str, ...]], label_ids: Sequence[int]
    ) -> list[list[float]]:
        """Next-token log-probabilities of ``label_ids`` after each prompt."""
        return self._with_oom_retry(
            lambda idx: self._score([sequences[i] for i in idx], [keys[i] for i in idx], label_ids),
            len(sequences),
        )

    def generate(
        self,
        sequences: Sequence[Sequence[int]],
        keys: Sequence[tuple[str, ...]],
        max_new_tokens: int,
        stop_strings: Sequence[str] = (),
        answer_is_final: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Greedy continuations, decoded without special tokens.

        ``answer_is_final`` (a kind's test that more text cannot change the parsed answer, checked when a
        line ends) lets a row stop as soon as its answer line is complete (in the greedy loop; models that
        fall back to ``model.generate`` decode to the limit, with the same parsed answers).
        """
        return self._with_oom_retry(
            lambda idx: self._generate(
                [sequences[i] for i in idx],
                [keys[i] for i in idx],
                max_new_tokens,
                stop_strings,
                answer_is_final,
            ),
            len(sequences),
        )

    def _with_oom_retry(self, run: Callable[[list[int]], list], count: int) -> list:
        """Run in chunks of the current batch size; on out-of-memory halve it and retry."""
        results: list = []
        start = 0
        while start < count:
            chunk = list(range(start, min(count, start + self.batch_size)))
            try:
                results.extend(run(chunk))
            except Exception as error:  # noqa: BLE001 - only out-of-memory is retried
                if not _is_oom(error):
                    raise
                self._free_memory()
                if len(chunk) == 1:
                    raise DiagnosticError(
                        [
                            Diagnostic(
                                "EV052",
                                "out of memory on a single prompt",
                                hint="use a smaller model or dtype",
                            )
                        ]
                    ) from None
                self.batch_size = max(1, len(chunk) // 2)
                log.warning("out of memory; batch size halved to %d", self.batch_size)
                continue
            start += len(chunk)
        return results

    def _free_memory(self) -> None:
        import gc

        torch = optional_import("torch", "eval")

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _stop_criteria(self, stop_strings: tuple[str, ...]):
        """One stop-string criterion per run: building it scans the whole vocabulary, so keep it."""
        transformers = optional_import("transformers", "eval")

        cached = getattr(self, "_stops", None)
        if cached is None or cached[0] != stop_strings:
            cached = (stop_strings, transformers.StopStringCriteria(self.tokenizer, list(stop_strings)))
            self._stops = cached
        return cached[1]

    def _shared_prefixes(
        self, sequences: Sequence[Sequence[int]], keys: Sequence[tuple[str, ...]]
    ) -> _TreeState:
        """Run every shared prefix level; what is left per prompt is ``state.suffixes``."""
        state = _TreeState(ends=[0] * len(sequences))
        depth = len(keys[0]) if (self.prefix_cache and keys and len(sequences) > 1) else 0
        for level in range(1, depth + 1):
            groups: dict[tuple[int | str, ...], list[int]] = {}
            for index, key in enumerate(keys):
                parent = state.row_of[index] if state.row_of else -1
                groups.setdefault((parent, *key[:level]), []).append(index)
            nodes = list(groups.values())
            segments = []
            new_ends = list(state.ends)
            for members in nodes:
                start = state.ends[members[0]]
                limit = min(len(sequences[i]) for i in members) - 1
                end = common_prefix_length([sequences[i] for i in members], start, limit)
                segments.append(list(sequences[members[0]][start:end]))
                for i in members:
                    new_ends[i] = end
            if not any(segments) or len(nodes) == len(sequences):
                continue  # nothing shared at this level
            if state.cache is None and len(nodes) == 1:
                cache = self._outer_prefix(state, segments[0])
            else:
                parents = [state.row_of[m[0]] for m in nodes] if state.row_of else None
                cache = self._extend(state, segments, parents)[0]
            if not _reusable(cache):
                self.prefix_cache = self._plain_cache = False
                log.warning("this model's cache cannot be shared between prompts; prefix reuse is off")
                return _TreeState(ends=[0] * len(sequences))
            state.cache = cache
            state.ends = new_ends
            state.row_of = [0] * len(sequences)
            for row, members in enumerate(nodes):
                for i in members:
                    state.row_of[i] = row
        return state

    def _outer_prefix(self, state: _TreeState, segment: list[int]):
        """The outermost shared prefix (instruction and examples) recurs in every batch of a category:
        start from the longest stored match and run only the tokens it lacks."""
        torch = optional_import("torch", "eval")

        matched, stored = 0, None
        best: tuple[int, ...] | None = None
        for tokens, cache in self._prefix_store.items():
            length = common_prefix_length([tokens, segment], 0, min(len(tokens), len(segment)))
            if length > matched:
                matched, stored, best = length, cache, tokens
        if best is not None:
            self._prefix_store[best] = self._prefix_store.pop(best)  # most recently used last
        if stored is None:
            cache = self._extend(state, [segment], None)[0]
        else:
            state.cache = cache = _truncated_copy(stored, matched)
            state.ids = torch.tensor([segment[:matched]], dtype=torch.long)
            state.mask = torch.ones_like(state.ids)
            if matched < len(segment):
                cache = self._extend(state, [segment[matched:]], [0])[0]
        key = tuple(segment)
        if key not in self._prefix_store and _reusable(cache):
            self._prefix_store[key] = _truncated_copy(cache, len(segment))
            while len(self._prefix_store) > PREFIX_STORE_SIZE:
                self._prefix_store.pop(next(iter(self._prefix_store)))
        return cache

    def _extend(self, state: _TreeState, segments: Sequence[Sequence[int]], parents: Sequence[int] | None):
        """Append one left-padded segment per row to the cached rows ``parents``; returns (cache, logits)."""
        torch = optional_import("torch", "eval")

        width = max(1, max(len(s) for s in segments))
        ids = torch.full((len(segments), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(segments), width), dtype=torch.long)
        for row, segment in enumerate(segments):
            if segment:
                ids[row, width - len(segment) :] = torch.tensor(segment, dtype=torch.long)
                mask[row, width - len(segment) :] = 1
        cache = None
        if state.cache is not None and parents is not None:
            index = torch.tensor(parents, dtype=torch.long, device=self.input_device)
            cache = state.cache
            cache.reorder_cache(index)
            mask = torch.cat([state.mask[index.cpu()], mask], dim=1)
            ids = torch.cat([state.ids[index.cpu()], ids], dim=1)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -width:]
        extra: dict[str, Any] = {"logits_to_keep": 1} if self._logits_to_keep else {}
        if self._takes_positions:
            extra["position_ids"] = positions.to(self.input_device)
        if cache is not None:  # without one the model starts its own Cache (never pass None or tuples)
            extra[self._cache_name] = cache
        # only the last position's logits are read: the last layer may attend for it alone
        with torch.inference_mode(), _last_query_only(self._last_layer):
            out = self.model(
                input_ids=ids[:, -width:].to(self.input_device),
                attention_mask=mask.to(self.input_device),
                use_cache=True,
                **extra,
            )
        state.mask, state.ids = mask, ids
        return getattr(out, self._cache_name), out.logits

    def _score(self, sequences, keys, label_ids) -> list[list[float]]:
        torch = optional_import("torch", "eval")

        state = self._shared_prefixes(sequences, keys)
        suffixes = [list(seq[end:]) for seq, end in zip(sequences, state.ends, strict=True)]
        _, logits = self._extend(state, suffixes, state.row_of)
        last = torch.log_softmax(logits[:, -1, :].float(), dim=-1)
        picked = last[:, torch.tensor(list(label_ids), device=last.device)]
        return picked.cpu().tolist()

    def _generate(self, sequences, keys, max_new_tokens, stop_strings, answer_is_final=None) -> list[str]:
        if not self._plain_cache or not self.config.sampling.greedy:
            return self._generate_with_transformers(sequences, max_new_tokens, stop_strings)
        state = self._shared_prefixes(sequences, keys)  # turns _plain_cache off on a cache it cannot share
        if self._plain_cache:
            suffixes = [list(seq[end:]) for seq, end in zip(sequences, state.ends, strict=True)]
            cache, logits = self._extend(state, suffixes, state.row_of)
            if _reusable(cache):
                return self._decode_greedy(
                    cache, state.mask, logits, max_new_tokens, tuple(stop_strings), answer_is_final
                )
            self._plain_cache = False
        log.info("this model's cache is not a plain DynamicCache; generating with model.generate")
        return self._generate_with_transformers(sequences, max_new_tokens, stop_strings)

    def _decode_greedy(
        self,
        cache,
        mask,
        logits,
        max_new_tokens: int,
        stop_strings: tuple[str, ...],
        answer_is_final: Callable[[str], bool] | None = None,
    ):
        """Greedy decoding on a prefilled cache, one token per step; a finished row leaves the batch.

        The same tokens as ``model.generate(do_sample=False)`` (argmax of the last logits), without its
        per-step machinery; a row stops at an end-of-sequence token or once a stop string appears in
        what it generated (the prompt is not searched), and the stopping token is kept.
        """
        torch = optional_import("torch", "eval")

        device = self.input_device
        if device.type == "cpu":  # measured on CPU only; elsewhere the cache stays transformers' own
            _make_room(cache, max_new_tokens)
        rows, width = mask.shape
        positions = mask.sum(dim=-1, keepdim=True).to(device)  # position of each row's next token
        mask = torch.cat([mask, torch.zeros((rows, max_new_tokens), dtype=mask.dtype)], dim=1).to(device)
        # With padding mid-sequence transformers would build a general mask at every step; a model that
        # takes a ready additive mask gets one built once here, and each step unmasks its new position.
        seen = 1
        if self._additive_mask:
            mask, seen = _additive_mask(mask, 1, self.model.dtype), 0
        generated: list[list[int]] = [[] for _ in range(rows)]
        alive = list(range(rows))
        # enough trailing tokens to hold a stop string: every non-special token adds at least one byte
        window = max((2 * len(stop.encode("utf-8")) + 2 for stop in stop_strings), default=0)
        next_tokens = logits[:, -1, :].argmax(dim=-1)
        for step in range(max_new_tokens):
            tokens = next_tokens.tolist()
            for slot, row in enumerate(alive):
                generated[row].append(tokens[slot])
            keep = [
                slot
                for slot, row in enumerate(alive)
                if not self._row_finished(generated[row], stop_strings, window, answer_is_final)
            ]
            if not keep or step == max_new_tokens - 1:
                break
            if len(keep) < len(alive):
                index = torch.tensor(keep, dtype=torch.long, device=device)
                cache.reorder_cache(index)
                next_tokens, mask, positions = next_tokens[index], mask[index], positions[index]
                alive = [alive[slot] for slot in keep]
            mask[..., width + step] = seen
            extra = {"position_ids": positions + step} if self._takes_positions else {}
            with torch.inference_mode():
                out = self.model(
                    input_ids=next_tokens[:, None].to(device),
                    attention_mask=mask[..., : width + step + 1],
                    use_cache=True,
                    **{self._cache_name: cache},
                    **extra,
                )
            next_tokens = out.logits[:, -1, :].argmax(dim=-1)
        texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True)
        return [self._cut(text, row, max_new_tokens) for text, row in zip(texts, generated, strict=True)]

    def _cut(self, text: str, row: Sequence[int], max_new_tokens: int) -> Reply:
        """A reply that holds ``max_new_tokens`` tokens, none of them an end of sequence, stopped at the
        limit (a stop string's or an early-stopped answer's row ends before it; model.generate pads a
        row that ended early)."""
        pad = self.tokenizer.pad_token_id
        ends = self.eos_ids | ({pad} if isinstance(pad, int) else set())
        at_limit = len(row) >= max_new_tokens and not any(token in ends for token in row)
        return Reply(text, at_limit=at_limit)

    def _row_finished(
        self,
        row: list[int],
        stop_strings: tuple[str, ...],
        window: int,
        answer_is_final: Callable[[str], bool] | None,
    ) -> bool:
        """Has the row just ended: an end token, a stop string, or a final answer? The text is decoded
        only when the new token could have completed a stop string or a line."""
        token = row[-1]
        if token in self.eos_ids:
            return True
        if stop_strings and self._may_end_stop(token, stop_strings):
            tail = self.tokenizer.decode(row[-window:], skip_special_tokens=True)
            if any(stop in tail for stop in stop_strings):
                return True
        if answer_is_final is not None and self._may_end_line(row):
            return answer_is_final(self.tokenizer.decode(row, skip_special_tokens=True))
        return False

    def _token_text(self, token: int) -> str | None:
        """A token's text alone, or None when it is empty or only part of a character (it may then
        complete anything)."""
        if token not in self._token_texts:
            text = self.tokenizer.decode([token], skip_special_tokens=True)
            self._token_texts[token] = None if not text or "\ufffd" in text else text
        return self._token_texts[token]

    def _may_end_stop(self, token: int, stop_strings: tuple[str, ...]) -> bool:
        """Whether ``token`` could complete a stop string: it holds a stop's last character."""
        text = self._token_text(token)
        return text is None or any(stop[-1] in text for stop in stop_strings)

    def _may_end_line(self, row: list[int]) -> bool:
        """Whether the row's last token could have ended a line: only then can an answer line have become
        complete. A token that is only part of a character (common in Japanese under byte-level
        vocabularies) is judged by the last few tokens' text, which holds any character it completed."""
        text = self._token_text(row[-1])
        if text is not None:
            return holds_line_break(text)
        return holds_line_break(self.tokenizer.decode(row[-LINE_WINDOW:], skip_special_tokens=True))

    def _generate_with_transformers(self, sequences, max_new_tokens, stop_strings) -> list[str]:
        """Whole prompts through ``model.generate``: for caches that cannot be shared or shrunk."""
        torch = optional_import("torch", "eval")
        transformers = optional_import("transformers", "eval")

        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, sequence in enumerate(sequences):
            ids[row, width - len(sequence) :] = torch.tensor(list(sequence), dtype=torch.long)
            mask[row, width - len(sequence) :] = 1
        sampling = self.config.sampling
        if not sampling.greedy:
            torch.manual_seed(0 if sampling.seed is None else sampling.seed)
        config = transformers.GenerationConfig(
            do_sample=not sampling.greedy,
            temperature=sampling.temperature if not sampling.greedy else None,
            top_p=sampling.top_p if not sampling.greedy else None,
            top_k=None,
            num_beams=1,
            max_new_tokens=max_new_tokens,
            pad_token_id=self.pad_id,
            eos_token_id=sorted(self.eos_ids) or None,
            # set explicitly, so that a model's own generation_config.json cannot change greedy decoding
            repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            min_new_tokens=0,
        )
        extra: dict[str, Any] = {}
        if stop_strings:
            extra["stopping_criteria"] = transformers.StoppingCriteriaList(
                [self._stop_criteria(tuple(stop_strings))]
            )
        with torch.inference_mode():
            # some transformers versions type generate's self as a class from_pretrained's result is not
            out = cast(Any, self.model).generate(
                input_ids=ids.to(self.input_device),
                attention_mask=mask.to(self.input_device),
                generation_config=config,
                **extra,
            )
        new = out[:, width:].cpu().tolist()
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        return [self._cut(text, row, max_new_tokens) for text, row in zip(texts, new, strict=True)]


@dataclass
class _TreeState:
    ends: list[int]
    cache: Any = None
    mask: Any = None
    ids: Any = None
    row_of: list[int] | None = None


def _cpu_attention(
    module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs
):
    """transformers' SDPA attention, with two shortcuts that leave the logits the backend reads unchanged.

    In the model's last layer, inside :func:`_last_query_only`, only each row's last query is attended:
    the other positions' outputs reach no logit that is read (the cache holds keys and values, made
    before this call), so they are left zero. And grouped key/value heads go to torch's CPU kernel as
    they are (``enable_gqa``) instead of being copied once per query head on every layer and step, as
    transformers does whenever a mask is given. Anything else (no grouping, another device, a position
    bias) goes to transformers' own function unchanged."""
    queries = query.shape[2]
    last_layer = _LAST_QUERY_LAYER.get()
    if (
        queries > 1
        and last_layer is not None
        and getattr(module, "layer_idx", None) == last_layer
        and kwargs.get("position_bias") is None
    ):
        if attention_mask is not None:
            attention_mask = attention_mask[..., -1:, :]
        last, _ = _sdpa(module, query[:, :, -1:], key, value, attention_mask, dropout, scaling, **kwargs)
        output = last.new_zeros((last.shape[0], queries, *last.shape[2:]))
        output[:, -1:] = last
        return output, None
    return _sdpa(module, query, key, value, attention_mask, dropout, scaling, is_causal, **kwargs)


def _sdpa(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """SDPA as transformers runs it, except that on CPU grouped key/value heads are not copied."""
    torch = optional_import("torch", "eval")
    sdpa = optional_import("transformers.integrations.sdpa_attention", "eval").sdpa_attention_forward

    grouped = query.shape[1] != key.shape[1] and query.shape[1] % key.shape[1] == 0
    if not grouped or query.device.type != "cpu" or kwargs.get("position_bias") is not None:
        return sdpa(module, query, key, value, attention_mask, dropout, scaling, is_causal, **kwargs)
    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    output = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attention_mask,
        dropout_p=dropout,
        scale=scaling,
        is_causal=bool(query.shape[2] > 1 and attention_mask is None and causal),
        enable_gqa=True,
    )
    return output.transpose(1, 2).contiguous(), None


@contextlib.contextmanager
def _last_query_only(layer: int | None) -> Iterator[None]:
    """Within: the attention of layer ``layer`` (None: of none) attends only each row's last query."""
    token = _LAST_QUERY_LAYER.set(layer)
    try:
        yield
    finally:
        _LAST_QUERY_LAYER.reset(token)


def _additive_mask(mask: Any, queries: int, dtype: Any) -> Any:
    """The 4D float mask of a pass of ``queries`` new tokens over ``mask``'s positions (1 = a token, 0 =
    padding): 0 where attended, the dtype's lowest value elsewhere (as transformers' own additive masks,
    so scores stay finite)."""
    torch = optional_import("torch", "eval")

    total = mask.shape[1]
    causal = torch.ones((queries, total), dtype=torch.bool, device=mask.device).tril(total - queries)
    allowed = (mask[:, None, None, :] != 0) & causal
    additive = torch.zeros(allowed.shape, dtype=dtype, device=mask.device)
    return additive.masked_fill_(~allowed, torch.finfo(dtype).min)


@dataclass(frozen=True)
class _Tuning:
    additive_mask: bool = False  # the model adds a ready 4D float mask as given
    last_layer: int | None = None  # the layer that may attend only each row's last query (None: none)


def _tune_attention(model: Any) -> _Tuning:
    """Faster attention calls that give the same logits, each kept only if a short padded probe shows
    it: on CPU, an SDPA model moves to :func:`_cpu_attention` (where transformers lets a loaded model
    change its attention), and then whether its last layer may attend only the last query; and whether
    the model takes a ready 4D additive mask as given (decoding then builds its mask itself). Models
    that handle attention their own way (BLOOM's ALiBi, remote code) keep what they had."""
    torch = optional_import("torch", "eval")
    transformers = optional_import("transformers", "eval")
    masking = optional_import("transformers.masking_utils", "eval")

    config = model.config
    vocab = int(getattr(config, "vocab_size", 0) or 0)
    ids = (torch.tensor([[1, 2, 3, 4], [3, 4, 5, 6]]) % max(vocab, 1)).to(model.device)
    mask = torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]], device=model.device)

    def logits(attention_mask: Any, last_layer: int | None = None) -> Any:
        with torch.inference_mode(), _last_query_only(last_layer):
            return model(input_ids=ids, attention_mask=attention_mask).logits[:, 1:].float()

    def same(expected: Any, attention_mask: Any, last_layer: int | None = None) -> bool:
        try:
            got = logits(attention_mask, last_layer)
        except Exception as error:  # noqa: BLE001 - any failure of the probe: keep what transformers does
            log.debug("attention probe failed: %s", error)
            return False
        if last_layer is not None:  # only the last position is computed, and only it is read
            expected, got = expected[:, -1:], got[:, -1:]
        return bool(torch.allclose(expected, got, atol=1e-4, rtol=1e-3))

    try:
        expected = logits(mask)
    except Exception as error:  # noqa: BLE001 - a model that cannot run the probe is left as it is
        log.debug("attention probe failed: %s", error)
        return _Tuning()
    last_layer = None
    if (
        model.device.type == "cpu"
        and getattr(config, "_attn_implementation", None) == "sdpa"
        and hasattr(model, "set_attn_implementation")
    ):
        transformers.AttentionInterface.register(CPU_ATTENTION, _cpu_attention)
        masking.AttentionMaskInterface.register(CPU_ATTENTION, masking.sdpa_mask)
        try:
            model.set_attn_implementation(CPU_ATTENTION)
        except Exception as error:  # noqa: BLE001 - a model that refuses the switch keeps SDPA
            log.debug("kept SDPA attention: %s", error)
        if getattr(config, "_attn_implementation", None) == CPU_ATTENTION and not same(expected, mask):
            model.set_attn_implementation("sdpa")
        last = _last_layer_index(config)
        if getattr(config, "_attn_implementation", None) == CPU_ATTENTION and last is not None:
            last_layer = last if same(expected, mask, last) else None
    if getattr(config, "_attn_implementation", None) not in ADDITIVE_MASK_ATTENTION:
        return _Tuning(last_layer=last_layer)
    return _Tuning(same(expected, _additive_mask(mask, ids.shape[1], model.dtype)), last_layer)


def _last_layer_index(config: Any) -> int | None:
    """The index (``layer_idx``) of a decoder's last layer, as its configuration gives it."""
    layers = getattr(config.get_text_config(), "num_hidden_layers", None)
    return layers - 1 if isinstance(layers, int) and layers > 0 else None


def _reusable(cache: Any) -> bool:
    """Only a plain DynamicCache of full-attention layers can be copied row by row and extended."""
    DynamicCache = optional_import("transformers", "eval").DynamicCache
    DynamicLayer = optional_import("transformers.cache_utils", "eval").DynamicLayer

    return type(cache) is DynamicCache and all(type(layer) is DynamicLayer for layer in cache.layers)


def _make_room(cache: Any, room: int) -> None:
    """Let every layer of a plain cache keep room for ``room`` more positions: decoding then writes each
    step's key and value in place, where a DynamicLayer concatenates (copies) its whole cache at every
    step; the first step makes the room (one copy, as a concatenation would)."""
    layer_class = _roomy_layer_class()
    for index, layer in enumerate(cache.layers):
        roomy = layer_class(room)
        roomy.__dict__.update(vars(layer))  # its state, whatever this transformers version keeps there
        cache.layers[index] = roomy


@functools.cache
def _roomy_layer_class() -> type:
    """The DynamicLayer of :func:`_make_room` (defined on first use: transformers is optional)."""
    DynamicLayer: Any = optional_import("transformers.cache_utils", "eval").DynamicLayer

    class RoomyLayer(DynamicLayer):
        """``keys`` and ``values`` are views of the start of buffers with room for more positions."""

        def __init__(self, room: int):
            super().__init__()
            self.room = room
            self.buffers: tuple[Any, Any] | None = None

        def update(self, key_states, value_states, *args, **kwargs):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            length, added = self.get_seq_length(), key_states.shape[-2]
            if not self._holds(length + added):  # no room yet (or a base method replaced the views)
                self._allocate(length + added + self.room, key_states, value_states)
            assert self.buffers is not None
            for buffer, states in zip(self.buffers, (key_states, value_states), strict=True):
                buffer[..., length : length + added, :] = states
            self._view(length + added)
            return self.keys, self.values

        def reorder_cache(self, beam_idx) -> None:
            if not self._holds(self.get_seq_length()):
                return super().reorder_cache(beam_idx)
            assert self.buffers is not None
            index = beam_idx.to(self.buffers[0].device)
            self.buffers = (self.buffers[0].index_select(0, index), self.buffers[1].index_select(0, index))
            self._view(self.get_seq_length())

        def _holds(self, length: int) -> bool:
            """Whether ``keys`` is still the start of the buffers, and they hold ``length`` positions."""
            return (
                self.buffers is not None
                and self.buffers[0].shape[-2] >= length
                and self.keys.shape[0] == self.buffers[0].shape[0]
                and self.keys.data_ptr() == self.buffers[0].data_ptr()
                and self.values.data_ptr() == self.buffers[1].data_ptr()
            )

        def _allocate(self, capacity: int, key_states, value_states) -> None:
            """Buffers of ``capacity`` positions shaped like the new states, holding what is cached."""
            length = self.get_seq_length()
            buffers = []
            for cached, states in ((self.keys, key_states), (self.values, value_states)):
                buffer = states.new_empty((*states.shape[:-2], capacity, states.shape[-1]))
                if length:
                    buffer[..., :length, :] = cached
                buffers.append(buffer)
            self.buffers = (buffers[0], buffers[1])

        def _view(self, length: int) -> None:
            assert self.buffers is not None
            self.keys = self.buffers[0][..., :length, :]
            self.values = self.buffers[1][..., :length, :]

    return RoomyLayer


def _truncated_copy(cache: Any, length: int) -> Any:
    """An independent copy of a one-row plain cache holding its first ``length`` positions."""
    import copy

    clone = copy.deepcopy(cache)
    for layer in clone.layers:
        layer.keys = layer.keys[..., :length, :]
        layer.values = layer.values[..., :length, :]
    return clone


def _resolve_dtype(name: str, cuda: bool):
    torch = optional_import("torch", "eval")

    if name == "auto":
        if cuda:
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
    except KeyError:
        raise DiagnosticError(
            [Diagnostic("EV053", f"unknown --dtype {name!r}", hint="use auto, float32, bfloat16 or float16")]
        ) from None
