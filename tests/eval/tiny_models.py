"""The tiny random Llama the evaluator tests and benchmarks run on, and the texts its tokenizer learns.

Apart from the fixtures (conftest.py) so that scripts run without pytest: `benchmarks/gpu_check.py` runs
on a GPU machine that has only torch, transformers and accelerate (and the wheels it carries).
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def make_tiny_model(
    folder: Path,
    texts: list[str],
    *,
    seed: int = 0,
    vocab_size: int = 2000,
    hidden_size: int = 32,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
) -> Path:
    """A random 2-layer Llama and a BPE tokenizer trained on ``texts``, saved like any Hub model."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        # A wide init makes the random model's answer depend on the prompt (with the usual 0.02 it answers
        # the same option everywhere); see ``tiny_model`` for how the seed is chosen.
        initializer_range=1.0,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder)
    return folder


def corpus(rows: list[dict]) -> list[str]:
    from jbcompile.evaluate.promptfiles import bundled_prompt_files

    texts = [p.read_text(encoding="utf-8") for p in bundled_prompt_files()]
    for row in rows:
        texts.append("\n".join([row["context"], row["question"], row["ans0"], row["ans1"], row["ans2"]]))
        texts.append(row["rationale"])
    return texts
