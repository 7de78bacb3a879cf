"""JA109–JA111: the answer options of a row — unknown wordings, duplicates, persons the context names."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...diagnostics import Severity
from ..base import Finding, Rule, register
from ..corpus import CheckContext, SourceText
from ..morph import Token
from ..slots import Person, people

if TYPE_CHECKING:
    from ...designs import VocabPersons
    from ...loader import KeyPath
    from ...projecttypes import Project, SourceTemplate


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def _occurs(option: str, text: str, lang: str) -> bool:
    """English options start a sentence with their own article ("The retiree") where the context has "a
    retiree" or "the retiree": the article aside, the words must be the context's."""
    if lang == "ja":
        return option in text
    return _ARTICLE.sub("", option.strip()).casefold() in text.casefold()


def person_pairs(project: Project, persons: VocabPersons) -> Iterator[tuple[Person, Person]]:
    """Every pair of persons that one row of a template can show side by side as options."""
    for first_slot, second_slot in persons.pairs:
        (first_group, first_only), (second_group, second_only) = (
            persons.slots[first_slot],
            persons.slots[second_slot],
        )
        for first in people(project, first_group, first_only):
            for second in people(project, second_group, second_only):
                yield first, second


def _vocab_persons(template: SourceTemplate) -> VocabPersons | None:
    from ...designs import get_kind

    return get_kind(template.kind).vocab_persons(template)


def _other_kind_rows(ctx: CheckContext, template: SourceTemplate) -> list[dict]:
    """Rows of a design whose persons are not vocab slots; each distinct (context, options) once."""
    from ...designs import get_kind

    seen: set[tuple] = set()
    rows = []
    for row in get_kind(template.kind).expand(template, ctx.project):
        key = (row.get("context"), row.get("ans0"), row.get("ans1"), row.get("ans2"))
        if key not in seen:
            seen.add(key)
            rows.append(row)
    return rows


# Auxiliaries that inflect a wording without changing what it says: politeness (ます, です), the past
# (た), the copula (だ). ず, the lemma of the negative ん/ず (わかりません, わからず), is the negation ない.
_INFLECTING = frozenset({"ます", "です", "た", "だ"})
_NEGATION = {"ず": "ない", "ぬ": "ない"}
_HALFWIDTH_KANA = re.compile(r"[\uff61-\uff9f][\uff9e\uff9f]?")  # a voicing mark joins its kana
_KATAKANA = re.compile(r"[\u30a1-\u30f6]")


def _key(token: Token) -> str | None:
    """What a token contributes to a wording whatever its inflection and spelling; None: nothing.

    A content word is its lemma and the reading of its base form (分から, わかり, ワカラ → 分かる/ワカル;
    言え → 言う/イエル, not 言わ → 言う/イウ); an auxiliary its lemma, the negative ず as ない."""
    if token.has_pos("助動詞"):
        lemma = _NEGATION.get(token.lemma, token.lemma or token.surface)
        return None if lemma in _INFLECTING else lemma
    return f"{token.lemma}/{token.kana_base}" if token.lemma else token.surface


def _keyed(tokens: Sequence[Token]) -> list[tuple[str, int]]:
    """The key of each token that has one, with the token's index."""
    return [(key, index) for index, token in enumerate(tokens) if (key := _key(token)) is not None]


def _as_hiragana(text: str) -> tuple[str, list[int]] | None:
    """``text`` with its katakana, half-width too, written in hiragana (ﾜｶﾘﾏｾﾝ, ワカリマセン → わかりません),
    and for each character of the result where it starts in ``text``; None when there is no katakana.

    MeCab reads neither half-width katakana nor most inflected words in katakana."""
    out: list[str] = []
    starts: list[int] = []
    index = 0
    while index < len(text):
        match = _HALFWIDTH_KANA.match(text, index)
        piece = unicodedata.normalize("NFKC", match.group()) if match else text[index]
        for char in _KATAKANA.sub(lambda m: chr(ord(m.group()) - 0x60), piece):
            out.append(char)
            starts.append(index)
        index = match.end() if match else index + 1
    folded = "".join(out)
    return None if folded == text else (folded, starts)


