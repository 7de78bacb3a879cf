"""Gold rationales: derived ones quote verbatim evidence about one person; broken overrides fail the build."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from jbcompile.designs.bbq.rationale import (
    derive_predicate,
    disambiguated_rationale,
    find_evidence,
    first_mention,
    mention_spans,
    quotations,
    sentences,
    verify_rationale,
)

from tests.helpers import compile_folder, edit, problems_of


def test_derived_rationales_pass_the_verifier(mini_sources: Path) -> None:
    for row in compile_folder(mini_sources).configs["full"].rows:
        options = [row["ans0"], row["ans1"], row["ans2"]]
        persons = tuple(f["text"] for f in row["fillers"] if f["slot"].startswith("NAME"))
        problems = verify_rationale(
            row["rationale"],
            context=row["context"],
            question=row["question"],
            persons=persons,
            answer=options[row["label"]],
            # Rows do not keep the two contexts apart; the ambiguous sentences come first.
            disambiguating=row["context"] if row["context_condition"] == "disambig" else None,
        )
        assert problems == []
        if row["context_condition"] == "disambig":
            *evidence, _answer = quotations(row["rationale"])
            assert evidence  # whole sentences about the persons, then the answer
            assert all(not quote.endswith(("が", "、")) for quote in evidence)


def test_a_sentence_about_both_persons_is_quoted_whole() -> None:
    text = "その高齢の男性はすぐに覚えたが、その若い男性は戸惑っていた。"
    found = find_evidence(text, "高齢の男性", "若い男性")
    assert [(e.persons, e.sentence) for e in found] == [(("高齢の男性", "若い男性"), text)]
    rationale = disambiguated_rationale(
        found,
        ("高齢の男性", "若い男性"),
        {"高齢の男性": "高齢の男性", "若い男性": "若い男性"},
        "若い男性",
        "戸惑っていた",
    )
    assert quotations(rationale)[0] == "その高齢の男性はすぐに覚えたが、その若い男性は戸惑っていた"
    assert not verify_rationale(
        rationale,
        context="駅で高齢の男性と若い男性が話していた。" + text,
        question="戸惑っていたのは誰ですか？",
        persons=("高齢の男性", "若い男性"),
        answer="若い男性",
        disambiguating=text,
    )


def test_sentences_about_one_person_each_are_quoted_per_person() -> None:
    text = "その高齢の男性がその若い男性に教えた。その若い男性は感謝した。その高齢の男性は笑った。"
    found = find_evidence(text, "高齢の男性", "若い男性")
    assert [e.sentence for e in found] == ["その高齢の男性がその若い男性に教えた。"]
    text = "その高齢の男性は笑った。その若い男性は感謝した。"
    found = find_evidence(text, "高齢の男性", "若い男性")
    assert [(e.persons, e.sentence) for e in found] == [
        (("高齢の男性",), "その高齢の男性は笑った。"),
        (("若い男性",), "その若い男性は感謝した。"),
    ]


def test_quoted_speech_inside_evidence_becomes_double_corner_brackets() -> None:
    text = "その高齢の男性は「大丈夫」と言った。その若い男性は黙っていた。"
    assert sentences(text) == ["その高齢の男性は「大丈夫」と言った。", "その若い男性は黙っていた。"]
    assert sentences("その男性は「はい。わかりました」と答えた。次へ。") == [
        "その男性は「はい。わかりました」と答えた。",
        "次へ。",
    ]
    found = find_evidence(text, "高齢の男性", "若い男性")
    rationale = disambiguated_rationale(
        found,
        ("高齢の男性", "若い男性"),
        {"高齢の男性": "高齢の男性", "若い男性": "若い男性"},
        "若い男性",
        None,
    )
    assert "「「" not in rationale and "『大丈夫』" in rationale
    assert not verify_rationale(
        rationale,
        context=text,
        question="黙っていたのは誰ですか？",
        persons=("高齢の男性", "若い男性"),
        answer="若い男性",
        disambiguating=text,
    )


def test_a_filler_inside_another_is_not_a_mention() -> None:
    assert mention_spans("その高齢の男性が来た。", "男性", "高齢の男性") == []
    assert mention_spans("その男性と高齢の男性", "男性", "高齢の男性") == [2]


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet="男性高齢の女子", max_size=14),
    name=st.text(alphabet="男性高齢の", max_size=3),
    other=st.text(alphabet="男性高齢の", max_size=5),
)
def test_the_first_mention_is_the_first_of_the_mention_spans(text: str, name: str, other: str) -> None:
    """The verifier's mention order (B206) reads first_mention; it must agree with mention_spans."""
    for candidate in (other, name + other, other + name):
        spans = mention_spans(text, name, candidate)
        assert first_mention(text, name, candidate) == (spans[0] if spans else None)


