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
