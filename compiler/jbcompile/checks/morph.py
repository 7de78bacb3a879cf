"""Morphological analysis with MeCab (fugashi + unidic-lite): one tagger per process, one analysis per text.

fugashi nodes are invalidated by the next call of the tagger, so each node is copied into a plain
:class:`Token` at once. Analyses are cached by text: the corpus repeats the same strings (fillers,
option wordings, slot neighbourhoods) thousands of times, and each is tokenized once.
"""

from __future__ import annotations

import csv
from typing import Any, NamedTuple

# unidic-lite feature fields we read (the dictionary has 26; unknown words only the first six).
_POS_FIELDS = 4
_LFORM, _LEMMA, _ORTH_BASE, _KANA_BASE = 6, 7, 10, 18


class Token(NamedTuple):
    """One morpheme, with character offsets into the analysed text."""

    surface: str
    start: int
    end: int
    pos: str  # UniDic part of speech, levels joined by "-", e.g. 名詞-固有名詞-人名-姓
    lemma: str  # dictionary lemma, e.g. 子供 for both 子供 and 子ども ("" for unknown words)
    orth_base: str  # written form of the base form as spelt here, e.g. 子ども
    reading: str  # lemma reading (lForm), e.g. コドモ
    kana_base: str  # reading of this base form, e.g. イエル for 言える (lemma 言う)
    unknown: bool  # MeCab did not find the word in its dictionary
    char_type: int  # MeCab character class of the first character (2 kanji, 6 hiragana, 7 katakana …)

    def has_pos(self, prefix: str) -> bool:
        """Part-of-speech test by level prefix: ``has_pos("名詞-固有名詞")``."""
        return self.pos == prefix or self.pos.startswith(prefix + "-")


def _fields(raw: str) -> list[str]:
    head = raw.split(",", _KANA_BASE + 1)
    quote = raw.find('"')
    if quote != -1 and (len(head) <= _KANA_BASE + 1 or quote < len(raw) - len(head[-1])):
        head = next(csv.reader([raw]))  # a quoted field (e.g. the surface ",") among those we read
    return head


class Analyzer:
    """A MeCab tagger and a cache of analyses keyed by text."""

    def __init__(self) -> None:
        self._tagger: Any = None
        self._cache: dict[str, tuple[Token, ...]] = {}
        self._words: dict[str, tuple[tuple[int, int], ...]] = {}

    @property
    def tagger(self) -> Any:
        if self._tagger is None:
            import fugashi

            self._tagger = fugashi.Tagger()
        return self._tagger

    def tokens(self, text: str) -> tuple[Token, ...]:
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = self._analyse(text)
        return cached

    def words(self, text: str) -> tuple[tuple[int, int], ...]:
        """Only where the morphemes start and end: the cheap analysis for boundary checks."""
        cached = self._words.get(text)
        if cached is None:
            full = self._cache.get(text)
            if full is not None:
                cached = tuple((t.start, t.end) for t in full)
            else:
                spans: list[tuple[int, int]] = []
                cursor = 0
                for node in self.tagger(text):
                    start = cursor + len(node.white_space)
                    cursor = start + len(node.surface)
                    spans.append((start, cursor))
                cached = tuple(spans)
            self._words[text] = cached
        return cached

    def _analyse(self, text: str) -> tuple[Token, ...]:
        tokens: list[Token] = []
        cursor = 0
        for node in self.tagger(text):
            surface = node.surface
            start = cursor + len(node.white_space)
            if text[start : start + len(surface)] != surface:  # MeCab skipped something unexpected
                start = text.find(surface, cursor)
                if start < 0:
                    continue
            end = start + len(surface)
            cursor = end
            fields = _fields(node.feature_raw)
            pos = "-".join(f for f in fields[:_POS_FIELDS] if f and f != "*")
            known = len(fields) > _KANA_BASE
            tokens.append(
                Token(
                    surface=surface,
                    start=start,
                    end=end,
                    pos=pos,
                    lemma=fields[_LEMMA] if known else "",
                    orth_base=fields[_ORTH_BASE] if known else surface,
                    reading=fields[_LFORM] if known else "",
                    kana_base=fields[_KANA_BASE] if known else "",
                    unknown=bool(node.is_unk),
                    char_type=int(node.char_type),
                )
            )
        return tuple(tokens)

    def cache_size(self) -> int:
        return len(self._cache) + len(self._words)


_shared: Analyzer | None = None


def analyzer() -> Analyzer:
    """The process-wide analyzer (one tagger per process)."""
    global _shared
    if _shared is None:
        _shared = Analyzer()
    return _shared


def tokenize(text: str) -> tuple[Token, ...]:
    return analyzer().tokens(text)
