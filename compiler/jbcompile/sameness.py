"""Whether a context says the same of two persons, so that it cannot settle which of them a question asks
for: every design whose gold may be a person holds its contexts to this one reading.

The same of both is one statement written twice (「Aは早く着いた。Bも早く着いた。」, 「Bも同じだった。」), or
one sentence about both (「AもBもすぐ覚えた。」, "Both A and B …") with nothing after it. What each person is
said to do is read from the first sentence naming that person alone up to the first naming the other
alone (or the text's end); a lead-in clause (「一方、」) does not tell them apart. A sentence after the
statements that names neither person may still be about one of them (Japanese leaves subjects out), so the
reading never calls unsettled a context that might settle the gold: it catches the plain cases only.
"""

from __future__ import annotations

import re

from .text import sentences

PERSON = "\0"  # what a mention of a person reads as once masked


def mention_spans(text: str, name: str, other: str) -> list[int]:
    """Start offsets where ``name`` is mentioned, not counting places that are part of ``other``.

    Fillers may contain each other (男性 / 高齢の男性); an occurrence inside the longer filler is not a
    mention of the shorter one.
    """
    if not name:
        return []
    covered: set[int] = set()
    if other and name != other and name in other:
        start = text.find(other)
        while start != -1:
            covered.update(range(start, start + len(other)))
            start = text.find(other, start + 1)
    found = []
    start = text.find(name)
    while start != -1:
        if start not in covered:
            found.append(start)
        start = text.find(name, start + 1)
    return found


def masked(text: str, name: str, other: str) -> str:
    """``text`` with each mention of ``name`` (not inside ``other``) as :data:`PERSON`, case-folded."""
    spans = mention_spans(text, name, other)
    for start in reversed(spans):
        text = text[:start] + PERSON + text[start + len(name) :]
    return text.strip().casefold()


# A title after a name (「田中さん」) belongs to the mention.
_TITLE = "(?:さん|くん|君|ちゃん|様|さま|氏|先生)?"
# What a person's statement says with the person left out of it: 「Bも」「Bの方も」「Bもまた同じく」 say of B
# what 「Aは」 says of A, and "also"/"too" add nothing in English.
_LIKE_PARTICLES = {
    "ja": re.compile("\0" + _TITLE + "(?:の方|のほう)?(?:は|が|も)(?:また)?、?(?:同じく|同様に|やはり)?、?"),
    "en": re.compile(r",? (?:also|too|as well|likewise)\b"),
}
_LIKENED = {"ja": "\0は", "en": ""}
# A later statement that only points back at the earlier one: 「Bも同じだった。」 "B did the same."
_SAME_AS_BEFORE = {
    "ja": re.compile("[^\0。]*\0は(?:そう|同じ|同様)(?:だった|でした|です|だ|である)?[。．]?"),
    "en": re.compile(r"[^\0.]*\0 (?:did|was|were|had|felt) (?:the same|so)\.?"),
}
# One sentence that says one thing of both persons: 「AもBも」「AとBはどちらも」「AとBの二人は」 (a
# determiner 「その」 may stand before the second).
_BOTH_ALIKE = {
    "ja": re.compile(
        f"\0{_TITLE}(?:に)?も、?[^\0、。]{{0,4}}\0{_TITLE}(?:に)?も"
        f"|\0{_TITLE}と[^\0、。]{{0,4}}\0{_TITLE}(?:は|が|の)?、?"
        "(?:どちらも|ともに|共に|二人とも|ふたりとも|両方とも|いずれも|そろって|揃って|二人|ふたり|両者)"
    ),
    "en": re.compile(
        r"\bboth (?:the )?\0 and (?:the )?\0|\0 and (?:the )?\0 (?:\w+ )?both\b"
        r"|\bneither (?:the )?\0 nor (?:the )?\0"
    ),
}
# Words by which a sentence about both may still tell them apart (「Aだけ」「AはBより」「前者」).
_TELLS_APART = {
    "ja": re.compile("だけ|のみ|より|ほうが|方が|前者|後者|片方|一方|もう一人|それぞれ|違"),
    "en": re.compile(r"\b(?:only|than|former|latter|one of|each|other|differ)", re.IGNORECASE),
}


def says_the_same_of_both(text: str, first: str, second: str, lang: str = "ja") -> bool:
    """True when ``text`` says nothing of ``first`` that it does not say of ``second`` (see the module)."""
    texts = sentences(text, lang)
    own: dict[str, int] = {}
    for index, sentence in enumerate(texts):
        present = [
            name for name, other in ((first, second), (second, first)) if _mentioned(sentence, name, other)
        ]
        if len(present) == 2:
            # a sentence about both: alone (and all after it alike) it says one thing of both; after one
            # person's own statement it may set the other apart
            return not own and all(_about_both_alike(later, first, second, lang) for later in texts[index:])
        if present and present[0] not in own:
            own[present[0]] = index
            if len(own) == 2:
                break
    if len(own) < 2:
        return False
    (one, start), (other, stop) = sorted(own.items(), key=lambda item: item[1])
    said = (
        _likened(masked(" ".join(texts[start:stop]), one, other), lang),
        _likened(masked(" ".join(texts[stop:]), other, one), lang),
    )
    if _SAME_AS_BEFORE[lang].fullmatch(said[1]):
        return True
    longer, shorter = sorted(said, key=len, reverse=True)
    lead = longer[: len(longer) - len(shorter)]
    return longer.endswith(shorter) and PERSON not in lead and (not lead or lead.rstrip()[-1] in "、,")


def _mentioned(sentence: str, name: str, other: str) -> bool:
    """``bool(mention_spans(...))``, without finding the spans unless one name holds the other (a build
    asks this of every disambiguating context it renders)."""
    if not name or name not in sentence:
        return False
    return name == other or name not in other or bool(mention_spans(sentence, name, other))


def _likened(text: str, lang: str) -> str:
    return _LIKE_PARTICLES[lang].sub(_LIKENED[lang], text)


def _about_both_alike(sentence: str, first: str, second: str, lang: str) -> bool:
    """True for a sentence that says one thing of both persons and nothing that sets one apart."""
    text = masked(masked(sentence, first, second), second.casefold(), first.casefold())
    return (
        text.count(PERSON) == 2
        and _BOTH_ALIKE[lang].search(text) is not None
        and _TELLS_APART[lang].search(text) is None
    )
