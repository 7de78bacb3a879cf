"""Gold chain-of-thought rationales of the ``bbq`` kind, and the verifier every rationale must pass.

A rationale quotes, in 「」, the context's evidence about each person, then gives the answer in 「」 as its
last quotation. The verifier re-reads any rationale (derived or hand-written) from its text alone, so a
hand-written override is held to the same rules as a derived one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...sameness import mention_spans, says_the_same_of_both
from ...text import QUOTE_CLOSE as CLOSE
from ...text import QUOTE_OPEN as OPEN
from ...text import SENTENCE_ENDS as _SENTENCE_ENDS
from ...text import sentences, top_level_spans

_INNER_QUOTES = str.maketrans({"「": "『", "」": "』"})
_OUTER_QUOTES = str.maketrans({"『": "「", "』": "」"})

# The sentences of a derived rationale, per language. {a}/{b}: persons; {ea}/{eb}: evidence; {x}: answer.
_PHRASES = {
    "ja": {
        "both": "文脈では、{a}について「{ea}」と書かれており、{b}について「{eb}」と書かれています。",
        "joint": "文脈には{e}と書かれています。",
        "one": "文脈では、{a}について「{ea}」と書かれていますが、{b}にはそうした記述がありません。",
        "because": "そのため、{predicate}のは{x}であり、",
        "so": "そのため、",
        "answer": "答えは「{x}」です。",
        "ambig": "文脈には{a}と{b}が登場しますが、{asked}を判断できる記述はありません。",
        "asked": "{predicate}のがどちらなのか",
        "asked_generic": "どちらが問いの答えに当たるのか",
        "unsettled": (
            "文脈からは、二人のどちらが問いの答えに当たるのかが読み取れません。元のデータの答えは「{x}」です。"
        ),
    },
    "en": {
        "both": "The context says about {a}: “{ea}”, and about {b}: “{eb}”. ",
        "joint": "The context says: {e} ",
        "one": "The context says about {a}: “{ea}”, and nothing of the kind about {b}. ",
        "because": "So ",
        "so": "So ",
        "answer": "the answer is “{x}”.",
        "ambig": "The context mentions {a} and {b}, but says nothing that settles {asked}. ",
        "asked": "which of them {predicate}",
        "asked_generic": "the question",
        "unsettled": "The context does not tell the two persons apart; the release's own answer is “{x}”.",
    },
}
_PREDICATE = re.compile(r"^(?P<predicate>.+?)のは(?:誰|どちら|どなた|どの人)(?:ですか|でしょうか|か)?[？?]$")


@dataclass(frozen=True)
class Evidence:
    """A whole sentence of the context and the persons (one or both) it speaks about."""

    persons: tuple[str, ...]
    sentence: str


def derive_predicate(question: str) -> str | None:
    """「設定に手間取っていたのは誰ですか？」 → 「設定に手間取っていた」; None for other shapes."""
    match = _PREDICATE.match(question.strip())
    return match.group("predicate") if match else None


def first_mention(text: str, name: str, other: str) -> int | None:
    """The first offset of :func:`mention_spans` (None where it has none), without finding the others:
    a start is skipped where an occurrence of ``other`` covers it."""
    if not name:
        return None
    inside = bool(other) and name != other and name in other
    start = text.find(name)
    while start != -1 and inside and -1 < text.find(other, max(0, start - len(other) + 1)) <= start:
        start = text.find(name, start + 1)
    return None if start == -1 else start


def mentions(text: str, name: str, other: str) -> bool:
    return bool(mention_spans(text, name, other))


def as_quotation(text: str, lang: str = "ja") -> str:
    """A sentence to put inside 「」: its final 。 dropped and quotation marks within it turned into 『』,
    as Japanese writes a quoted sentence."""
    if lang != "ja":
        return text
    return _bare(text, lang).translate(_INNER_QUOTES)


def _bare(sentence: str, lang: str) -> str:
    return sentence.strip().removesuffix("。") if lang == "ja" else sentence.strip()


def _ends_a_sentence(quote: str, context: str, ends: str) -> bool:
    """True when some occurrence of ``quote`` in ``context`` runs to a sentence end (or the text's end)."""
    quote = quote.strip()
    start = context.find(quote)
    while start != -1:
        after = start + len(quote)
        if quote[-1:] in ends or after >= len(context) or context[after] in ends:
            return True
        start = context.find(quote, start + 1)
    return False


def find_evidence(disambiguating: str, first: str, second: str, lang: str = "ja") -> list[Evidence]:
    """Whole sentences of the disambiguating context that speak about the persons, in context order.

    A sentence about one person is that person's evidence; a sentence about both is quoted whole, as
    evidence about both (cutting it at a clause break would quote a fragment 「…終えたが」). The first
    sentence found for a person is enough.
    """
    evidence: list[Evidence] = []
    covered: set[str] = set()
    people = (first, second)
    for sentence in sentences(disambiguating, lang):
        present = tuple(name for name, other in (people, people[::-1]) if mentions(sentence, name, other))
        if not present or set(present) <= covered:
            continue
        evidence.append(Evidence(present, sentence))
        covered.update(present)
        if covered == set(people):
            break
    return evidence


def unsettled(evidence: list[Evidence], disambiguating: str, lang: str = "ja") -> str | None:
    """Why the disambiguating context does not tell the two persons apart, or None when it may: it names
    neither person, or it says the same of both (:func:`jbcompile.sameness.says_the_same_of_both`)."""
    if not evidence:
        return "no sentence of it names either person"
    persons = tuple(dict.fromkeys(person for item in evidence for person in item.persons))
    if len(persons) == 2 and says_the_same_of_both(disambiguating, *persons, lang=lang):
        return "it says the same of both persons"
    return None


def _named(names: dict[str, str], lang: str) -> dict[str, str]:
    """English names read "the man in his seventies"; an option already worded "the …" keeps its own."""
    if lang != "en":
        return names
    return {k: v if v.lower().startswith("the ") else f"the {v}" for k, v in names.items()}


def unsettled_rationale(answer: str, lang: str = "ja") -> str:
    """The rationale of a release's row kept as written whose context does not settle its gold (B102, a
    warning there): it says so, and names the answer as the release's, never as the context's."""
    return _PHRASES[lang]["unsettled"].format(x=answer)


def disambiguated_rationale(
    evidence: list[Evidence],
    order: tuple[str, str],
    names: dict[str, str],
    answer: str,
    predicate: str | None,
    lang: str = "ja",
) -> str:
    """``order`` gives the persons in context order; ``names`` maps a person to how the text names it."""
    phrases = _PHRASES[lang]
    names = _named(names, lang)
    joint = next((item for item in evidence if len(item.persons) == 2), None)
    single = {
        item.persons[0]: as_quotation(item.sentence, lang) for item in evidence if len(item.persons) == 1
    }
    quoted = [person for person in order if person in single]
    if joint is not None and len(quoted) < 2:
        marks = "、".join if lang == "ja" else " ".join
        body = phrases["joint"].format(
            e=marks(OPEN[lang] + as_quotation(item.sentence, lang) + CLOSE[lang] for item in evidence)
        )
    elif len(quoted) == 2:
        a, b = quoted
        body = phrases["both"].format(a=names[a], b=names[b], ea=single[a], eb=single[b])
    elif len(quoted) == 1:
        (a,) = quoted
        (b,) = [p for p in order if p != a]
        body = phrases["one"].format(a=names[a], b=names[b], ea=single[a])
    else:  # the caller reports a context without evidence (B102) instead of deriving a rationale
        raise ValueError("a disambiguated rationale needs evidence about a person")
    if predicate and lang == "ja":
        conclusion = phrases["because"].format(predicate=predicate, x=answer)
    else:
        conclusion = phrases["so"]
    return body + conclusion + phrases["answer"].format(x=answer)


def ambiguous_rationale(
    first: str, second: str, unknown: str, predicate: str | None, lang: str = "ja"
) -> str:
    phrases = _PHRASES[lang]
    asked = phrases["asked"].format(predicate=predicate) if predicate else phrases["asked_generic"]
    named = _named({"a": first, "b": second}, lang)
    return (
        phrases["ambig"].format(a=named["a"], b=named["b"], asked=asked)
        + phrases["so"]
        + phrases["answer"].format(x=unknown)
    )


def quotations(text: str, lang: str = "ja") -> list[str]:
    """Top-level 「…」 spans (“…” in English), with nested brackets kept inside."""
    return top_level_spans(text, OPEN[lang], CLOSE[lang])


@dataclass(frozen=True)
class RationaleProblem:
    reason: str
    quote: str | None = None


def verify_rationale(
    rationale: str,
    *,
    context: str,
    question: str,
    persons: tuple[str, str],
    answer: str,
    disambiguating: str | None = None,
    lang: str = "ja",
) -> list[RationaleProblem]:
    """Evidence is whole sentences of the context, never the question; the answer is the gold.

    A quoted sentence may speak about both persons only when it is a sentence of the disambiguating
    context (「その…は…したが、その…は…した」): the ambiguous context names both persons without telling
    them apart, so quoting it is no evidence.
    """
    spans = quotations(rationale, lang)
    if not spans:
        return [RationaleProblem("the rationale quotes no answer in 「」")]
    problems: list[RationaleProblem] = []
    *evidence, final = spans
    if final != answer:
        problems.append(
            RationaleProblem(f"its answer 「{final}」 is not the gold option 「{answer}」", final)
        )
    a, b = persons
    ends = _SENTENCE_ENDS[lang]
    deciding = (
        {_bare(sentence, lang) for sentence in sentences(disambiguating, lang)} if disambiguating else set()
    )
    for quote in evidence:
        plain = quote.translate(_OUTER_QUOTES) if lang == "ja" else quote
        if not plain.strip():
            problems.append(RationaleProblem("an evidence quotation is empty", quote))
        elif plain.strip() in question or question.strip() in plain:
            problems.append(RationaleProblem("the evidence quotes the question, not the context", quote))
        elif plain not in context:
            problems.append(RationaleProblem("the evidence is not a verbatim part of the context", quote))
        elif not _ends_a_sentence(plain, context, ends):
            problems.append(
                RationaleProblem("the evidence ends mid-sentence; quote up to the sentence end", quote)
            )
        elif mentions(plain, a, b) and mentions(plain, b, a) and _bare(plain, lang) not in deciding:
            problems.append(RationaleProblem("the evidence mentions both persons", quote))
    return problems