def wording_matches(wanted: Sequence[str], tokens: Sequence[Token]) -> Iterator[tuple[int, int]]:
    """Where (start, end offsets) the keys of a wording occur among ``tokens``: the same words in any
    inflection (わかりません, わからなかった for わからない) and spelling (分からない), the inflecting
    auxiliaries that follow included (わからなかった, not わからなかっ)."""
    keyed = _keyed(tokens)
    keys = [key for key, _ in keyed]
    for i in range(len(keys) - len(wanted) + 1):
        if keys[i : i + len(wanted)] == list(wanted):
            last = keyed[i + len(wanted) - 1][1]
            while (
                last + 1 < len(tokens)
                and tokens[last + 1].has_pos("助動詞")
                and _key(tokens[last + 1]) is None
            ):
                last += 1
            yield tokens[keyed[i][1]].start, tokens[last].end


@register
class UnknownOptionWording(Rule):
    """An unknown-option wording (dataset.yaml unknown_options) inside a context or a filler.

    The third option of every row says that the context does not settle the question (不明,
    判断できない …). When the same expression appears in the context or names a person, the "cannot
    be determined" answer becomes ambiguous with the text itself. The wording is found by its words, not
    its letters: in any inflection and spelling (わからない also as 分からない, わかりません,
    わからなかった, ﾜｶﾗﾅｲ), never inside a longer word (不明 is not in 不明瞭).

    Anti-pattern:
        その{{NAME1}}は、使い方がわからないと言った。   (わからない is an unknown-option wording)

    Better:
        その{{NAME1}}は、使い方を店員に尋ねた。
    """

    code = "JA109"
    name = "unknown-option-wording"

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        expressions = [
            (e, [key for key, _ in _keyed(ctx.tokens(e))]) for e in ctx.project.dataset.unknown_texts("ja")
        ]
        expressions = [(e, wanted) for e, wanted in expressions if wanted]
        for text in ctx.texts:
            if text.role not in ("context", "filler", "option", "word"):
                continue
            found = self._occurrences(ctx.literal_tokens(text), expressions)
            folded = _as_hiragana(text.text)
            if folded is not None:
                kana, starts = folded
                for (start, expression), end in self._occurrences(ctx.tokens(kana), expressions).items():
                    found.setdefault((starts[start], expression), starts[end - 1] + 1)
            for (start, expression), end in sorted(found.items()):
                written = text.text[start:end]
                spelt = "" if written == expression else f" (written 「{written}」)"
                yield Finding.at(
                    text,
                    start,
                    f"「{expression}」{spelt} is an unknown-option wording; in a {text.role} it blurs the "
                    "answer that the context does not settle the question",
                    hint="rephrase the text, or drop the wording from unknown_options",
                )

    @staticmethod
    def _occurrences(
        tokens: Sequence[Token], expressions: list[tuple[str, list[str]]]
    ) -> dict[tuple[int, str], int]:
        """(start, wording) → end of each occurrence of a wording among ``tokens``."""
        return {
            (start, expression): end
            for expression, wanted in expressions
            for start, end in wording_matches(wanted, tokens)
        }


