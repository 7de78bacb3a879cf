"""``sources/rules/*.yaml``: the data behind ``jbcompile check`` — reviewed like code, changed without code.

- ``pronouns.yaml``: token sequences to rewrite (彼ら → かれら); also applied by the translator.
- ``normalization.yaml``: the width and punctuation table of Japanese text.
- ``lexicon.yaml``: words MeCab does not know, canonical spellings, interrogatives, demonstratives.
- ``attributes.yaml``: the words that mark a person's gender, age … (the attribute confounds of
  ``jbcompile audit`` and ``check``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .common import Count, Identifier, StrictModel

PronounScope = Literal["template", "vocab", "dataset", "translation"]
ALL_SCOPES: tuple[PronounScope, ...] = ("template", "vocab", "dataset", "translation")


class TokenPattern(StrictModel):
    """One morpheme to match; every field given must hold."""

    surface: str | None = Field(default=None, description="The written form of the token, exactly.")
    lemma: str | None = Field(default=None, description="The UniDic lemma, e.g. 彼.")
    pos: str | None = Field(
        default=None,
        description="Part-of-speech prefix, levels joined by '-', e.g. 代名詞 or 接尾辞-名詞的.",
    )

    @model_validator(mode="after")
    def _something_to_match(self) -> TokenPattern:
        if self.surface is None and self.lemma is None and self.pos is None:
            raise ValueError("give at least one of surface, lemma, pos")
        return self


class PronounRule(StrictModel):
    """Rewrite a pronoun matched as a token sequence (彼らしい = 彼 + らしい never matches 彼 + ら)."""

    name: Identifier
    description: str | None = None
    match: list[TokenPattern] = Field(min_length=1, description="Consecutive tokens to match.")
    replace: str = Field(description="What the matched tokens are rewritten to.")
    scope: list[PronounScope] = Field(
        default_factory=lambda: list(ALL_SCOPES),
        description="Where the rule applies: template texts, vocab, dataset.yaml, machine translations.",
    )


class PronounRulesFile(StrictModel):
    rules: list[PronounRule] = Field(min_length=1)

    @field_validator("rules")
    @classmethod
    def _unique_names(cls, value: list[PronounRule]) -> list[PronounRule]:
        names = [rule.name for rule in value]
        if len(set(names)) != len(names):
            raise ValueError("rule names must be unique")
        return value


class NormalizationFile(StrictModel):
    """Characters that do not belong in Japanese text, and what to write instead."""

    replace: dict[str, str] = Field(
        description="One character → its replacement, e.g. '?': '？'. Applied to Japanese texts only."
    )
    keep_between_digits: list[str] = Field(
        default_factory=lambda: [",", ".", "，", "．"],
        description="Characters left alone between two digits (1,000 / 3.5).",
    )
    halfwidth_katakana: bool = Field(default=True, description="Rewrite half-width katakana to full width.")

    @field_validator("replace")
    @classmethod
    def _single_characters(cls, value: dict[str, str]) -> dict[str, str]:
        for source, target in value.items():
            if len(source) != 1:
                raise ValueError(f"keys are single characters, got {source!r}")
            if source == target:
                raise ValueError(f"{source!r} is replaced by itself")
        return value


Month = Annotated[int, Field(ge=1, le=12)]

# Defaults of the time words of JA117; a project's lexicon.yaml replaces them whole.
_EVENT_MONTHS: dict[str, list[int]] = {
    "新年会": [1],
    "忘年会": [11, 12],
    "正月": [1],
    "初詣": [1],
    "成人式": [1],
    "節分": [2],
    "卒業式": [3],
    "花見": [3, 4],
    "入学式": [4],
    "入社式": [4],
    "ゴールデンウィーク": [4, 5],
    "梅雨": [6, 7],
    "七夕": [7],
    "海水浴": [7, 8],
    "花火大会": [7, 8],
    "夏祭り": [7, 8],
    "盆踊り": [7, 8],
    "お盆": [8],
    "紅葉狩り": [10, 11],
    "クリスマス": [12],
    "大晦日": [12],
}
# The months in which "this <season>" can be said of a past event, with a month's slack at the end.
_THIS_SEASON: dict[str, list[int]] = {
    "春": [3, 4, 5, 6],
    "夏": [6, 7, 8, 9],
    "秋": [9, 10, 11, 12],
    "冬": [12, 1, 2, 3],
}


def _time_deixis() -> dict[str, list[int]]:
    """Each way of saying "this <season>" and "this year's <season>", with the months it can be said in.

    この春 and 今春 are said in the season itself; 今年の春 from then until the year ends (a winter starts
    in December: 今年の冬 is said as この冬 is). Next and last season's (来春, 昨冬, 去年の春 …) are left
    out: they can be said in any month (in April 来春 is next year's spring), so no event contradicts them."""
    table: dict[str, list[int]] = {}
    for season, months in _THIS_SEASON.items():
        this_year = months if season == "冬" else list(range(months[0], 13))
        table |= {f"この{season}": months, f"今{season}": months, f"今年の{season}": this_year}
    return table


_TIME_DEIXIS: dict[str, list[int]] = _time_deixis()


class LexiconFile(StrictModel):
    """Word lists the consistency rules consult."""

    known_words: list[str] = Field(
        default_factory=list, description="Correct words MeCab does not know (not reported as unknown)."
    )
    canonical_spellings: list[str] = Field(
        default_factory=list,
        description="Preferred spellings; other spellings of the same lemma are reported and fixed to these.",
    )
    interrogatives: list[str] = Field(
        default_factory=lambda: ["誰", "どちら", "どっち", "どの", "どなた", "何", "何者", "いずれ"],
        description="Words that make a question interrogative.",
    )
    demonstratives: list[str] = Field(
        default_factory=lambda: ["その", "この", "あの"],
        description="Demonstratives that mark a person mention as referring back.",
    )
    question_pair_min_similarity: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="The negative and the non-negative question must share at least this share of tokens.",
    )
    question_pair_max_changes: Count = Field(
        default=2,
        ge=1,
        description="At most this many separate places where the two questions of a pair differ.",
    )
    event_months: dict[str, list[Month]] = Field(
        default_factory=lambda: dict(_EVENT_MONTHS),
        description="Events held at a fixed time of year, with their months (JA117): 忘年会 → [11, 12].",
    )
    time_deixis: dict[str, list[Month]] = Field(
        default_factory=lambda: dict(_TIME_DEIXIS),
        description="Phrases that place a story in time, with the months in which they can be said of an "
        "event (JA117): この春 → [3, 4, 5, 6].",
    )


