"""JA108: one word, one spelling across the corpus (表記揺れ)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from ...diagnostics import Edit
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText
from ..morph import Token

CONTENT_POS = ("名詞", "動詞", "形容詞", "副詞", "形状詞")
_MAX_PLACES = 3
_KANA = re.compile(r"[\u3040-\u30ff]")


@register
class SpellingVariants(Rule):
    """One word written with different spellings across the corpus (表記揺れ: 子供/子ども, 出来る/できる).

    Words are grouped by dictionary lemma and reading; two spellings of a group are variants when one
    writes in kana what the other writes in kanji (子供/子ども, 障害/障がい), not when they use
    different kanji (務める/勤める are different words). Auxiliary uses conventionally in kana
    (〜てくる, 〜ていく after the conjunctive particle て/で, という) are not counted; a verb after the case
    particle で (電車で行く, 説明で出来る) is. Each occurrence of a spelling other than the canonical
    one is reported with the others listed. The canonical spelling is the one listed in
    rules/lexicon.yaml canonical_spellings (then --fix rewrites it, keeping the inflection), else the
    most frequent one.

    Anti-pattern:
        templates/a.yaml: 子供を連れた{{NAME1}}   templates/b.yaml: 子どもを連れた{{NAME1}}

    Better:
        子どもを連れた{{NAME1}} in both (canonical_spellings: [子ども])
    """

    code = "JA108"
    name = "spelling-variant"
    fixable = True

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        canonical_list = set(ctx.data.lexicon.canonical_spellings)
        words: dict[tuple[str, str, str], list[tuple[SourceText, Token]]] = defaultdict(list)
        for text in ctx.texts:
            tokens = ctx.literal_tokens(text)
            for index, token in enumerate(tokens):
                if (
                    token.unknown
                    or not token.lemma
                    or token.has_pos("名詞-数詞")
                    or _conventional(tokens, index)
                ):
                    continue
                head = token.pos.split("-", 1)[0]
                if head in CONTENT_POS:
                    words[(token.lemma, token.kana_base, head)].append((text, token))
        for occurrences in words.values():
            for cluster in _variant_clusters(Counter(token.orth_base for _, token in occurrences)):
                members = [(text, token) for text, token in occurrences if token.orth_base in cluster]
                yield from _report(members, cluster, canonical_list)


def _report(
    occurrences: list[tuple[SourceText, Token]], counts: Counter, canonical_list: set[str]
) -> Iterable[Finding]:
    configured = [spelling for spelling in counts if spelling in canonical_list]
    if len(configured) == 1:
        canonical: str | None = configured[0]
    else:
        ranked = counts.most_common()
        canonical = ranked[0][0] if ranked[0][1] > ranked[1][1] else None
    places: dict[str, list[str]] = defaultdict(list)
    for text, token in occurrences:
        places[token.orth_base].append(_place(text, token))
    summary = "; ".join(
        f"{spelling} ×{n} ({', '.join(places[spelling][:_MAX_PLACES])}"
        f"{' …' if len(places[spelling]) > _MAX_PLACES else ''})"
        for spelling, n in counts.most_common()
    )
    for text, token in occurrences:
        if token.orth_base == canonical:
            continue
        edits: tuple[Edit, ...] = ()
        if canonical is not None and len(configured) == 1:
            new = _respell(token, canonical)
            edits = (Edit(token.start, token.surface, new),) if new else ()
        wanted = f"write 「{canonical}」" if canonical else "choose one spelling"
        yield Finding.at(
            text,
            token.start,
            f"「{token.surface}」: this word is spelt several ways: {summary}",
            hint=f"{wanted} (rules/lexicon.yaml canonical_spellings sets the canonical one)",
            edits=edits,
        )


def _skeleton(spelling: str) -> str:
    return _KANA.sub("", spelling)


def _is_subsequence(short: str, long: str) -> bool:
    remaining = iter(long)
    return all(char in remaining for char in short)


def _variant_clusters(counts: Counter) -> list[Counter]:
    """Spellings that differ only in what is written in kana, grouped (union-find over the pairs)."""
    spellings = sorted(counts)
    parent = {s: s for s in spellings}

    def root(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    for i, a in enumerate(spellings):
        for b in spellings[i + 1 :]:
            ka, kb = _skeleton(a), _skeleton(b)
            if ka != kb and (_is_subsequence(ka, kb) or _is_subsequence(kb, ka)):
                parent[root(a)] = root(b)
    clusters: dict[str, Counter] = defaultdict(Counter)
    for spelling in spellings:
        clusters[root(spelling)][spelling] = counts[spelling]
    return [cluster for cluster in clusters.values() if len(cluster) > 1]


def _conventional(tokens: Sequence[Token], index: int) -> bool:
    """Auxiliary uses written in kana by convention: 〜てくる, 〜ていく, 〜てみる, という …

    Only after the conjunctive particle て/で (読んでいる): after the case particle で (説明で出来る,
    電車で行く) the verb is a word of its own, spelt like any other."""
    token = tokens[index]
    previous = tokens[index - 1] if index > 0 else None
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    if previous is None:
        return False
    if "非自立可能" in token.pos and previous.surface in ("て", "で") and previous.has_pos("助詞-接続助詞"):
        return True
    quotative = previous.surface == "と" and previous.has_pos("助詞-格助詞") and token.lemma == "言う"
    return quotative and following is not None and following.has_pos("名詞")


def _respell(token: Token, canonical: str) -> str | None:
    """The token rewritten in the canonical spelling, keeping its inflection (出来 → でき); None if unsure."""
    base = token.orth_base
    if token.surface == base:
        return canonical
    shared = 0
    while shared < min(len(base), len(token.surface)) and base[shared] == token.surface[shared]:
        shared += 1
    tail = base[shared:]
    if shared == 0 or not canonical.endswith(tail):
        return None
    return canonical[: len(canonical) - len(tail)] + token.surface[shared:]


def _place(text: SourceText, token: Token) -> str:
    position = text.doc.text_position(text.key_path, token.start)
    return f"{text.doc.path}:{position.line}" if position else text.doc.path
