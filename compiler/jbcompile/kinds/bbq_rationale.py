"""Gold chain-of-thought rationales of the ``bbq`` kind, and the verifier every rationale must pass.

A rationale quotes, in 「」, the context's evidence about each person, then gives the answer in 「」 as its
last quotation. The verifier re-reads any rationale (derived or hand-written) from its text alone, so a
hand-written override is held to the same rules as a derived one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import top_level_spans

_SENTENCE = {"ja": re.compile(r"[^。！？]+[。！？]?"), "en": re.compile(r"[^.!?]+[.!?]?")}
_CLAUSE_BREAK = {"ja": "、", "en": ","}
OPEN = {"ja": "「", "en": "“"}
CLOSE = {"ja": "」", "en": "”"}

# The sentences of a derived rationale, per language. {a}/{b}: persons; {ea}/{eb}: evidence; {x}: answer.
_PHRASES = {
    "ja": {
        "both": "文脈では、{a}について「{ea}」と書かれており、{b}について「{eb}」と書かれています。",
        "one": "文脈では、{a}について「{ea}」と書かれていますが、{b}にはそうした記述がありません。",
        "none": "文脈の記述から、問いの答えに当たる人物が特定できます。",
        "because": "そのため、{predicate}のは{x}であり、",
        "so": "そのため、",
        "answer": "答えは「{x}」です。",
        "ambig": "文脈には{a}と{b}が登場しますが、{asked}を判断できる記述はありません。",
        "asked": "{predicate}のがどちらなのか",
        "asked_generic": "どちらが問いの答えに当たるのか",
    },
    "en": {
        "both": "The context says about {a}: “{ea}”, and about {b}: “{eb}”. ",
        "one": "The context says about {a}: “{ea}”, and nothing of the kind about {b}. ",
        "none": "The context identifies the person the question asks about. ",
        "because": "So ",
        "so": "So ",
        "answer": "the answer is “{x}”.",
        "ambig": "The context mentions {a} and {b}, but says nothing that settles {asked}. ",
        "asked": "which of them {predicate}",
        "asked_generic": "the question",
    },
}
_PREDICATE = re.compile(r"^(?P<predicate>.+?)のは(?:誰|どちら|どなた|どの人)(?:ですか|でしょうか|か)?[？?]$")


def derive_predicate(question: str) -> str | None:
    """「設定に手間取っていたのは誰ですか？」 → 「設定に手間取っていた」; None for other shapes."""
    match = _PREDICATE.match(question.strip())
    return match.group("predicate") if match else None


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


def mentions(text: str, name: str, other: str) -> bool:
    return bool(mention_spans(text, name, other))


def _split_between(sentence: str, second_start: int, clause_break: str) -> int | None:
    """Where the clause about the second person begins: after the last 、 before it, if there is one.

    A sentence about both persons with no clause break (「AがBに教えた」) gives no evidence: cutting it
    elsewhere would quote a fragment.
    """
    comma = sentence.rfind(clause_break, 0, second_start)
    return comma + 1 if comma != -1 else None


def find_evidence(disambiguating: str, first: str, second: str, lang: str = "ja") -> dict[str, str]:
    """The first clause about each person that mentions that person and not the other."""
    evidence: dict[str, str] = {}
    people = (first, second)
    for match in _SENTENCE[lang].finditer(disambiguating):
        sentence = match.group(0).strip()
        starts = {name: mention_spans(sentence, name, other) for name, other in (people, people[::-1])}
        present = [name for name in people if starts[name]]
        if len(present) == 1:
            evidence.setdefault(present[0], sentence)
        elif len(present) == 2:
            a, b = sorted(present, key=lambda name: starts[name][0])
            cut = _split_between(sentence, starts[b][0], _CLAUSE_BREAK[lang])
            if cut is None:
                continue
            head, tail = sentence[:cut].strip().rstrip(_CLAUSE_BREAK[lang]), sentence[cut:].strip()
            if head and not mentions(head, b, a):
                evidence.setdefault(a, head)
            if tail and not mentions(tail, a, b):
                evidence.setdefault(b, tail)
    return evidence


def _named(names: dict[str, str], lang: str) -> dict[str, str]:
    """English names read "the man in his seventies"; an option already worded "the …" keeps its own."""
    if lang != "en":
        return names
    return {k: v if v.lower().startswith("the ") else f"the {v}" for k, v in names.items()}


def disambiguated_rationale(
    evidence: dict[str, str],
    order: tuple[str, str],
    names: dict[str, str],
    answer: str,
    predicate: str | None,
    lang: str = "ja",
) -> str:
    """``order`` gives the persons in context order; ``names`` maps a person to how the text names it."""
    phrases = _PHRASES[lang]
    names = _named(names, lang)
    quoted = [person for person in order if person in evidence]
    if len(quoted) == 2:
        a, b = quoted
        body = phrases["both"].format(a=names[a], b=names[b], ea=evidence[a], eb=evidence[b])
    elif len(quoted) == 1:
        (a,) = quoted
        (b,) = [p for p in order if p != a]
        body = phrases["one"].format(a=names[a], b=names[b], ea=evidence[a])
    else:
        body = phrases["none"]
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
    rationale: str, *, context: str, question: str, persons: tuple[str, str], answer: str, lang: str = "ja"
) -> list[RationaleProblem]:
    """Evidence is verbatim context, never the question, about one person only; the answer is the gold."""
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
    for quote in evidence:
        if not quote.strip():
            problems.append(RationaleProblem("an evidence quotation is empty", quote))
        elif quote.strip() in question or question.strip() in quote:
            problems.append(RationaleProblem("the evidence quotes the question, not the context", quote))
        elif quote not in context:
            problems.append(RationaleProblem("the evidence is not a verbatim part of the context", quote))
        elif mentions(quote, a, b) and mentions(quote, b, a):
            problems.append(RationaleProblem("the evidence mentions both persons", quote))
    return problems
