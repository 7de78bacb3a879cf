"""Throughput of the reference evaluator, side by side with lm-evaluation-harness on the same prompts.

    python benchmarks/bench_eval.py [--repeats 5] [--batch-size 16] [--generate-rows 96]

Builds the bundled benchmark (sources/) with jbcompile, renders the 3-shot `basic` prompts of its
`lite` config (2,985 prompts once the shots are drawn), and builds the tests' tiny random Llama
offline. Then, for the same prompts on the same model, it times:

- ours, `logprob`: one forward pass per prompt, shared prefixes reused (and, for the speed-up, not),
  with the backend's attention as `eval` runs it (on CPU, grouped key/value heads passed to torch as
  they are, and the last layer attending for the last position only; see the transformers backend);
- ours, `generate`: greedy, 16 new tokens, stop at "###", and (as `jbcompile eval` does) a row stops as
  soon as its answer is settled (the kind's `answer_is_final`: the first line has stated one);
- lm-eval's HF backend (`lm_eval.models.huggingface.HFLM`): `loglikelihood` of each option label after
  the prompt, and `generate_until` with the same stop string and token limit — if lm-eval is importable
  (`pip install lm-eval`; it is not a dependency of jbcompile).

Each repetition runs ours and lm-eval one after the other, so a slow spell of the machine hits both. It
prints median rows/s (model loading excluded), the median of the per-round ratios, and whether the argmax
answers are identical and, for `generate`, whether the answers read from the replies (by the kind's own
reader, as `eval` reads them) are identical and each of our replies is the start of lm-eval's. Figures
only; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "eval"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def interleaved(functions: dict[str, Callable[[], object]], repeats: int) -> tuple[dict, dict]:
    """Wall times of ``repeats`` rounds in which every function runs once, in turn, after one warm-up call
    each: a slower or faster spell of the machine then hits all of them alike, so per-round ratios hold.
    """
    values = {name: function() for name, function in functions.items()}
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            values[name] = function()
            times[name].append(time.perf_counter() - start)
    return times, values


def ratio(times: dict[str, list[float]], slower: str, faster: str) -> float:
    """Median over rounds of how many times faster ``faster`` was than ``slower`` in the same round."""
    return statistics.median(a / b for a, b in zip(times[slower], times[faster], strict=True))


def rate(rows: int, seconds: list[float]) -> float:
    return rows / statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--config", default="lite", help="config of the bundled benchmark (lite: 3,000 rows)")
    parser.add_argument("--shots", type=int, default=3)
    parser.add_argument("--generate-rows", type=int, default=0, help="0 = every prompt")
    parser.add_argument("--hidden-size", type=int, default=32, help="32 = the tests' tiny model")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--only", choices=["logprob", "generate"], help="time one scoring only")
    parser.add_argument("--rows", type=int, default=0, help="evaluate the first N prompts (0 = all)")
    args = parser.parse_args()

    from jbcompile.build import compile_project, write_build
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend, plan_batches
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.promptfiles import load_prompt_template
    from jbcompile.project import load_project
    from tiny_models import corpus, make_tiny_model
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    work = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    write_build(compile_project(load_project(ROOT / "sources"), checks=False), work / "build")
    rows = load_rows(str(work / "build"), args.config).rows
    model_dir = make_tiny_model(
        work / "model", corpus(rows), seed=3, hidden_size=args.hidden_size, layers=args.layers
    )
    items = BBQ.prepare(rows, EvalOptions(shots=args.shots), load_prompt_template("bbq", "basic")).items
    items = items[: args.rows or len(items)]
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

    gen_idx = order[: args.generate_rows or len(order)]
    gen_set = sorted(gen_idx)

    options = EvalOptions(shots=args.shots)
    settled = BBQ.answer_is_final(options)

    def generate_all(backend: TransformersBackend) -> list[str]:
        """Generations in prompt order, cut at the stop string as lm-eval returns them."""
        outputs = backend.generate(
            [encoded[i] for i in gen_idx], [keys[i] for i in gen_idx], 16, ("###",), answer_is_final=settled
        )
        by_index = dict(zip(gen_idx, outputs, strict=True))
        return [by_index[i].split("###")[0] for i in gen_set]

    def answers(replies: list[str]) -> list[int | None]:
        return [BBQ.read_answer(r, items[i], {}, options).pred for i, r in zip(gen_set, replies, strict=True)]

    runs: dict[str, dict[str, Callable[[], object]]] = {
        "logprob": {"reuse": lambda: score_all(reuse), "whole": lambda: score_all(plain)},
        "generate": {"reuse": lambda: generate_all(reuse), "whole": lambda: generate_all(plain)},
    }
    rows = {"logprob": len(items), "generate": len(gen_idx)}
    try:
        from lm_eval.api.instance import Instance
        from lm_eval.models.huggingface import HFLM
    except ImportError as error:
        print(f"lm-eval is not importable here ({error}); only our figures are shown. "
              "Install it (pip install lm-eval) in a separate environment to compare.")  # fmt: skip
    else:
        lm = HFLM(pretrained=str(model_dir), batch_size=args.batch_size, device="cpu", dtype="float32")
        requests = [
            Instance(request_type="loglikelihood", doc={}, arguments=(text, label), idx=j)
            for text in texts
            for j, label in enumerate(["0", "1", "2"])
        ]
        gen_requests = [
            Instance(
                request_type="generate_until",
                doc={},
                arguments=(texts[i], {"until": ["###"], "max_gen_toks": 16, "do_sample": False}),
                idx=0,
            )
            for i in gen_set
        ]

        def lm_picks() -> list[int]:
            result = lm.loglikelihood(requests, disable_tqdm=True)
            return [max(range(3), key=lambda j, i=i: result[3 * i + j][0]) for i in range(len(texts))]

        runs["logprob"]["lm-eval"] = lm_picks
        runs["generate"]["lm-eval"] = lambda: list(lm.generate_until(gen_requests, disable_tqdm=True))

    names = {"reuse": "ours, prefix reuse ", "whole": "ours, whole prompts", "lm-eval": "lm-eval            "}
    for scoring, functions in runs.items():
        if args.only and scoring != args.only:
            continue
        times, values = interleaved(functions, args.repeats)
        print(f"{scoring} ({rows[scoring]} rows; the runs alternate in each of {args.repeats} rounds)")
        for key, seconds in times.items():
            print(f"  {names[key]}: {rate(rows[scoring], seconds):8.1f} rows/s")
        print(f"  prefix-reuse speed-up: {ratio(times, 'whole', 'reuse'):.2f}x; "
              f"same answers with and without reuse: {values['reuse'] == values['whole']}")  # fmt: skip
        if "lm-eval" in times:
            theirs, ours = values["lm-eval"], values["reuse"]
            if scoring == "generate":
                prefixes = sum(b.startswith(a) for a, b in zip(ours, theirs, strict=True))
                print(f"  our replies that are the start of lm-eval's: {prefixes}/{rows[scoring]}")
                theirs, ours = answers(theirs), answers(ours)
            same = sum(a == b for a, b in zip(theirs, ours, strict=True))
            print(f"  ours/lm-eval: {ratio(times, 'lm-eval', 'reuse'):.2f}x (median of per-round ratios); "
                  f"identical {'argmax answers' if scoring == 'logprob' else 'answers read'}: "
                  f"{same}/{rows[scoring]}")  # fmt: skip


if __name__ == "__main__":
    main()
