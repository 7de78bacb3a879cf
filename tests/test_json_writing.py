"""JSON written by the tool is JSON: NaN and Infinity (which Python's json writes by default) are refused
by the one writer, ``jsonl.dumps``, and so by every file and document that goes through it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from jbcompile.emit.croissant import write_croissant
from jbcompile.emit.data import json_line
from jbcompile.emit.manifest import write_manifest
from jbcompile.jsonl import dumps, loads

NOT_JSON = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("number", NOT_JSON)
def test_the_writer_refuses_a_number_json_has_not(number: float) -> None:
    with pytest.raises(ValueError):
        dumps({"score": [1.0, {"deep": number}]})


def test_the_writer_keeps_text_and_reads_back() -> None:
    value = {"b": "日本語\u3000x", "a": [0.5, None, True], "n": -0.0}
    text = dumps(value, indent=2, sort_keys=True)
    assert "日本語" in text and "\\u" not in text.replace("\\u3000", "")
    assert loads(text) == value and text.index('"a"') < text.index('"b"')
    assert text == json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


@pytest.mark.parametrize("number", NOT_JSON)
def test_the_build_files_refuse_a_number_json_has_not(tmp_path: Path, number: float) -> None:
    """The manifest, the Croissant metadata and a JSON Lines row of a build: never a file a strict reader
    (JavaScript, jq, a database) would refuse whole."""
    with pytest.raises(ValueError):
        write_manifest({"rows": {"full": number}}, tmp_path / "manifest.json")
    with pytest.raises(ValueError):
        write_croissant({"recordSet": [{"count": number}]}, tmp_path / "croissant.json")
    with pytest.raises(ValueError):
        json_line({"example_id": "x", "score": number}, ["example_id", "score"])
    assert sorted(path.name for path in tmp_path.iterdir()) == []  # nothing half-written
