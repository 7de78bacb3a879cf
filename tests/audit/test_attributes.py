"""Attribute markers (rules/attributes.yaml): which attributes two persons' wordings set apart."""

from __future__ import annotations

import pytest
from jbcompile.audit.attributes import AttributeReader
from jbcompile.audit.run import probe_inputs
from jbcompile.schema.rules import AttributesFile
from pydantic import ValidationError


@pytest.fixture(scope="module")
def reader() -> AttributeReader:
    return AttributeReader(probe_inputs(None).attributes)


def test_the_tested_attribute_is_left_out(reader: AttributeReader) -> None:
    assert reader.differences("七十代の男性", "三十代の女性", "Age") == [("gender", "male", "female")]
    assert reader.differences("七十代の男性", "三十代の女性", "Gender_identity") == [("age", "old", "young")]
    assert reader.differences("太った男性", "やせた男性", "Physical_appearance") == []


def test_words_match_whole_in_english_and_anywhere_in_japanese(reader: AttributeReader) -> None:
    assert reader.values("The woman") == (("gender", "female"),)
    assert reader.differences("The grandfather", "The grandson", "Age") == []
    assert reader.values("祖父") == (("gender", "male"), ("age", "old"))  # 祖父, not 父 alone


def test_a_wording_with_two_values_of_an_attribute_tells_nothing(reader: AttributeReader) -> None:
    assert reader.values("男性と女性のペア") == ()


def test_a_marker_of_two_values_is_refused() -> None:
    with pytest.raises(ValidationError, match="marks both"):
        AttributesFile.model_validate({"attributes": {"gender": {"values": {"a": ["男"], "b": ["男"]}}}})


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("七十代の夫", "二十代の妻"),
        ("七十代の男性", "三十代の女の人"),
        ("お父さん", "お母さん"),
        ("年配の紳士", "若い婦人"),
        ("七十代の父", "二十代の娘"),
        ("七十代の兄", "二十代の妹"),
    ],
)
def test_the_common_words_for_men_and_women_are_markers(
    reader: AttributeReader, first: str, second: str
) -> None:
    assert ("gender", "male", "female") in reader.differences(first, second, "Age")


def test_a_word_holding_a_marker_but_naming_no_such_person_marks_nothing(reader: AttributeReader) -> None:
    assert reader.values("母国が日本の人") == ()  # 母国 is the home country, not a mother
    assert reader.values("体の丈夫な人") == ()  # 丈夫 (sturdy) holds 夫
    assert reader.values("七十代の夫婦") == (("age", "old"),)  # a couple: no gender
    assert reader.values("祖父母") == (("age", "old"),)  # 祖父 and 母: both genders, so none
    assert reader.values("母国を離れた七十代の父") == (("gender", "male"), ("age", "old"))


def test_a_not_marker_that_is_a_marker_is_refused() -> None:
    with pytest.raises(ValidationError, match="both a marker and in not_markers"):
        AttributesFile.model_validate(
            {"attributes": {"gender": {"values": {"a": ["男"], "b": ["女"]}, "not_markers": ["男"]}}}
        )
