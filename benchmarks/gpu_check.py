"""The evaluator on a GPU, in one command: speed, memory, out-of-memory halving, bf16 against fp32.

    python benchmarks/gpu_check.py [--size 8b|1b|tiny] [--batch-sizes 8,32,64] [--out gpu_check.json]

Meant for a CUDA machine without network on which only torch, transformers and accelerate are installed
(jbcompile's own dependencies travel with the working tree). It builds the bundled `lite` config, trains a
small BPE tokenizer on its text and initialises a random Llama of a real size (`8b`: Llama-3-8B's
shape, bf16; `1b`: Llama-3.2-1B's), saves it like any Hub model and evaluates the 3-shot `basic` prompts
through jbcompile's transformers backend (loaded with `device_map="auto"`, as `jbcompile eval` does):

- rows/s of `logprob` and of `generate` (greedy, 16 new tokens, stop at "###") at each batch size, and
  the peak GPU memory of each run;
- the out-of-memory halving: `logprob` with one batch of every prompt, which must come back with a
  halved batch size and the same answers;
- bf16 against fp32: the share of rows whose `logprob` argmax is the same (the goal: at least 99%);
- where `device_map="auto"` put the model.

Without a GPU it says so and runs the same path on the tests' tiny model, on CPU (bf16 there too), with
the out-of-memory error simulated above a batch of 4 rows: a test runs it so. Figures only, printed and
written to ``--out`` as JSON; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "eval"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Shapes of real models (hidden, intermediate, layers, attention heads, key/value heads); the vocabulary is
# the trained tokenizer's, so the embeddings are smaller than the real model's.
SIZES = {
    "8b": (4096, 14336, 32, 32, 8),  # Llama-3-8B
    "1b": (2048, 8192, 16, 32, 8),  # Llama-3.2-1B
}
SIMULATED_OOM_ROWS = 4  # on CPU, a forward pass of more rows than this raises out-of-memory
STOP = ("###",)


def random_model(folder: Path, texts: list[str], size: str, cuda: bool) -> Path:
    """A random Llama and its tokenizer, saved with ``save_pretrained``: the tests' tiny one, or one of a
    real size (initialised in bf16 on the GPU when there is one)."""
    import torch
    from tiny_models import make_tiny_model
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    make_tiny_model(folder, texts, seed=3, vocab_size=2000 if size == "tiny" else 8000)
    if size == "tiny":
        return folder
    hidden, intermediate, layers, heads, kv_heads = SIZES[size]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=8192,
        rope_theta=500000.0,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda" if cuda else "cpu"):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(default)
    model.save_pretrained(folder)
    del model
    return folder


def peak_memory_gib(cuda: bool) -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None


def reset_peak(cuda: bool) -> None:
    import torch

    if cuda:
        torch.cuda.reset_peak_memory_stats()


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["8b", "1b", "tiny"], help="default: 8b on a GPU, tiny without")
    parser.add_argument("--batch-sizes", default="8,32,64")
    parser.add_argument(
        "--rows", type=int, default=0, help="prompts to evaluate, spread over the config (0 = all of it)"
    )
    parser.add_argument("--generate-rows", type=int, default=256, help="prompts to generate for")
    parser.add_argument("--dataset", type=Path, help="a jbcompile build folder (default: build sources/)")
    parser.add_argument("--model", type=Path, help="a saved model folder (default: a random one)")
    parser.add_argument("--out", type=Path, help="where to write the figures as JSON")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    try:
        return _check(args, work)
    finally:  # the 8b model takes about 16 GB of disk
        shutil.rmtree(work, ignore_errors=True)


def _check(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The checks of :func:`main`, in ``work`` (the build and the model)."""
    import torch
    from jbcompile.build import compile_project, write_build
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend, plan_batches
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.promptfiles import load_prompt_template
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    cuda = torch.cuda.is_available()
    size = args.size or ("8b" if cuda else "tiny")
    report: dict[str, Any] = {"gpu": torch.cuda.get_device_name(0) if cuda else None, "size": size}
    if cuda:
        print(f"GPU: {report['gpu']}; model size {size}")
    else:
        print(f"no GPU found: running the CPU path on the {size} model (these are not GPU figures)")
    build = args.dataset
    if build is None:
        from jbcompile.project import load_project

        build = work / "build"
        write_build(compile_project(load_project(ROOT / "sources"), checks=False), build)
    rows = load_rows(str(build), "lite").rows
    if args.rows:  # a seeded sample over the whole config: every category keeps rows to draw shots from
        import random

        rows = [rows[i] for i in sorted(random.Random(0).sample(range(len(rows)), min(args.rows, len(rows))))]
    started = time.perf_counter()
    if args.model is not None:
        model_dir = args.model
    else:
        from tiny_models import corpus

        model_dir = random_model(work / "model", corpus(rows), size, cuda)
    report["model_build_s"] = round(time.perf_counter() - started, 1)
    items = BBQ.prepare(rows, EvalOptions(shots=3), load_prompt_template("bbq", "basic")).items
    texts, keys = [i.text for i in items], [i.prefix_keys for i in items]

    def load(dtype: str, batch_size: int) -> TransformersBackend:
        start = time.perf_counter()
        backend = TransformersBackend(BackendConfig(model=str(model_dir), batch_size=batch_size, dtype=dtype))
        report.setdefault("load_s", {})[backend.dtype] = round(time.perf_counter() - start, 1)
        return backend

    sizes = [int(size) for size in args.batch_sizes.split(",")]
    backend = load("auto", sizes[0])
    report["dtype"] = backend.dtype
    report["device_map"] = getattr(backend.model, "hf_device_map", None) if cuda else "not used (no GPU)"
    encoded = backend.encode(texts, chat=False)
    labels = backend.label_token_ids(["0", "1", "2"], texts[0], chat=False)
    report["prompts"] = len(items)
    report["median_prompt_tokens"] = statistics.median(len(e) for e in encoded)

    def picks(backend: TransformersBackend, batch_size: int) -> list[int]:
        """logprob argmax per prompt, in prompt order."""
        order = [i for b in plan_batches([len(e) for e in encoded], keys, batch_size) for i in b]
        scores = backend.score([encoded[i] for i in order], [keys[i] for i in order], labels)
        found = [0] * len(order)
        for i, row in zip(order, scores, strict=True):
            found[i] = max(range(3), key=row.__getitem__)
        return found

    generate_idx = list(range(min(len(items), args.generate_rows)))
    speed: list[dict[str, Any]] = []
    reference: list[int] = []
    for batch_size in sizes:
        backend.batch_size = batch_size
        reset_peak(cuda)
        start = time.perf_counter()
        answers = picks(backend, batch_size)
        logprob_s = time.perf_counter() - start
        reference = reference or answers
        logprob_peak = peak_memory_gib(cuda)
        reset_peak(cuda)
        subset = [keys[i] for i in generate_idx]
        planned = plan_batches([len(encoded[i]) for i in generate_idx], subset, batch_size)
        order = [generate_idx[i] for b in planned for i in b]
        start = time.perf_counter()
        backend.generate([encoded[i] for i in order], [keys[i] for i in order], 16, STOP)
        generate_s = time.perf_counter() - start
        speed.append(
            {
                "batch_size": batch_size,
                "logprob_rows_per_s": round(len(items) / logprob_s, 1),
                "logprob_peak_gib": logprob_peak,
                "generate_rows_per_s": round(len(generate_idx) / generate_s, 1),
                "generate_peak_gib": peak_memory_gib(cuda),
                "same_answers_as_first_batch_size": answers == reference,
            }
        )
        print(f"batch {batch_size:4d}: logprob {speed[-1]['logprob_rows_per_s']:8.1f} rows/s "
              f"(peak {logprob_peak} GiB), generate {speed[-1]['generate_rows_per_s']:8.1f} rows/s "
              f"(peak {speed[-1]['generate_peak_gib']} GiB)")  # fmt: skip
    report["speed"] = speed
    report["answer_shares"] = [round(reference.count(option) / len(reference), 3) for option in range(3)]

    # out-of-memory halving: one batch of every prompt (on CPU the error is simulated)
    forward = backend.model.forward
    if not cuda:

        def limited(*args: Any, **kwargs: Any) -> Any:
            if kwargs["input_ids"].shape[0] > SIMULATED_OOM_ROWS:
                raise torch.OutOfMemoryError("out of memory (simulated on CPU)")
            return forward(*args, **kwargs)

        backend.model.forward = limited
    backend.batch_size = len(items)
    try:
        halved = picks(backend, len(items))
    finally:
        backend.model.forward = forward
    report["oom"] = {
        "simulated": not cuda,
        "asked_batch_size": len(items),
        "batch_size_after": backend.batch_size,
        "halved": backend.batch_size < len(items),
        "same_answers": halved == reference,
    }
    print(f"out of memory at batch {len(items)}{' (simulated)' if not cuda else ''}: batch size now "
          f"{backend.batch_size}, same answers: {halved == reference}")  # fmt: skip

    # bf16 against fp32 (the loaded dtype against the other one)
    first = backend.dtype
    del backend
    import gc

    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    other = load("float32" if first != "float32" else "bfloat16", sizes[0])
    answers = picks(other, sizes[0])
    agree = sum(a == b for a, b in zip(answers, reference, strict=True)) / len(reference)
    report["dtype_agreement"] = {"dtypes": [first, other.dtype], "same_argmax_share": round(agree, 4)}
    print(f"{first} against {other.dtype}: same argmax on {agree:.2%} of {len(reference)} rows (goal ≥ 99%)")
    print(f"device_map: {report['device_map']}")
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
