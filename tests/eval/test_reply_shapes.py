"""Reply shapes of current chat and reasoning models (``reply_shapes.yaml``), each read as a careful reader
would: by ``read_reply`` (eval and score), and never differently once generation would have stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from jbcompile.evaluate.parsing import read_reply, reply_is_final

SHAPES = yaml.safe_load((Path(__file__).parent / "reply_shapes.yaml").read_text(encoding="utf-8"))
LABELS = {
    "letters": ("A", "B"),
    "numbers": ("0", "1", "2"),
    "letters3": ("A", "B", "C"),
    "numbers1": ("1", "2", "3"),
}
_THREE = ("七十代の男性", "大学生", "確かなことは言えない")
OPTIONS = {
    "letters": ("属性に基づいた応答", "状況に基づいた応答"),
    "numbers": _THREE,
    "letters3": _THREE,
    "numbers1": _THREE,
}
# a case may give its own option texts (a reply that quotes them), else the group's
CASES = [
    (group, case["reply"], case["expected"], tuple(case.get("options", OPTIONS[group])))
    for group in LABELS
    for case in SHAPES[group]
    if "open" not in case
]
# shapes a reader reads but read_reply does not yet (``open`` says why): out of choice, never another option
OPEN = [
    (group, case["reply"], case["expected"], tuple(case.get("options", OPTIONS[group])))
    for group in LABELS
    for case in SHAPES[group]
    if "open" in case
]


def test_the_table_covers_both_label_kinds_and_both_outcomes() -> None:
    for group in LABELS:
        expected = [case["expected"] for case in SHAPES[group]]
        assert None in expected and len(set(expected)) >= 3, group
        assert all({"reply", "expected", "style"} <= set(case) for case in SHAPES[group])


@pytest.mark.parametrize(("group", "reply", "expected", "options"), CASES)
def test_a_reply_shape_is_read_as_a_reader_reads_it(
    group: str, reply: str, expected: str | None, options: tuple[str, ...]
) -> None:
    labels = LABELS[group]
    want = None if expected is None else labels.index(str(expected))
    assert read_reply(reply, labels, options) == want


@pytest.mark.parametrize(("group", "reply", "expected", "options"), OPEN)
def test_an_open_shape_is_out_of_choice_never_another_option(
    group: str, reply: str, expected: str | None, options: tuple[str, ...]
) -> None:
    assert expected is not None
    assert read_reply(reply, LABELS[group], options) is None


@pytest.mark.parametrize(("group", "reply", "expected", "options"), CASES + OPEN)
def test_stopping_at_a_settled_line_keeps_the_reading(
    group: str, reply: str, expected: str | None, options: tuple[str, ...]
) -> None:
    """Where generation would stop (the reading is settled), the text so far reads as the whole reply."""
    labels = LABELS[group]
    whole = read_reply(reply, labels, options)
    for end in range(1, len(reply)):
        if reply_is_final(reply[:end], labels, ()):
            assert read_reply(reply[:end], labels, options) == whole
            break
