"""The figures: a rule's direction chosen on the other templates, intervals from resampled templates,
bars from dataset.yaml, and the same figures on every run."""

from __future__ import annotations

import numpy as np
import pytest
from jbcompile.audit.probe import Scored, Tally
from jbcompile.audit.stats import bootstrap, choose_variants, figures, wilson
from jbcompile.schema.dataset import AuditSettings, ProbeThreshold
from pydantic import ValidationError

from tests.audit.conftest import result
from tests.audit.rows import bbq_rows, built_bbq


def test_a_templates_variant_is_chosen_on_the_other_templates_of_its_category() -> None:
    category = np.array([0, 0, 0, 1, 1])
    hits = np.array([[9, 1], [8, 2], [3, 7], [1, 9], [2, 8]], dtype=float)
    # template 2 leans to variant 1, but its category's others to variant 0: it is scored on variant 0
    assert choose_variants(category, hits).tolist() == [0, 0, 0, 1, 1]
    # a category of one template has no other templates: its first variant
    assert choose_variants(np.array([0]), np.array([[0.0, 5.0]])).tolist() == [0]


def test_the_interval_resamples_templates_not_rows() -> None:
    hits, rows = np.array([10.0, 0.0]), np.array([10.0, 10.0])
    low, high = bootstrap(hits, rows, np.zeros(2, dtype=int), 2000, seed=1)
    assert low == 0.0 and high == 1.0  # two templates: a resample holds one of them twice half the time
    many = bootstrap(np.full(50, 5.0), np.full(50, 10.0), np.zeros(50, dtype=int), 2000, seed=1)
    assert many == (0.5, 0.5)
    assert bootstrap(hits, rows, np.zeros(2, dtype=int), 500, seed=3) == bootstrap(
        hits, rows, np.zeros(2, dtype=int), 500, seed=3
    )


def test_the_rows_interval_is_scipys_wilson_interval_to_the_last_bit() -> None:
    from scipy.stats import binomtest

    for trials in (1, 2, 3, 7, 10, 49, 50, 333, 1000, 4096, 57354):
        for successes in sorted({0, 1, trials // 3, trials // 2, trials - 1, trials}):
            interval = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
            assert wilson(successes, trials) == (interval.low, interval.high), (successes, trials)


def test_figures_per_category_and_overall() -> None:
    tally = Tally(2)
    codes = np.array([0, 0, 1, 1, 2, 2])
    keys = [("A", "a1"), ("A", "a2"), ("B", "b1")]
    hits = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [1, 0]], dtype=float)
    tally.add(codes, keys, Scored(np.ones(6, dtype=bool), hits, chance=np.full(6, 0.5)))
    found = figures(tally, ("first", "second"), majority=False, resamples=200, seed_parts=("c", "p"))
    assert found is not None and set(found.categories) == {"A", "B"}
    assert found.categories["A"].value == 0.75 and found.categories["A"].rule == "first"
    assert found.overall.rows == 6 and found.overall.templates == 3 and found.overall.chance == 0.5
    assert [t.template for t in found.templates][0] == "a1"


def test_the_same_rows_give_the_same_figures_twice(audit) -> None:
    rows = built_bbq(bbq_rows(gold_last=True))
    assert audit("bbq", rows).record() == audit("bbq", list(rows)).record()


def test_bars_come_from_the_settings(audit) -> None:
    rows = built_bbq(bbq_rows(gold_last=True, confound=True))
    default = audit("bbq", rows)
    assert result(default, "mention-order-disambiguating").overall.threshold == 0.55
    lenient = AuditSettings(
        margin=0.2,
        probes={
            "mention-order-disambiguating": ProbeThreshold(off=True),
            "attribute-confound": ProbeThreshold(max=1.0),
            "mention-order": ProbeThreshold(margin=0.3),
        },
    )
    report = audit("bbq", rows, lenient)
    disambiguating = result(report, "mention-order-disambiguating").overall
    assert disambiguating.threshold is None and not disambiguating.exceeds and disambiguating.value == 1.0
    assert not result(report, "attribute-confound").overall.exceeds
    assert result(report, "mention-order").overall.threshold == 0.8
    assert result(report, "option-position").overall.threshold == pytest.approx(1 / 3 + 0.2, abs=1e-4)
    assert report.passed and not default.passed
    with pytest.raises(ValidationError):
        ProbeThreshold(margin=0.1, max=0.5)


def test_a_rate_is_judged_on_its_point_figure_an_accuracy_on_its_lower_bound(audit) -> None:
    confounded = [row for row in built_bbq(bbq_rows(confound=True)) if row["template_id"] == "t00"]
    rows = confounded + [row for row in built_bbq(bbq_rows()) if row["template_id"] != "t00"]
    confound = result(audit("bbq", rows), "attribute-confound").overall
    assert confound.low == 0.0 < confound.value == pytest.approx(1 / 12, abs=1e-4) and confound.exceeds
    assert [t.template for t in confound.worst][0] == "t00"
