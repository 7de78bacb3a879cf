"""Fixtures of the evaluator tests: a small compiled benchmark and a tiny random Llama, both offline.

The benchmark is compiled by jbcompile itself from ``fixtures/sources`` (three categories, one template
each). The model is a randomly initialized Llama with a byte-level BPE tokenizer trained on the rows,
saved to a temp folder and loaded through ``from_pretrained`` like any model. Nothing is downloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.eval.tiny_models import corpus, make_tiny_model

FIXTURE_SOURCES = Path(__file__).parent / "fixtures" / "sources"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    out = tmp_path_factory.mktemp("eval-build") / "build"
    # lint rules are not what these tests are about: compile without them, so rule changes cannot break us
    write_build(compile_project(load_project(FIXTURE_SOURCES), checks=False), out)
    return out


@pytest.fixture
def api():  # type: ignore[no-untyped-def]
    """The fake OpenAI/Anthropic server (tests/eval/fake_api.py) on loopback, for one test."""
    from tests.eval.fake_api import FakeAPI

    with FakeAPI() as server:
        yield server


@pytest.fixture(scope="session")
def lite_rows(build_dir: Path) -> list[dict]:
    from jbcompile.evaluate.dataset import load_rows

    return load_rows(str(build_dir), "lite").rows


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, lite_rows: list[dict]) -> Path:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    folder = tmp_path_factory.mktemp("tiny-model")
    for seed in range(10):
        make_tiny_model(folder, corpus(lite_rows), seed=seed)
        if _answers_vary(folder, lite_rows):
            return folder
    raise AssertionError("no seed gave a tiny model whose answers depend on the prompt")


@pytest.fixture(scope="session")
def tiny_model_hd64(tmp_path_factory: pytest.TempPathFactory, lite_rows: list[dict]) -> Path:
    """The tiny model with attention heads of dimension 64, the smallest vLLM's CPU kernels accept."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    folder = tmp_path_factory.mktemp("tiny-model-hd64")
    for seed in range(40):  # both tests below hold for roughly one seed in ten
        make_tiny_model(folder, corpus(lite_rows), seed=seed, hidden_size=128, heads=2, kv_heads=1)
        _favour_labels(folder)
        if _answers_vary(folder, lite_rows) and _generations_vary(folder, lite_rows):
            return folder
    raise AssertionError("no seed gave a head-dim-64 tiny model whose answers depend on the prompt")


def _favour_labels(folder: Path, factor: float = 8.0) -> None:
    """Scale the output rows of the option labels, so that greedy generation often starts with one of
    them: a random model otherwise writes no option number, and every parsed answer would be out-of-choice
    (a parity test of generation would then compare nothing). The reader takes a number only where it
    opens a line, as a reply gives it, not one lost in the noise, hence the strong factor."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    labels = [tokenizer.convert_tokens_to_ids(label) for label in ("0", "1", "2")]
    with torch.no_grad():
        model.lm_head.weight[labels] *= factor
    model.save_pretrained(folder)


def _answers_vary(folder: Path, rows: list[dict]) -> bool:
    """Does the model pick every option somewhere, with no near-tie that float noise could flip?

    A random model that always answers one option would leave the tests of answer order, argmax
    agreement and data parallelism toothless.
    """
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.promptfiles import load_prompt_template

    items = BBQ.prepare(rows, EvalOptions(shots=3), load_prompt_template("bbq", "basic")).items
    backend = TransformersBackend(BackendConfig(model=str(folder), prefix_cache=False))
    encoded = backend.encode([item.text for item in items], chat=False)
    labels = backend.label_token_ids(["0", "1", "2"], items[0].text, chat=False)
    scores = backend.score(encoded, [item.prefix_keys for item in items], labels)
    picks = {max(range(3), key=row.__getitem__) for row in scores}
    gaps = [sorted(row)[-1] - sorted(row)[-2] for row in scores]
    return picks == {0, 1, 2} and min(gaps) > 0.05


def _generations_vary(folder: Path, rows: list[dict]) -> bool:
    """Does greedy generation write every option somewhere? (The parity tests of generation compare
    parsed answers: a model whose replies never name one option would leave part of them untested.)"""
    from jbcompile.designs.bbq.evaluate import BBQ
    from jbcompile.evaluate.backends import BackendConfig, TransformersBackend
    from jbcompile.evaluate.kind import EvalOptions
    from jbcompile.evaluate.promptfiles import load_prompt_template

    options = EvalOptions(shots=3, scoring="generate")
    prepared = BBQ.prepare(rows, options, load_prompt_template("bbq", "basic"))
    backend = TransformersBackend(BackendConfig(model=str(folder), prefix_cache=False))
    encoded = backend.encode([item.text for item in prepared.items], chat=False)
    replies = backend.generate(encoded, [item.prefix_keys for item in prepared.items], 16, ("###",))
    picks = {
        BBQ.read_answer(reply, item, prepared.records[item.example_id], options).pred
        for reply, item in zip(replies, prepared.items, strict=True)
    }
    return picks >= {0, 1, 2}
