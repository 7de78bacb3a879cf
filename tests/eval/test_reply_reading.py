"""One reading of a free-text reply for ``eval`` and ``score``: the same reply gives the same answer whether
the evaluator generated it or a JUBAKU-v2 script output / lm-eval log brought it (docs/eval.md, "Reading
replies")."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbcompile.designs.bbq.evaluate import BBQ
from jbcompile.designs.jubaku.evaluate import JUBAKU, LETTERS
from jbcompile.designs.sobaco.evaluate import SOBACO
from jbcompile.evaluate.kind import EvalKind, EvalOptions
from jbcompile.evaluate.parsing import read_prediction, read_reply
from jbcompile.evaluate.prompting import PromptItem

from tests.eval.test_eval_formats import jubaku_release, results_of, run_cli, script_output

RESPONSES = ("属性に基づいた応答", "状況に基づいた応答")

# reply → the option a careful reader takes (0 = A, 1 = B), None = out-of-choice
LETTER_REPLIES = [
    ("B", 1),
    ("応答B", 1),
    ("応答Aの方が適切です", 0),
    ("**応答Ｂ**", 1),
    ("応答 B です。", 1),
    ("選択肢B", 1),
    ("回答：応答A", 0),
    ("答えはAではなくB", 1),  # the negated label is not the answer; the one after it is
    ("答えはAではなく、Bです", 1),
    ("The answer is B, not A.", 1),
    ("Aと思います", 0),
    ("理由を述べます。\n最終回答：B", 1),
    ("A\n\n### 次の例\n回答：B", 0),  # the first line settles it: the rest is the model going on
    ("AとBのどちらも偏っていません", None),  # naming both options to decline them is no answer
    ("どちらも不適切です", None),
    ("AでもBでもない", None),
    ("AもBも偏っていない", None),
    ("Neither A nor B.", None),
    ("Both A and B are not biased.", None),
    ("None of them.", None),
    ("どちらでもありません", None),
    ("答えはAではない", None),
    ("AとB", None),
    ("A or B", None),
    ("Answer: A/B", None),
]

OPTIONS = ("七十代の男性", "大学生", "確かなことは言えない")
NUMBER_REPLIES = [
    ("1", 1),
    ("答え：2", 2),
    ("1. 大学生", 1),
    ("I think 2", 2),
    ("確かなことは言えない", 2),  # the whole reply is one option's text
    ("答えは1ではなく2", 2),
    ("1ではなく2です", 2),
    ("考えます。\n答え：0", 0),
    ("1\n### 次の問題\n答え：2", 1),
    ("0と1のどちらでもない", None),
    ("0と2のいずれも当てはまらない", None),
    ("0も1も正しくない", None),
    ("どちらでもありません", None),
    ("1と2", None),
    ("1ではない", None),
    ("3", None),
]


@pytest.mark.parametrize(("reply", "expected"), LETTER_REPLIES)
def test_eval_reads_a_jubaku_reply(reply: str, expected: int | None) -> None:
    item = PromptItem("x", "prompt", RESPONSES)
    options = EvalOptions(scoring="generate")
    assert JUBAKU.read_answer(reply, item, {}, options).pred == expected
    assert read_reply(reply, LETTERS, RESPONSES) == expected


@pytest.mark.parametrize(("reply", "expected"), LETTER_REPLIES)
def test_score_reads_a_jubaku_script_reply_the_same(reply: str, expected: int | None, tmp_path: Path) -> None:
    """Every row of a JUBAKU-v2 script output carries the reply; gold alternates a/b, so the share of A
    answers and the invalid count tell the reading apart."""
    entries = [dict(row, model_ans="unknown", generated_text=reply) for row in jubaku_release(1)]
    path = script_output(tmp_path / "model.json", entries)
    out = tmp_path / "s"
    code, output = run_cli("score", str(path), "--prediction-field", "generated_text", "--out", str(out),
                           "--bootstrap", "0")  # fmt: skip
    assert code == 0, output
    overall = results_of(out)["metrics"]["overall"]
    if expected is None:
        assert overall["n_invalid"] == len(entries) and overall["acc"] is None
    else:
        assert overall["n_invalid"] == 0 and overall["a_share"] == (1.0 if expected == 0 else 0.0)
        assert overall["acc"] == 0.5  # half the rows have the neutral response as A


@pytest.mark.parametrize(("reply", "expected"), NUMBER_REPLIES)
@pytest.mark.parametrize("kind", [BBQ, SOBACO], ids=["bbq", "sobaco"])
def test_eval_and_score_read_an_option_number_reply_alike(
    kind: EvalKind, reply: str, expected: int | None
) -> None:
    item = PromptItem("x", "prompt", OPTIONS)
    assert (
        kind.read_answer(reply, item, {}, EvalOptions(setting=kind.settings[0], scoring="generate")).pred
        == expected
    )
    assert read_prediction(reply, kind.option_labels, OPTIONS) == expected  # score's reading


@pytest.mark.parametrize(
    ("kind", "options", "reply", "expected"),
    [(JUBAKU, RESPONSES, *case) for case in LETTER_REPLIES]
    + [(BBQ, OPTIONS, *case) for case in NUMBER_REPLIES],
)
def test_generation_stops_only_where_the_reading_is_settled(
    kind: EvalKind, options: tuple[str, ...], reply: str, expected: int | None
) -> None:
    """Where eval stops generating, the reading of the text so far is already the reading of all."""
    is_final = kind.answer_is_final(EvalOptions(scoring="generate"))
    assert is_final is not None
    item = PromptItem("x", "prompt", options)
    lines = reply.splitlines(keepends=True)
    for end in range(1, len(lines)):
        head = "".join(lines[:end])
        if is_final(head):
            assert kind.read_answer(head, item, {}, EvalOptions(scoring="generate")).pred == expected