@register
class DuplicateOptions(Rule):
    """Two answer options of a row are the same text once the fillers are in.

    A row offers two persons and the unknown option; when two of them read the same, a model cannot
    pick the right one and the gold label is meaningless. It happens when two groups share a filler
    wording, when a filler reads like an unknown-option wording, or when a template words its persons'
    options itself (``answer:`` of a person slot) and the two wordings, once filled, read the same or
    one reads like an unknown-option wording. The build refuses such a row whatever this rule's setting
    (B010); this rule names the source that makes it.

    Anti-pattern:
        age_old: [高齢の男性]  age_young: [高齢の男性]
        NAME1: {group: age_old, answer: その人}  NAME2: {group: age_young, answer: その人}

    Better:
        age_old: [高齢の男性]  age_young: [二十代の男性]
        NAME1: {group: age_old}  NAME2: {group: age_young}   (the options are the fillers)
    """

    code = "JA110"
    name = "duplicate-options"
    severity = Severity.ERROR
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        project = ctx.project
        unknowns = set(project.unknown_texts)
        reported: set[tuple] = set()
        for template in project.templates:
            persons = _vocab_persons(template)
            if persons is None:
                for row in _other_kind_rows(ctx, template):
                    options = [row[k] for k in ("ans0", "ans1", "ans2") if row.get(k) is not None]
                    duplicated = len(options) > 1 and len(set(options)) < len(options)
                    if duplicated and (template.path, tuple(options)) not in reported:
                        reported.add((template.path, tuple(options)))
                        yield Finding(
                            template.doc,
                            ("id",),
                            f"a row has identical options: {options}",
                            hint="give the persons of a row option wordings that differ from each other and "
                            "from the unknown options",
                        )
                continue
            for pair in shown_pairs(ctx, template, persons):
                first, second = pair
                worded = second if second.wording is not None else first
                if first.option == second.option and worded.wording is not None:
                    same = (template.path, worded.wording.key_path, first.option)
                    if same not in reported:
                        reported.add(same)
                        yield Finding(
                            template.doc,
                            worded.wording.key_path,
                            f"both persons of a row read 「{first.option}」 as options (the answer wording "
                            f"of {worded.slot}, with {first.person.text} and {second.person.text})",
                            hint="word each person's answer so that it names that person (by the slot that "
                            "holds them), or leave `answer` out to show the fillers",
                        )
                elif first.option == second.option and (template.path, first.option) not in reported:
                    reported.add((template.path, first.option))
                    yield Finding(
                        template.doc,
                        ("persons",),
                        f"both persons of a row read 「{first.option}」 as options",
                        hint="the two person groups need different filler wordings",
                    )
                for shown in pair:
                    if shown.option not in unknowns:
                        continue
                    if shown.wording is not None:
                        key = (template.path, shown.wording.key_path)
                        doc, key_path = template.doc, shown.wording.key_path
                        message = (
                            f"the answer wording of {shown.slot} reads 「{shown.option}」, also an "
                            "unknown-option wording"
                        )
                    else:
                        key = (shown.person.doc.path, shown.person.option_key_path)
                        doc, key_path = shown.person.doc, shown.person.option_key_path
                        message = f"the person option 「{shown.option}」 is also an unknown-option wording"
                    if key not in reported:
                        reported.add(key)
                        yield Finding(doc, key_path, message, hint="name the person by their group")


@register
class OptionNotInContext(Rule):
    """A person option does not occur in the context it answers about.

    A person option names one of the two people of the context; when the option wording of a
    filler (``option:`` in the vocab), or a template's own answer wording of a person slot (``answer:``,
    filled as the row fills it), differs from the way the context names that person, a model has to
    guess which option is which person.

    Anti-pattern:
        fillers: [{text: 七十代の男性, option: 高齢者}]

    Better:
        fillers: [{text: 七十代の男性, option: 七十代の男性}]   (or leave option out)
    """

    code = "JA111"
    name = "option-not-in-context"
    japanese = False

    def check(self, ctx: CheckContext) -> Iterable[Finding]:
        project = ctx.project
        for template in project.templates:
            persons = _vocab_persons(template)
            if persons is None:
                yield from self._other_kind(ctx, template)
                continue
            yield from self._wordings(ctx, template, persons)
            contexts = [t for t in ctx.texts if t.template is template and t.field in persons.contexts]
            reported: set[KeyPath] = set()
            for slot_name, (group, only) in persons.slots.items():
                if slot_name in persons.answers:
                    continue  # the template words this slot's option: _wordings reads it
                for person in people(project, group, only):
                    if not person.explicit_option or person.option_key_path in reported:
                        continue
                    filled = [ctx.filled(text, {slot_name: person.text}) for text in contexts]
                    texts = [f.text for f in filled if f is not None]
                    if any(not _occurs(person.option, text, project.lang) for text in texts):
                        reported.add(person.option_key_path)
                        yield Finding(
                            person.doc,
                            person.option_key_path,
                            f"the option 「{person.option}」 of 「{person.text}」 does not occur in "
                            f"the context of template {template.id}",
                            hint="use an option wording the context contains, or leave `option` out",
                        )

    def _wordings(
        self, ctx: CheckContext, template: SourceTemplate, persons: VocabPersons
    ) -> Iterable[Finding]:
        """A template's own answer wordings, filled as a row fills them, against its filled contexts."""
        lang = ctx.project.lang
        contexts = [t for key_path in persons.contexts if (t := template_text(template, key_path, lang))]
        reported: set[KeyPath] = set()
        for pair in shown_pairs(ctx, template, persons):
            for shown in pair:
                if shown.wording is None or shown.wording.key_path in reported:
                    continue
                filled = [ctx.filled(text, shown.values) for text in contexts]
                missing = [
                    f.text for f in filled if f is not None and not _occurs(shown.option, f.text, lang)
                ]
                if missing:
                    reported.add(shown.wording.key_path)
                    yield Finding(
                        template.doc,
                        shown.wording.key_path,
                        f"the answer wording of {shown.slot} reads 「{shown.option}」, which the context "
                        f"「{missing[0]}」 never says",
                        hint="word the answer as the context names the person (with the template's slots), "
                        "or leave `answer` out",
                    )

    def _other_kind(self, ctx: CheckContext, template: SourceTemplate) -> Iterable[Finding]:
        reported: set[str] = set()
        for row in _other_kind_rows(ctx, template):
            info = row.get("answer_info") or {}
            for key, value in info.items():
                if not value or value[-1] == "unknown":
                    continue
                option = row.get(key) or value[0]
                context = row.get("context") or ""
                if option and not _occurs(option, context, ctx.project.lang) and option not in reported:
                    reported.add(option)
                    yield Finding(
                        template.doc,
                        ("id",),
                        f"the option 「{option}」 does not occur in its context",
                        hint="word the option as the context names the person",
                    )