class Attribute(StrictModel):
    """One attribute a person's wording can carry beside the group a template tests (gender, age …).

    Two persons of a row differ in the attribute when each wording carries a marker of it and the
    markers belong to different values (七十代の男性 / 三十代の女性: gender male / female)."""

    tested_by: list[Identifier] = Field(
        default_factory=list,
        description="Categories whose templates test this attribute: there the two persons may differ in it.",
    )
    values: dict[Identifier, list[str]] = Field(
        min_length=2,
        description="Each value of the attribute and the words that mark it, e.g. old: [七十代, 高齢]. "
        "Japanese markers match anywhere in a wording; markers in Latin letters match whole words, in "
        "any case.",
    )

    not_markers: list[str] = Field(
        default_factory=list,
        description="Words that hold a marker but say nothing about the attribute, e.g. 母国 (母), "
        "丈夫 (夫), 夫婦 (夫): a wording is read longest word first, so 母国 is read whole and marks "
        "no value.",
    )

    @model_validator(mode="after")
    def _not_markers_are_not_markers(self) -> Attribute:
        markers = {marker.casefold() for markers in self.values.values() for marker in markers}
        for word in self.not_markers:
            if not word.strip():
                raise ValueError("not_markers has an empty word")
            if word.casefold() in markers:
                raise ValueError(f"{word!r} is both a marker and in not_markers")
        return self

    @field_validator("values")
    @classmethod
    def _markers_of_one_value(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for name, markers in value.items():
            if not markers:
                raise ValueError(f"value {name!r} has no marker")
            for marker in markers:
                if not marker.strip():
                    raise ValueError(f"value {name!r} has an empty marker")
                key = marker.casefold()
                if key in seen and seen[key] != name:
                    raise ValueError(f"marker {marker!r} marks both {seen[key]!r} and {name!r}")
                seen[key] = name
        return value


class AttributesFile(StrictModel):
    """The attribute markers behind the attribute-confound probe of ``jbcompile audit`` and the
    confounded-pair rule of ``jbcompile check`` (JA119)."""

    attributes: dict[Identifier, Attribute] = Field(
        min_length=1,
        description="Attribute name (gender, age …) → the categories that test it and its markers.",
    )
