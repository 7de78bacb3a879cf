"""Inputs of the output-safety tests: sources with findings --fix rewrites, and predictions to score."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.checks.conftest import write_sources
from tests.helpers import compile_folder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# Texts --fix rewrites (a pronoun, half-width katakana, an ASCII question mark): three files to fix.
FIXABLE = [
    {"stereotype": "彼らは新しい機械の使い方を覚えられない"},
    {"words": {"WORD1": ["ｽﾏｰﾄﾌｫﾝ", "タブレット"]}},
    {"questions": {"negative": {"text": "設定に手間取っていたのは誰ですか?", "answer": "NAME2"}}},
]


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with a digest of its bytes (hidden ones too)."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def fixable_sources(tmp_path: Path) -> Path:
    return write_sources(tmp_path / "sources", {"templates": FIXABLE})


def write_predictions(path: Path, rows: list[dict], answer: int) -> Path:
    """Rows as BBQ's JSONL has them, with a ``prediction`` column: option ``answer`` everywhere."""
    ours = (
        "target_label",
        "unknown_label",
        "biased_label",
        "context_bias",
        "template_id",
        "fillers",
        "rationale",
    )
    lines = [
        json.dumps({**{k: v for k, v in r.items() if k not in ours}, "prediction": answer}) for r in rows
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def lite_rows() -> list[dict]:
    return compile_folder(FIXTURES / "mini_sources").configs["lite"].rows
