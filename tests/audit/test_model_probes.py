"""The audit's models find what no fixed rule does: cues that depend on the question's polarity, a gold
"unknown" given away by the options' wording, a reason's opening words; and SOBACO's mention order."""

from __future__ import annotations

from typing import Any

import pytest

from tests.audit.conftest import result
from tests.audit.rows import UNKNOWN, bbq_rows, built_bbq, jubaku_rows, sobaco_rows

pytest.importorskip("sklearn")


def _disambiguated_persons(row: dict[str, Any]) -> list[int]:
    return [i for i in range(3) if i != row["unknown_label"]]


def negative_person_longer(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In every disambiguated row, the person who did the negative act gets a longer wording: the
    negative question's gold is the longer option, the non-negative one's the shorter (no fixed
    length rule is right on more than half)."""
    for row in rows:
        if row["context_condition"] != "disambig":
            continue
        persons = _disambiguated_persons(row)
        other = next(i for i in persons if i != row["label"])
        bad = row["label"] if row["question_polarity"] == "neg" else other
        row[f"ans{bad}"] = f"そこにいたほうの{row[f'ans{bad}']}"
    return rows


def persons_of_each_template(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each template's persons get words of their own (no character recurs across templates), so that
    only "which person is the stereotyped group's" carries over from one template to another."""
    texts = sorted(
        {(row["template_id"], row[f"ans{i}"]) for row in rows for i in _disambiguated_persons(row)}
    )
    own = {key: chr(0x4E00 + 3 * number) + chr(0x4E01 + 3 * number) for number, key in enumerate(texts)}
    for row in rows:
        for i in _disambiguated_persons(row):
            row[f"ans{i}"] = own[(row["template_id"], row[f"ans{i}"])]
    return rows


def test_the_context_free_model_learns_length_by_polarity(audit) -> None:
    rows = negative_person_longer(built_bbq(bbq_rows(templates=6)))  # no question recurs
    report = audit("bbq", rows)
    by_rule = result(report, "option-length").overall  # the rule by polarity finds it too
    assert by_rule.value == pytest.approx(1.0) and by_rule.rule.startswith("negative → the longer")
    found = result(report, "context-free").overall
    assert found.exceeds and found.value > 0.9, found


def test_the_context_free_model_learns_the_stereotyped_person_by_polarity(audit) -> None:
    """The old person did the negative act in every template: the negative question's gold is the
    stereotyped group's person, the non-negative one's the other (stereotyped-person, one fixed side
    for both polarities, stays at half)."""
    rows = persons_of_each_template(built_bbq(bbq_rows(biased_always=True, templates=6)))
    found = result(audit("bbq", rows), "context-free").overall
    assert found.exceeds and found.value > 0.9, found


def test_the_unknown_options_wording_by_condition_is_found(audit) -> None:
    rows = built_bbq(bbq_rows())
    for row in rows:
        if row["context_condition"] == "disambig":
            at = row["unknown_label"]
            row[f"ans{at}"] = "判断できない"
    report = audit("bbq", rows)
    found = result(report, "unknown-gold").overall
    assert found.exceeds and found.value == 1.0 and found.chance == pytest.approx(0.5), found
    assert all(not r.exceeded() for r in report.results if r.probe != "unknown-gold")
    assert UNKNOWN in {row["ans0"] for row in rows} | {row["ans1"] for row in rows}


def test_the_unknown_gold_model_reads_only_templates_with_both_golds(audit) -> None:
    """A template whose golds are all unknown, held out, would be answered by the other templates'
    balance: such templates are left out, and too few of the rest means it does not run."""
    rows = [row for row in built_bbq(bbq_rows()) if row["context_condition"] == "ambig"]
    found = result(audit("bbq", rows), "unknown-gold")
    assert found.overall is None and "both unknown and other golds" in (found.not_run or "")


def test_sobaco_mention_order_by_question(audit) -> None:
    planted = result(audit("sobaco", sobaco_rows(gold_named_last=True)), "mention-order")
    assert planted.overall.exceeds and planted.overall.value == 1.0
    assert planted.overall.rule == "q1 → mentioned later, q2 → mentioned first"
    balanced = result(audit("sobaco", sobaco_rows()), "mention-order")
    assert not balanced.exceeded() and balanced.overall.value <= 0.6


def test_jubaku_reason_edges(audit) -> None:
    planted = result(audit("jubaku", jubaku_rows(neutral_opens=True)), "reason-edges")
    assert planted.overall.exceeds and planted.overall.value == 1.0, planted.overall
    others = audit("jubaku", jubaku_rows(neutral_opens=True))
    assert all(not r.exceeded() for r in others.results if r.probe != "reason-edges")


def test_a_model_probe_is_not_judged_on_fewer_templates_than_its_folds() -> None:
    from jbcompile.audit.model import MIN_TEMPLATES
    from jbcompile.audit.report import scope_status

    assert scope_status(1.0, 0.9, 0.55, templates=3, rate=False, fewest=MIN_TEMPLATES) == (
        "over, not significant"
    )
    assert scope_status(1.0, 0.9, 0.55, templates=3, rate=False) == "above"