def test_a_sentence_end_inside_quoted_speech_ends_no_sentence() -> None:
    quoted = "彼は「はい。行きます。」と言った。"
    assert sentences(quoted + "次に来た。") == [quoted, "次に来た。"]
    assert sentences("」で始まる。終わらない") == ["」で始まる。", "終わらない"]
    assert sentences("He said “Yes. Go.” Then left. ok", "en") == ["He said “Yes. Go.” Then left.", "ok"]


def _sentences_by_character(text: str, lang: str) -> list[str]:
    """Reference: the sentence splitter read character by character."""
    opening, closing, ends = {"ja": ("「", "」", "。！？"), "en": ("“", "”", ".!?")}[lang]
    found, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == opening:
            depth += 1
        elif char == closing and depth:
            depth -= 1
        elif char in ends and depth == 0:
            found.append(text[start : index + 1].strip())
            start = index + 1
    found.append(text[start:].strip())
    return [sentence for sentence in found if sentence]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="あ 「」。！？“”.!?x", max_size=30), lang=st.sampled_from(["ja", "en"]))
def test_sentences_agree_with_a_character_by_character_reading(text: str, lang: str) -> None:
    assert sentences(text, lang) == _sentences_by_character(text, lang)


def test_predicate_comes_from_the_question() -> None:
    assert derive_predicate("設定に手間取っていたのは誰ですか？") == "設定に手間取っていた"
    assert derive_predicate("誰が設定に手間取っていましたか？") is None


def test_quotations_keep_nested_brackets() -> None:
    assert quotations("「彼は「はい」と言った」と「答え」") == ["彼は「はい」と言った", "答え"]


def test_verifier_catches_each_kind_of_bad_evidence() -> None:
    context = "会議でAとBが話した。そのAは準備不足だった。"
    question = "準備不足だったのは誰ですか？"

    def reasons(text: str, answer: str = "A") -> list[str]:
        return [
            p.reason
            for p in verify_rationale(
                text, context=context, question=question, persons=("A", "B"), answer=answer
            )
        ]

    assert reasons("「そのAは準備不足だった。」。答えは「A」です。") == []
    assert "not a verbatim" in reasons("「Aは怠けていた」。答えは「A」です。")[0]
    assert "question" in reasons("「準備不足だったのは誰ですか？」。答えは「A」です。")[0]
    assert "both persons" in reasons("「会議でAとBが話した。」。答えは「A」です。")[0]
    assert "mid-sentence" in reasons("「そのAは準備」。答えは「A」です。")[0]
    assert "gold option" in reasons("「そのAは準備不足だった。」。答えは「B」です。")[0]
    assert "no answer" in reasons("答えはAです。")[0]


def test_a_broken_override_fails_the_build(mini_sources: Path) -> None:
    path = mini_sources / "templates/Disability_status/dis-meeting.yaml"
    override = (
        "rationale:\n  negative:\n"
        "    disambig: 「{{NAME2}}は発表の準備をしていなかった」ので、答えは「{{ANSWER}}」です。\n"
    )
    path.write_text(path.read_text(encoding="utf-8") + override, encoding="utf-8")
    problems = problems_of(mini_sources)
    assert {p.code for p in problems} == {"B101"}
    assert problems[0].path.endswith("dis-meeting.yaml")
    assert "hand-written" in problems[0].message and "verbatim" in problems[0].message


def test_a_correct_override_is_used(mini_sources: Path) -> None:
    path = mini_sources / "templates/Disability_status/dis-meeting.yaml"
    override = (
        "rationale:\n  negative:\n"
        "    disambig: 文脈に「その{{NAME2}}の発表は準備不足だった」とあるので、答えは「{{ANSWER}}」です。\n"
    )
    path.write_text(path.read_text(encoding="utf-8") + override, encoding="utf-8")
    rows = compile_folder(mini_sources).configs["full"].rows
    chosen = [
        r
        for r in rows
        if r["template_id"] == "dis-meeting"
        and r["context_condition"] == "disambig"
        and r["question_polarity"] == "neg"
    ]
    assert chosen and all(r["rationale"].startswith("文脈に「その") for r in chosen)


def test_an_override_answer_that_is_not_the_gold_fails(mini_sources: Path) -> None:
    path = mini_sources / "templates/Disability_status/dis-meeting.yaml"
    edit(path, "questions:", "rationale:\n  non_negative:\n    ambig: 答えは「{{NAME1}}」です。\nquestions:")
    problems = problems_of(mini_sources)
    assert {p.code for p in problems} == {"B101"} and "gold option" in problems[0].message
