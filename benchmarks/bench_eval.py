"""Throughput of the reference evaluator, side by side with lm-evaluation-harness on the same prompts.

    python benchmarks/bench_eval.py [--repeats 5] [--batch-size 16] [--generate-rows 96]

Builds the evaluator-test benchmark (tests/eval/fixtures/sources: three categories) with jbcompile,
renders its 3-shot `basic` prompts, and builds the tests' tiny random Llama offline. Then, for the same
prompts on the same model, it times:

- ours, `logprob`: one forward pass per prompt, shared prefixes reused (and, for the speed-up, not);
- ours, `generate`: greedy, 16 new tokens, stop at "###";
- lm-eval's HF backend (`lm_eval.models.huggingface.HFLM`): `loglikelihood` of each option label after
  the prompt, and `generate_until` with the same stop string and token limit — if lm-eval is importable
  (`pip install lm-eval`; it is not a dependency of jbcompile).

It prints the median rows/s of several repetitions (model loading excluded), the ratios, and whether the
argmax answers (and generated texts) are identical. Figures only; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "eval"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def median_time(function, repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls after one warm-up call (first-call costs are not throughput)."""
    value = function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--config", default="full", help="config of the fixture benchmark (full: 576 rows)")
    parser.add_argument("--shots", type=int, default=3)
    parser.add_argument("--generate-rows", type=int, default=96)
    parser.add_argument("--hidden-size", type=int, default=32, help="32 = the tests' tiny model")
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()

    from conftest import FIXTURE_SOURCES, corpus, make_tiny_model
    from jbcompile.build import compile_project, write_build
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend, plan_batches
    from jbcompile.evaluate.bbq import BBQ
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.prompting import load_prompt_template
    from jbcompile.project import load_project
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    work = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    write_build(compile_project(load_project(FIXTURE_SOURCES), checks=False), work / "build")
    rows = load_rows(str(work / "build"), args.config).rows
    model_dir = make_tiny_model(
        work / "model", corpus(rows), seed=3, hidden_size=args.hidden_size, layers=args.layers
    )
    items = BBQ.prepare(rows, EvalOptions(shots=args.shots), load_prompt_template("bbq", "basic")).items
    texts = [item.text for item in items]
    keys = [item.prefix_keys for item in items]
    print(f"random Llama: hidden {args.hidden_size}, {args.layers} layers; "
          f"{len(items)} prompts ({args.config} config, {args.shots} shots), batch size {args.batch_size}, "
          f"{args.repeats} repetitions, torch threads {__import__('torch').get_num_threads()}")  # fmt: skip

    def ours(prefix_cache: bool) -> TransformersBackend:
        return TransformersBackend(
            BackendConfig(model=str(model_dir), batch_size=args.batch_size, prefix_cache=prefix_cache)
        )

    reuse, plain = ours(True), ours(False)
    encoded = reuse.encode(texts, chat=False)
    print(f"prompt length: median {statistics.median(len(e) for e in encoded):.0f} tokens")
    labels = reuse.label_token_ids(["0", "1", "2"], texts[0], chat=False)
    order = [i for b in plan_batches([len(e) for e in encoded], keys, args.batch_size) for i in b]

    def score_all(backend: TransformersBackend) -> list[int]:
        scores = backend.score([encoded[i] for i in order], [keys[i] for i in order], labels)
        picks = [0] * len(order)
        for i, row in zip(order, scores, strict=True):
            picks[i] = max(range(3), key=row.__getitem__)
        return picks

    t_reuse, picks_reuse = median_time(lambda: score_all(reuse), args.repeats)
    t_plain, picks_plain = median_time(lambda: score_all(plain), args.repeats)
    n = len(items)
    print(f"ours logprob, prefix reuse : {n / t_reuse:8.1f} rows/s")
    print(f"ours logprob, whole prompts: {n / t_plain:8.1f} rows/s   reuse speed-up {t_plain / t_reuse:.2f}x")
    print(f"  same argmax with and without reuse: {picks_reuse == picks_plain}")

    gen_idx = order[: args.generate_rows]
    gen_set = sorted(gen_idx)

    def generate_all(backend: TransformersBackend) -> dict[int, str]:
        outputs = backend.generate([encoded[i] for i in gen_idx], [keys[i] for i in gen_idx], 16, ("###",))
        return dict(zip(gen_idx, outputs, strict=True))

    g_reuse, out_reuse = median_time(lambda: generate_all(reuse), args.repeats)
    g_plain, out_plain = median_time(lambda: generate_all(plain), args.repeats)
    m = len(gen_idx)
    print(f"ours generate, prefix reuse : {m / g_reuse:8.1f} rows/s ({m} rows)")
    print(
        f"ours generate, whole prompts: {m / g_plain:8.1f} rows/s   reuse speed-up {g_plain / g_reuse:.2f}x"
    )
    print(f"  same generations with and without reuse: {out_reuse == out_plain}")

    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except ImportError as error:
        print(f"lm-eval is not importable here ({error}); only our figures are shown. "
              "Install it (pip install lm-eval) in a separate environment to compare.")  # fmt: skip
        return
    lm = HFLM(pretrained=str(model_dir), batch_size=args.batch_size, device="cpu", dtype="float32")
    requests = [
        Instance(request_type="loglikelihood", doc={}, arguments=(text, label), idx=j)
        for text in texts
        for j, label in enumerate(["0", "1", "2"])
    ]
    t_lm, result = median_time(lambda: lm.loglikelihood(requests, disable_tqdm=True), args.repeats)
    picks_lm = [max(range(3), key=lambda j, i=i: result[3 * i + j][0]) for i in range(n)]
    print(f"lm-eval loglikelihood       : {n / t_lm:8.1f} rows/s   ours/lm-eval {t_lm / t_reuse:.2f}x")
    print(f"  identical argmax answers: {picks_lm == picks_reuse} "
          f"({sum(a == b for a, b in zip(picks_lm, picks_reuse, strict=True))}/{n})")  # fmt: skip
    gen_requests = [
        Instance(
            request_type="generate_until",
            doc={},
            arguments=(texts[i], {"until": ["###"], "max_gen_toks": 16, "do_sample": False}),
            idx=0,
        )
        for i in gen_set
    ]
    g_lm, gen_lm = median_time(lambda: lm.generate_until(gen_requests, disable_tqdm=True), args.repeats)
    ours_cut = [out_reuse[i].split("###")[0] for i in gen_set]
    print(f"lm-eval generate_until      : {m / g_lm:8.1f} rows/s   ours/lm-eval {g_lm / g_reuse:.2f}x")
    print(f"  identical generations (cut at the stop string): {list(gen_lm) == ours_cut} "
          f"({sum(a == b for a, b in zip(gen_lm, ours_cut, strict=True))}/{m})")  # fmt: skip


if __name__ == "__main__":
    main()
