"""The rule set of ``jbcompile check``: one module per rule (or per small group of related rules).

Importing this package registers every rule (``all_rules`` and ``get_rule`` read them). Codes are
stable: JA0xx are reported by the runner itself (crashes, suppressions, settings, fixes), JA1xx by the
rules over the sources.
"""

from ..base import RULES, Rule
from . import (  # noqa: F401  (imported for their registration)
    ja001_runner,
    ja101_pronouns,
    ja102_proper_names,
    ja103_demonstratives,
    ja104_question_form,
    ja105_question_pair,
    ja106_slot_boundaries,
    ja107_unknown_words,
    ja108_spelling_variants,
    ja109_options,
    ja112_mentions,
    ja113_width_punctuation,
    ja114_translation_state,
    ja115_nested_quotes,
    ja116_repeated_mentions,
    ja117_time_contradictions,
    ja118_review_state,
    ja119_confounds,
    ja120_hidden_characters,
)


def all_rules() -> list[type[Rule]]:
    """Every rule, ordered by code."""
    return [RULES[code] for code in sorted(RULES)]


def get_rule(code: str) -> type[Rule] | None:
    return {rule.code: rule for rule in all_rules()}.get(code.upper())
