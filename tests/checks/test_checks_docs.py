"""The rule registry is the single source of the rule docs: --explain, docs/checks.md, stable codes."""

from __future__ import annotations

import re
from pathlib import Path

from jbcompile.checks import all_rules
from jbcompile.checks.docs import DOC_END, DOC_START, explain, rules_markdown
from jbcompile.diagnostics import Severity

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_every_rule_has_metadata_and_a_documented_anti_pattern():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules) and len({r.name for r in rules}) == len(rules)
    for rule in rules:
        assert re.fullmatch(r"JA[01]\d\d", rule.code), rule
        assert re.fullmatch(r"[a-z][a-z0-9-]+", rule.name), rule
        assert isinstance(rule.severity, Severity)
        doc = rule.doc()
        assert rule.description() and rule.description().endswith((".", "?", ")")), rule.code
        assert "\nAnti-pattern:\n" in doc and "\nBetter:\n" in doc, f"{rule.code} lacks its examples"
        assert doc.index("Anti-pattern:") < doc.index("Better:")
        assert explain(rule).startswith(f"{rule.code} {rule.name}")


def test_the_eleven_rules_of_the_issue_have_codes():
    names = {rule.name for rule in all_rules()}
    assert {
        "pronoun-karera",
        "proper-name",
        "demonstrative",
        "question-form",
        "question-pair",
        "slot-boundary",
        "unknown-word",
        "spelling-variant",
        "unknown-option-wording",
        "duplicate-options",
        "option-not-in-context",
        "mentions",
        "width-punctuation",
        "translation-state",
    } <= names


def test_docs_checks_md_is_generated_from_the_registry():
    text = DOCS.read_text("utf-8")
    start, end = text.index(DOC_START), text.index(DOC_END) + len(DOC_END)
    assert text[start:end] + "\n" == rules_markdown(), (
        "docs/checks.md is out of date: regenerate the rules section with "
        "`python -m jbcompile.checks.docs docs/checks.md`"
    )
