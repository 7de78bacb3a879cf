"""The pronoun rules as data and as a pure function (also used by the translator)."""

from __future__ import annotations

import pytest
from jbcompile.checks import apply_pronoun_rules, find_pronouns, load_pronoun_rules
from jbcompile.checks.morph import tokenize
from jbcompile.diagnostics import DiagnosticError
from jbcompile.schema.rules import PronounRule


@pytest.fixture(scope="module")
def rules():
    return load_pronoun_rules()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("彼らの意見は聞き入れられなかった。", "かれらの意見は聞き入れられなかった。"),
        ("彼女らは帰った。彼等も帰った。", "かれらは帰った。かれらも帰った。"),
        ("彼女等の話", "かれらの話"),
        ("その人は、彼女たちの意見を聞いた。", "その人は、かれらの意見を聞いた。"),
        ("彼女達と彼たちと彼達", "かれらとかれらとかれら"),
        ("彼女らしい答えだ。", "彼女らしい答えだ。"),
        ("いかにも彼らしい答えだ。", "いかにも彼らしい答えだ。"),
        ("彼らしくない振る舞いだった。", "彼らしくない振る舞いだった。"),
        ("彼は来たが、彼女は来なかった。", "彼は来たが、彼女は来なかった。"),
        ("かれらはもう知っている。", "かれらはもう知っている。"),
    ],
)
def test_apply_pronoun_rules(rules, text, expected):
    assert apply_pronoun_rules(text, rules) == expected
    # Applying the rules to their own output changes nothing.
    assert apply_pronoun_rules(expected, rules) == expected


def test_matches_carry_offsets_and_rule_names(rules):
    text = "駅で彼らと話した。"
    [match] = find_pronouns(text, tokenize(text), rules.rules)
    assert (match.start, match.end, match.old, match.new, match.rule) == (2, 4, "彼ら", "かれら", "karera")


def test_scope_limits_where_a_rule_applies():
    rule = PronounRule.model_validate(
        {
            "name": "only-vocab",
            "match": [{"surface": "彼"}, {"surface": "ら"}],
            "replace": "かれら",
            "scope": ["vocab"],
        }
    )
    assert apply_pronoun_rules("彼らの本", [rule], scope="translation") == "彼らの本"
    assert apply_pronoun_rules("彼らの本", [rule], scope="vocab") == "かれらの本"


def test_an_invalid_rule_file_is_a_positioned_diagnostic(tmp_path):
    path = tmp_path / "pronouns.yaml"
    path.write_text("rules:\n  - name: x\n    match: []\n    replace: かれら\n", "utf-8")
    with pytest.raises(DiagnosticError) as error:
        load_pronoun_rules(path)
    [diagnostic] = error.value.diagnostics
    assert diagnostic.path and diagnostic.path.endswith("pronouns.yaml") and diagnostic.line == 3
