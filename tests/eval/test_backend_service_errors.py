"""A foreign library's exception never reaches the user raw: an unexpected error inside datasets, the
openai or anthropic client, vLLM or transformers becomes a coded diagnostic naming the library, what
was being done, and its message with the key scrubbed — through the command line, with no traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from jbcompile.cli import app
from jbcompile.diagnostics import Diagnostic, DiagnosticError
from jbcompile.services import DEEPL, service_errors
from typer.testing import CliRunner

KEY = "sk-service-errors-0123456789"
UNEXPECTED = [TypeError, KeyError, AttributeError, ValueError]


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def raising(error_type: type[Exception]):  # type: ignore[no-untyped-def]
    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise error_type(f"inside the library, with the key {KEY}")

    return fail


def eval_cli(build: Path, out: Path, *extra: str, model: str = "fake-model"):  # type: ignore[no-untyped-def]
    args = ["eval", "-m", model, "-d", str(build), "--out", str(out), "--quiet", "--bootstrap", "10"]
    return CliRunner().invoke(app, [*args, *extra])


def assert_named(result, code: str, service: str, doing: str, error_type: type[Exception]) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    text = " ".join(result.output.split())
    assert f"{code} {service} failed while {doing} ({error_type.__name__}:" in text, text
    assert "Traceback" not in result.output and KEY not in result.output and KEY[3:12] not in result.output


def test_the_wrapper_passes_known_diagnostics_and_allowed_exceptions_and_scrubs() -> None:
    class Ours(Exception):
        pass

    with pytest.raises(Ours), service_errors(DEEPL, "x", allow=(Ours,)):
        raise Ours
    mine = DiagnosticError([Diagnostic("EV006", "no rows")])
    with pytest.raises(DiagnosticError) as passed, service_errors(DEEPL, "x"):
        raise mine
    assert passed.value is mine
    with (
        pytest.raises(DiagnosticError) as known,
        service_errors(
            DEEPL,
            "x",
            known=lambda error: Diagnostic("TR001", f"rejected {error}"),
            secrets=("hunter2-secret",),
        ),
    ):
        raise RuntimeError("hunter2-secret")
    assert known.value.diagnostics[0].message == "rejected ***"
    with pytest.raises(MemoryError), service_errors(DEEPL, "x"):
        raise MemoryError


@pytest.mark.parametrize("error_type", UNEXPECTED)
def test_datasets_failing_inside_is_ev005(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error_type: type[Exception]
) -> None:
    import datasets

    foreign = tmp_path / "foreign"
    shutil.copytree(build_dir, foreign)
    (foreign / "manifest.json").unlink()  # not a jbcompile build: datasets reads it
    monkeypatch.setattr(datasets, "load_dataset", raising(error_type))
    result = eval_cli(foreign, tmp_path / "run")
    if error_type is ValueError:  # what datasets raises for a config it lacks
        assert result.exit_code == 2 and "EV004" in result.output and KEY not in result.output
    else:
        assert_named(result, "EV005", "the datasets library", "loading the dataset", error_type)


@pytest.mark.parametrize("error_type", UNEXPECTED)
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_client_failing_inside_is_ev305_and_keeps_nothing_it_did_not_get(
    build_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    backend: str,
    error_type: type[Exception],
) -> None:
    import anthropic.resources
    import openai.resources

    target = openai.resources.Completions if backend == "openai" else anthropic.resources.Messages
    monkeypatch.setattr(target, "create", raising(error_type))
    options = ["--backend", backend, "--base-url", "http://127.0.0.1:9/v1", "--scoring", "generate"]
    result = eval_cli(build_dir, tmp_path / "run", *options, "--max-attempts", "1")
    assert_named(result, "EV305", f"the {backend} client", "sending a request", error_type)
    assert "nothing was written" in result.output and not (tmp_path / "run").exists()


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_client_that_cannot_be_created_is_a_diagnostic(
    build_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    import anthropic
    import openai

    client = openai.OpenAI if backend == "openai" else anthropic.Anthropic
    monkeypatch.setattr(client, "__init__", raising(AttributeError))
    options = ["--backend", backend, "--base-url", "http://127.0.0.1:9/v1", "--scoring", "generate"]
    result = eval_cli(build_dir, tmp_path / "run", *options)
    assert_named(result, "EV305", f"the {backend} client", "creating the client", AttributeError)


@pytest.mark.parametrize("error_type", UNEXPECTED)
def test_transformers_failing_while_running_is_ev310_and_says_what_was_kept(
    build_dir: Path,
    tiny_model: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error_type: type[Exception],
) -> None:
    from jbcompile.evaluate.backends.transformers import TransformersBackend

    calls = {"n": 0}
    real = TransformersBackend.score

    def second_batch_fails(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] > 1:
            raise error_type(f"inside the model, with the key {KEY}")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TransformersBackend, "score", second_batch_fails)
    out = tmp_path / "run"
    result = eval_cli(build_dir, out, "--batch-size", "4", model=str(tiny_model))
    assert_named(result, "EV310", "transformers", "running the model", error_type)
    kept = len((out / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
    assert 1 <= kept <= 4 and f"predictions.jsonl ({kept} predictions, {kept} new)" in " ".join(
        result.output.split()
    )


def test_vllm_failing_while_running_is_ev310(
    build_dir: Path, tiny_model_hd64: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vllm = pytest.importorskip("vllm", reason="the vllm extra is not installed")

    class Engine:  # stands in for vllm.LLM: it starts, then fails inside generate as a library would
        def __init__(self, **kwargs):  # type: ignore[no-untyped-def]
            pass

        def generate(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise KeyError("request_id")

    monkeypatch.setattr(vllm, "LLM", Engine)
    # heads of dimension 64: the CPU kernels take it, so the run gets past EV311 to the engine
    result = eval_cli(build_dir, tmp_path / "run", "--backend", "vllm", model=str(tiny_model_hd64))
    assert_named(result, "EV310", "vLLM", "running the model", KeyError)
