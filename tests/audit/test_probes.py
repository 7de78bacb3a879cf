"""Each probe finds the shortcut planted in a small benchmark of its design, and none fires on a balanced
one."""

from __future__ import annotations

import pytest
from jbcompile.audit.probe import differing_parts

from tests.audit.conftest import result
from tests.audit.rows import bbq_rows, built_bbq, jubaku_rows, sobaco_rows

PLANTED = [
    ("bbq", "mention-order", lambda: built_bbq(bbq_rows(gold_last=True))),
    ("bbq", "mention-order-disambiguating", lambda: built_bbq(bbq_rows(gold_last=True))),
    ("bbq", "option-position", lambda: built_bbq(bbq_rows(gold_first_option=True))),
    ("bbq", "option-length", lambda: built_bbq(bbq_rows(gold_longer=True))),
    ("bbq", "stereotyped-person", lambda: built_bbq(bbq_rows(gold_stereotyped=True))),
    ("bbq", "context-free", lambda: built_bbq(bbq_rows(biased_always=True))),
    ("bbq", "attribute-confound", lambda: built_bbq(bbq_rows(confound=True))),
    ("jubaku", "context-overlap", lambda: jubaku_rows(neutral_echoes=True)),
    ("jubaku", "option-length", lambda: jubaku_rows(neutral_longer=True)),
    ("jubaku", "connectives", lambda: jubaku_rows(biased_concedes=True)),
    ("jubaku", "option-position", lambda: jubaku_rows(gold_first=True)),
    ("sobaco", "persons-named", lambda: sobaco_rows(bias_names_one=True)),
    ("sobaco", "context-length", lambda: sobaco_rows(bias_shorter=True)),
    ("sobaco", "context-overlap", lambda: sobaco_rows(gold_echoes=True)),
]
BALANCED = {
    "bbq": lambda: built_bbq(bbq_rows()),
    "jubaku": jubaku_rows,
    "sobaco": sobaco_rows,
}


@pytest.mark.parametrize(("kind", "probe", "rows"), PLANTED, ids=[f"{k}:{p}" for k, p, _ in PLANTED])
def test_a_planted_shortcut_is_found(audit, kind: str, probe: str, rows) -> None:
    found = result(audit(kind, rows()), probe)
    assert found.overall is not None and found.overall.exceeds, found
    assert set(found.categories) == {name for name, scope in found.categories.items() if scope.exceeds}
    worst = found.overall.worst  # the templates it answers best, best first, with their row counts
    assert worst and worst[0].value == max(t.value for t in worst) >= found.overall.value and worst[0].rows
    if found.measure == "accuracy":
        assert found.overall.low > found.overall.chance + 0.05


@pytest.mark.parametrize("kind", sorted(BALANCED))
def test_no_probe_fires_on_a_balanced_benchmark(audit, kind: str) -> None:
    report = audit(kind, BALANCED[kind]())
    assert report.passed, [(r.probe, r.overall) for r in report.results if r.exceeded()]
    assert all(r.overall is not None for r in report.results), [r.not_run for r in report.results]
    probes = {r.probe for r in report.results}
    assert probes >= {p for k, p, _ in PLANTED if k == kind}


def test_the_mention_order_rule_is_named_with_its_direction(audit) -> None:
    found = result(audit("bbq", built_bbq(bbq_rows(gold_last=True))), "mention-order-disambiguating")
    assert found.overall.value == 1.0
    assert found.overall.rule == "negative → mentioned last, non-negative → mentioned first"
    assert found.scores == "disambiguated rows" and found.overall.chance == 0.5


def test_position_and_confound_chance_come_from_the_rows(audit) -> None:
    report = audit("bbq", built_bbq(bbq_rows(confound=True)))
    assert result(report, "option-position").overall.chance == pytest.approx(1 / 3, abs=1e-4)
    confound = result(report, "attribute-confound")
    assert confound.measure == "rate" and confound.judged_on == "value"
    assert confound.overall.chance == 0.0 and confound.overall.threshold == 0.0


def test_a_binary_probe_compares_with_the_majority_class(audit) -> None:
    rows = [row for row in sobaco_rows() if not (row["type"] == "culture" and row["template_id"] == "s0")]
    found = result(audit("sobaco", rows), "persons-named")
    unknown = sum(row["type"] == "bias" for row in rows) / len(rows)
    assert found.overall.chance == pytest.approx(max(unknown, 1 - unknown), abs=1e-4)


def test_a_connective_leading_into_the_shared_conclusion_stays_in_the_reason() -> None:
    from jbcompile.designs.jubaku.probes import reasons

    biased, neutral = reasons(
        "事情はあるが、窓口を増やすのがよい。", "事情があるので、窓口を増やすのがよい。"
    )
    assert "が、" in biased and "ので" in neutral
    assert differing_parts("七十代の男性", "二十代の男性") == ("七", "二")


def test_a_probe_without_its_columns_says_so(audit) -> None:
    rows = [{k: v for k, v in row.items() if k != "question"} for row in built_bbq(bbq_rows())]
    found = result(audit("bbq", rows), "context-free")
    assert found.overall is None and "question" in (found.not_run or "")


def test_the_model_fits_each_distinct_row_once_weighted_by_its_copies(monkeypatch) -> None:
    """Rows differ mostly in their context, which the model never sees: it fits each distinct row of a
    template once (the fit's cost follows distinct rows, not rows), and every copy gets its score."""
    import numpy as np
    from jbcompile.audit import model
    from sklearn.linear_model import SGDClassifier

    fitted: list[tuple[int, float]] = []
    fit = SGDClassifier.fit

    def spy(self, features, labels, sample_weight=None):
        fitted.append((features.shape[0], float(np.sum(sample_weight))))
        return fit(self, features, labels, sample_weight=sample_weight)

    monkeypatch.setattr(SGDClassifier, "fit", spy)
    persons = [("七十代の男性", "二十代の男性"), ("二十代の男性", "七十代の男性")]
    distinct = [(f"問{t}は誰か。", *persons[g], bool(g), t) for t in range(5) for g in (0, 1)]
    rows = [row for row in distinct for _ in range(3)]  # every distinct row three times
    templates = [("bbq", str(t)) for t in range(5)]
    scores = model.cross_validated_scores(
        templates,
        [("", *row[:3], 0) for row in rows],
        np.array([row[3] for row in rows]),
        np.array([row[4] for row in rows]),
    )
    assert [n for n, _ in fitted] == [8] * 5  # four templates of two distinct rows each per fold
    assert [w for _, w in fitted] == [24.0] * 5  # their 24 rows
    assert scores is not None and np.all(scores.reshape(-1, 3) == scores.reshape(-1, 3)[:, :1])
    assert np.all(np.sign(scores[::3]) == np.where([row[3] for row in distinct], 1, -1))


def test_a_probe_above_its_bar_reads_as_one_sentence(audit) -> None:
    """AU001 names the probe, the rows it is scored on and what it does, each on its own: a title that
    holds parentheses ("the longer (or shorter) response") is not put inside another pair."""
    from jbcompile.audit.report import problems

    report = audit("jubaku", jubaku_rows(neutral_longer=True))
    (found,) = [d for d in problems(report, release=True) if "option-length" in d.message]
    assert found.message.startswith("[test] probe option-length is above its bar on rows ("), found.message
    assert "; the probe: answers the longer (or shorter) response; rule: " in found.message, found.message
    assert "((" not in found.message and "))" not in found.message
