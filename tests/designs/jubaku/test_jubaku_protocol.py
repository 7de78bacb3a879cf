"""`--protocol jubaku` decodes and reads replies as the JUBAKU-v2 evaluation script does: at most 10 new
tokens, greedy, and the script's reading (the last lone A or B once think blocks are removed, else a
first line naming one of them only)."""

from __future__ import annotations

import pytest
from jbcompile.designs.jubaku.evaluate import SCRIPT_TOKENS, script_reading
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.protocols import get_protocol
from jbcompile.evaluate.registered import get_eval_kind

JUBAKU = get_eval_kind("jubaku")
UNDER = EvalOptions(protocol="jubaku", scoring="generate", shots=0)
DEFAULT = EvalOptions(scoring="generate", shots=0)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("A", 0),
        ("b", 1),  # either case
        ("B.", 1),
        ("**A**", 0),
        ("答えはBです", 1),  # no lone letter (kana around it): the first line names B only
        ("AではなくB", None),  # names both, neither alone: no answer (the default reader reads B)
        ("応答Aは偏見を含み、応答Bは中立です。", None),
        ("Both A and B", 1),  # the last lone letter
        ("<think>A です</think>B", 1),  # the think block is removed first
        ("回答：\nB", 1),  # a line ending in a full-width colon runs on into the next
        ("わかりません", None),
        ("", None),
    ],
)
def test_the_scripts_reading(reply: str, expected: int | None) -> None:
    assert script_reading(reply) == expected


def test_the_protocol_reads_and_decodes_as_the_script_and_only_under_it() -> None:
    from jbcompile.evaluate.prompting import PromptItem

    item = PromptItem("x", "prompt", ["応答1", "応答2"], ())
    assert JUBAKU.read_answer("AではなくB", item, {}, UNDER).pred is None
    assert JUBAKU.read_answer("AではなくB", item, {}, DEFAULT).pred == 1
    # the script reads the last lone letter: no early stop, and its 10 tokens
    assert JUBAKU.answer_is_final(UNDER) is None and JUBAKU.answer_is_final(DEFAULT) is not None
    assert JUBAKU.max_new_tokens(UNDER) == SCRIPT_TOKENS < JUBAKU.max_new_tokens(DEFAULT)
    protocol = get_protocol("jubaku")
    assert protocol is not None and protocol.temperature == 0.0 and "script" in protocol.reading


def test_predictions_not_read_under_the_protocol_are_not_the_papers() -> None:
    made = [{"example_id": "x", "protocol": None}, {"example_id": "y", "protocol": "jubaku"}]
    problem = JUBAKU.records_problem(made, "jubaku")
    assert problem is not None and problem.startswith("1 of 2 predictions")
    assert JUBAKU.records_problem(made[1:], "jubaku") is None
    assert JUBAKU.records_problem(made, None) is None


def test_the_protocols_decoding_reads_as_a_sentence_in_the_report() -> None:
    """The report prints `Decoding: <max_new_tokens>` and `replies read <reading>`: the limit names its unit
    (a bare "10" read as nothing) and matches the tokens the protocol decodes with."""
    protocol = get_protocol("jubaku")
    assert protocol is not None
    assert protocol.max_new_tokens.startswith(f"{SCRIPT_TOKENS} new tokens, greedy")
    assert protocol.reading.startswith("as the JUBAKU-v2 evaluation script reads them: ")