@dataclass(frozen=True)
class ShownOption:
    """A person option as a row shows it: who fills which slot, and what words the option."""

    slot: str
    person: Person
    option: str
    values: dict[str, str]  # the person slots of the row, as filled
    wording: SourceText | None  # the template's answer wording; None: the vocab filler's option


def template_text(template: SourceTemplate, key_path: KeyPath, lang: str) -> SourceText | None:
    """The template's text at ``key_path`` in ``lang`` (a string or a ``{ja:, en:}`` text), if any."""
    from ...loader import value_at

    value = value_at(template.doc.data, key_path)
    text = value.get(lang) if isinstance(value, dict) else value if lang == "ja" else None  # as text_in reads
    if not isinstance(text, str):
        return None
    where = tuple(key_path) + ((lang,) if isinstance(value, dict) else ())
    return SourceText(template.doc, where, text, "template", "option", template)


def shown_pairs(
    ctx: CheckContext, template: SourceTemplate, persons: VocabPersons
) -> Iterator[tuple[ShownOption, ShownOption]]:
    """The two person options of every pair of persons a row can show, in both slot assignments (a
    template's answer wording words whoever fills its slot), each distinct pair once."""
    project = ctx.project
    wordings = {slot: template_text(template, path, project.lang) for slot, path in persons.answers.items()}
    seen: set[tuple[str, ...]] = set()
    for a, b in persons.pairs:
        (a_group, a_only), (b_group, b_only) = persons.slots[a], persons.slots[b]
        for first in people(project, a_group, a_only):
            for second in people(project, b_group, b_only):
                for x, y in ((first, second), (second, first)) if wordings else ((first, second),):
                    values = {a: x.text, b: y.text}
                    one = _option(ctx, wordings.get(a), x, values)
                    other = _option(ctx, wordings.get(b), y, values)
                    if one is None or other is None or (a, b, x.text, y.text, one, other) in seen:
                        continue
                    seen.add((a, b, x.text, y.text, one, other))
                    yield (
                        ShownOption(a, x, one, values, wordings.get(a)),
                        ShownOption(b, y, other, values, wordings.get(b)),
                    )


def _option(
    ctx: CheckContext, wording: SourceText | None, person: Person, values: dict[str, str]
) -> str | None:
    if wording is None:
        return person.option
    filled = ctx.filled(wording, values)
    return None if filled is None else filled.text
