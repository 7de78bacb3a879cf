"""``jbcompile check``: MeCab-based consistency rules over the YAML sources.

In order: :mod:`.ruledata` loads ``rules/*.yaml``; :mod:`.corpus` collects every Japanese text and
its analyses (:mod:`.morph`: one tagger per process, one analysis per distinct string); each rule in
:mod:`.rules` (one module per rule, metadata on the class) yields findings; :mod:`.runner` turns them
into diagnostics (positions, severities, suppressions); :mod:`.fix` applies their edits.
"""

from .base import Finding, Rule
from .fix import FixReport, fix_sources
from .normalize import normalization_edits, normalize_text
from .pronouns import apply_pronoun_rules, find_pronouns, load_pronoun_rules
from .ruledata import RuleData, load_rule_data
from .rules import all_rules, get_rule
from .runner import run_checks, severity_of

__all__ = [
    "Finding",
    "FixReport",
    "Rule",
    "RuleData",
    "all_rules",
    "apply_pronoun_rules",
    "find_pronouns",
    "fix_sources",
    "get_rule",
    "load_pronoun_rules",
    "load_rule_data",
    "normalization_edits",
    "normalize_text",
    "run_checks",
    "severity_of",
]
