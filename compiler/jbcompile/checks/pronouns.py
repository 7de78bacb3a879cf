"""The pronoun rules (彼ら → かれら) as pure functions over text, shared by the linter and the translator.

The rules are data (``sources/rules/pronouns.yaml``): a rule matches a sequence of MeCab tokens, so
彼らしい (彼 + らしい) is never taken for the pronoun 彼ら (彼 + ら).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..schema.rules import PronounRule, PronounRulesFile, PronounScope, TokenPattern
from .morph import Token, tokenize

PRONOUNS_FILE = "pronouns.yaml"


@dataclass(frozen=True)
class PronounMatch:
    """Characters ``start:end`` of the text are the pronoun ``old``, to be written ``new``."""

    start: int
    end: int
    old: str
    new: str
    rule: str


def _matches(token: Token, pattern: TokenPattern) -> bool:
    return (
        (pattern.surface is None or token.surface == pattern.surface)
        and (pattern.lemma is None or token.lemma == pattern.lemma)
        and (pattern.pos is None or token.has_pos(pattern.pos))
    )


def find_pronouns(
    text: str,
    tokens: Sequence[Token],
    rules: Sequence[PronounRule],
    scope: PronounScope | None = None,
) -> list[PronounMatch]:
    """Every non-overlapping pronoun match in ``text``, left to right; the first rule that fits wins."""
    active = [rule for rule in rules if scope is None or scope in rule.scope]
    found: list[PronounMatch] = []
    index = 0
    while index < len(tokens):
        for rule in active:
            width = len(rule.match)
            window = tokens[index : index + width]
            contiguous = all(a.end == b.start for a, b in zip(window, window[1:], strict=False))
            if (
                len(window) == width
                and contiguous
                and all(_matches(t, p) for t, p in zip(window, rule.match, strict=True))
            ):
                start, end = window[0].start, window[-1].end
                if text[start:end] != rule.replace:
                    found.append(PronounMatch(start, end, text[start:end], rule.replace, rule.name))
                index += width
                break
        else:
            index += 1
    return found


def apply_pronoun_rules(
    text: str, rules: PronounRulesFile | Sequence[PronounRule], scope: PronounScope | None = "translation"
) -> str:
    """``text`` with every pronoun the rules match rewritten.

    彼らの意見 → かれらの意見; 彼らしい stays as it is.
    """
    rule_list = rules.rules if isinstance(rules, PronounRulesFile) else list(rules)
    matches = find_pronouns(text, tokenize(text), rule_list, scope)
    for match in reversed(matches):
        text = text[: match.start] + match.new + text[match.end :]
    return text


def load_pronoun_rules(path: Path | None = None) -> PronounRulesFile:
    """Read ``pronouns.yaml`` (default: the bundled ``sources/rules/pronouns.yaml``).

    Raises :class:`~jbcompile.diagnostics.DiagnosticError` with positions when the file is invalid.
    """
    from .ruledata import load_rule_file

    return load_rule_file(PronounRulesFile, path)
