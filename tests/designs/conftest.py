"""Fixtures of the designs' tests: a tiny benchmark of sobaco and jubaku templates (``fixtures/``), as a
writable copy of its sources and built, and a tiny random model whose tokenizer knows its prompts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

KINDS_SOURCES = Path(__file__).parent / "fixtures" / "kinds_sources"


@pytest.fixture
def kinds_sources(tmp_path: Path) -> Path:
    """sobaco: a pair without an expression slot, one with 2 and one with 3 alternatives, one dummy;
    jubaku: two cases."""
    target = tmp_path / "sources"
    shutil.copytree(KINDS_SOURCES, target)
    return target


@pytest.fixture(scope="session")
def kinds_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny benchmark compiled into a build folder (configs sobaco, sobaco_dummy, jubaku)."""
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    out = tmp_path_factory.mktemp("kinds-build") / "build"
    write_build(compile_project(load_project(KINDS_SOURCES), checks=False), out)
    return out


@pytest.fixture(scope="session")
def kinds_model(tmp_path_factory: pytest.TempPathFactory, kinds_build: Path) -> Path:
    """A tiny random Llama whose tokenizer was trained on the sobaco and jubaku prompts and rows."""
    pytest.importorskip("transformers")
    from jbcompile.evaluate.dataset import load_rows
    from jbcompile.evaluate.promptfiles import bundled_prompt_files
    from transformers.utils import logging as hf_logging

    from tests.eval.tiny_models import make_tiny_model

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    texts = [p.read_text(encoding="utf-8") for p in bundled_prompt_files()]
    for config in ("sobaco", "jubaku"):
        for row in load_rows(str(kinds_build), config).rows:
            texts.append(
                "\n".join(
                    str(row[k]) for k in ("context", "question", "instruction", "ans0", "ans1") if k in row
                )
            )
    return make_tiny_model(tmp_path_factory.mktemp("kinds-model"), texts, vocab_size=1500)
