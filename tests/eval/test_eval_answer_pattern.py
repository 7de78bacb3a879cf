"""`--answer-pattern`: where a prompt file's replies put their answer (issue 25 §1.2)."""

from __future__ import annotations

import pytest
from jbcompile.evaluate.kind import EvalOptions
from jbcompile.evaluate.parsing import answer_after, read_exact
from jbcompile.evaluate.requests import EvalRequest, check_eval_request


@pytest.mark.parametrize(
    ("reply", "pattern", "expected"),
    [
        ("正しい理由: …\n回答: 2", "回答[:：]", " 2"),
        ("回答: 1 …いや、回答: 2", "回答[:：]", " 2"),  # the last match
        ("Answer is <2>.", r"<(\d)>", "2"),  # the first group, when the pattern has one
        ("no marker here", "回答[:：]", None),  # never matched: out of choice
        # docs/eval.md's pattern for a base model that goes on after its answer: the first one
        ("理由…\n回答: 1\n\n背景情報: …\n回答: 2", r"\A[\s\S]*?回答[:：]\s*(\d)", "1"),
    ],
)
def test_answer_after(reply: str, pattern: str, expected: str | None) -> None:
    assert answer_after(reply, pattern) == expected


def test_read_exact_takes_one_option_and_nothing_else() -> None:
    options = ("七十代の男性", "大学生", "確かなことは言えない")
    assert read_exact(" 「2」。", ("0", "1", "2"), options) == 2
    assert read_exact("大学生", ("0", "1", "2"), options) == 1
    assert read_exact("2です", ("0", "1", "2"), options) is None
    assert read_exact("1 2", ("0", "1", "2"), options) is None


@pytest.mark.parametrize(
    ("pattern", "scoring", "codes"),
    [("回答[:：]", "generate", []), ("回答(", "generate", ["EV026"]), ("回答", "logprob", ["EV027"])],
)
def test_the_pattern_is_checked_before_anything_loads(pattern: str, scoring: str, codes: list[str]) -> None:
    request = EvalRequest(
        model="org/model", dataset="org/data", options=EvalOptions(scoring=scoring, answer_pattern=pattern)
    )
    assert [d.code for d in check_eval_request(request)] == codes
