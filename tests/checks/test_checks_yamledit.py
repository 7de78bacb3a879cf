"""yamledit: fixes land byte-exactly; round-trip writes keep comments, key order and style."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from jbcompile.diagnostics import Edit
from jbcompile.yamledit import apply_edits, set_values

TEMPLATE = """\
# A template with comments everywhere.
id: demo   # trailing comment
category: Age
subcategory: null
persons:
  NAME1: {group: age_old, target: true}
  NAME2: {group: age_young}
ambiguous_context: >-
  駅前で、{{NAME1}}と{{NAME2}}が彼らの
  話をしていた。
disambiguating_context: "その{{NAME1}}は彼らと話した。"
quoted_escape: "彼らは\\t来た"
single: 'it''s 彼ら'
items:
  - 彼らの本   # keep me
  - other
literal: |
  一行目に彼ら
    二行目（字下げ）
questions:
  negative:
    text: 誰ですか?
    answer: NAME2
"""

AMBIGUOUS = "駅前で、{{NAME1}}と{{NAME2}}が彼らの 話をしていた。"


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


def _value(path: Path, *key_path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in key_path:
        data = data[key]
    return data


def _top_keys(text: str) -> list[str]:
    return [line.split(":")[0] for line in text.splitlines() if line[:1] not in ("", " ", "#")]


def _only_changed_lines(before: str, after: str) -> set[int]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b)
    return {i for i, (x, y) in enumerate(zip(a, b, strict=True), start=1) if x != y}


@pytest.mark.parametrize(
    ("key_path", "edit", "expected", "line"),
    [
        (("items", 0), Edit(0, "彼ら", "かれら"), "かれらの本", 15),
        (("questions", "negative", "text"), Edit(4, "?", "？"), "誰ですか？", 22),
        (("disambiguating_context",), Edit(12, "彼ら", "かれら"), "その{{NAME1}}はかれらと話した。", 11),
        (("ambiguous_context",), Edit(24, "彼ら", "かれら"), AMBIGUOUS.replace("彼ら", "かれら"), 9),
        (("literal",), Edit(4, "彼ら", "かれら"), "一行目にかれら\n  二行目（字下げ）\n", 18),
        (("ambiguous_context",), Edit(0, "", "その"), "その" + AMBIGUOUS, 9),
    ],
)
def test_apply_edits_is_byte_exact_outside_the_edit(template, key_path, edit, expected, line):
    outcome = apply_edits(template, [(key_path, edit)])
    assert outcome.spliced and not outcome.rewritten
    after = template.read_text(encoding="utf-8")
    assert _value(template, *key_path) == expected
    assert _only_changed_lines(TEMPLATE, after) == {line}
    # Applying the same edit again changes nothing.
    second = apply_edits(template, [(key_path, edit)])
    assert not second.changed
    assert template.read_text(encoding="utf-8") == after


def test_apply_edits_splices_the_verbatim_runs_of_escaped_scalars(template):
    """An escape (\\t, '') only ends a verbatim run: an edit beside it lands byte-exactly."""
    outcome = apply_edits(
        template,
        [(("quoted_escape",), Edit(0, "彼ら", "かれら")), (("single",), Edit(5, "彼ら", "かれら"))],
    )
    assert len(outcome.spliced) == 2 and not outcome.rewritten
    after = template.read_text(encoding="utf-8")
    assert _value(template, "quoted_escape") == "かれらは\t来た"
    assert _value(template, "single") == "it's かれら"
    assert _only_changed_lines(TEMPLATE, after) == {12, 13}
    assert 'quoted_escape: "かれらは\\t来た"' in after and "single: 'it''s かれら'" in after


def test_apply_edits_falls_back_for_edits_over_escapes_and_keeps_comments(template):
    outcome = apply_edits(
        template,
        [(("quoted_escape",), Edit(2, "は\t", "が ")), (("single",), Edit(0, "it's", "its"))],
    )
    assert len(outcome.rewritten) == 2
    after = template.read_text(encoding="utf-8")
    assert _value(template, "quoted_escape") == "彼らが 来た"
    assert _value(template, "single") == "its 彼ら"
    assert "# A template with comments everywhere." in after
    assert "# trailing comment" in after and "# keep me" in after
    assert "NAME1: {group: age_old, target: true}" in after
    assert "subcategory: null" in after
    assert _top_keys(after) == _top_keys(TEMPLATE)


def test_apply_edits_several_edits_in_one_scalar_and_stale_ones(template):
    key = ("disambiguating_context",)
    outcome = apply_edits(
        template,
        [(key, Edit(12, "彼ら", "かれら")), (key, Edit(18, "。", "．")), (key, Edit(0, "あの", "この"))],
    )
    assert len(outcome.spliced) == 2 and len(outcome.skipped) == 1
    assert _value(template, *key) == "その{{NAME1}}はかれらと話した．"


def test_apply_edits_that_would_change_yaml_meaning_are_rewritten_safely(template):
    # Inserting ": " into a plain scalar would turn it into a mapping; the fallback quotes it.
    outcome = apply_edits(template, [(("items", 1), Edit(5, "", ": x"))])
    assert outcome.rewritten
    assert _value(template, "items", 1) == "other: x"
    assert "# keep me" in template.read_text(encoding="utf-8")


def test_apply_edits_keeps_crlf_and_bom(tmp_path):
    path = tmp_path / "crlf.yaml"
    path.write_bytes("\ufeffa: 彼らの\r\n# c\r\nb: x\r\n".encode())
    apply_edits(path, [(("a",), Edit(0, "彼ら", "かれら"))])
    assert path.read_bytes() == "\ufeffa: かれらの\r\n# c\r\nb: x\r\n".encode()


def test_set_values_keeps_comments_order_quotes_and_creates_keys(template):
    set_values(
        template,
        [
            (("questions", "negative", "text"), "誰が来ましたか？"),
            (("questions", "non_negative", "text"), {"ja": "誰？", "en": "Who?", "status": "machine"}),
            (("single",), "かれら"),
            (("ambiguous_context",), "短い文。"),
            (("items", 2), "appended"),
        ],
    )
    after = template.read_text(encoding="utf-8")
    assert "# A template with comments everywhere." in after
    assert "id: demo   # trailing comment" in after
    assert "  - 彼らの本   # keep me" in after
    assert "subcategory: null" in after
    assert "single: 'かれら'" in after
    assert "ambiguous_context: >-\n  短い文。" in after
    data = yaml.safe_load(after)
    assert list(data) == list(yaml.safe_load(TEMPLATE))
    assert data["questions"]["non_negative"]["text"] == {"ja": "誰？", "en": "Who?", "status": "machine"}
    assert data["items"] == ["彼らの本", "other", "appended"]
    assert data["questions"]["negative"] == {"text": "誰が来ましたか？", "answer": "NAME2"}
    assert "      status: machine" in after  # block style, the file's two-space indentation


def test_set_values_keeps_indented_sequence_style(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("opts:\n  - a\n  - b  # two\nother:\n    deep: 1\n", encoding="utf-8")
    set_values(path, [(("opts", 0), "z")])
    assert path.read_text(encoding="utf-8") == "opts:\n  - z\n  - b  # two\nother:\n    deep: 1\n"


def test_set_values_rejects_impossible_paths_and_writes_nothing(template):
    with pytest.raises(KeyError):
        set_values(template, [(("items", 7), "x")])
    assert template.read_text(encoding="utf-8") == TEMPLATE
