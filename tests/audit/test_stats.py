"""The figures: a rule's direction chosen per scope on the rows it reports, intervals from resampled
templates, bars from dataset.yaml, and the same figures on every run."""

from __future__ import annotations

import numpy as np
import pytest
from jbcompile.audit.probe import Scored, Tally
from jbcompile.audit.stats import Z_975, bootstrap, choose_variant, figures, wilson
from jbcompile.schema.dataset import AuditSettings, ProbeThreshold
from jbcompile.templating import stable_hash
from pydantic import ValidationError

from tests.audit.conftest import result
from tests.audit.rows import CATEGORIES, bbq_rows, built_bbq


def tally_of(templates: list[tuple[str, str, int, int]]) -> Tally:
    """A two-variant tally: per (category, template) its rows and how many of them variant 0 answers
    (the complementary variant 1 answers the rest)."""
    tally = Tally(2)
    for category, template, rows, first in templates:
        hits = np.array([[1.0, 0.0]] * first + [[0.0, 1.0]] * (rows - first))
        tally.add(np.zeros(rows, dtype=int), [(category, template)], Scored(np.ones(rows, bool), hits))
    return tally


def test_a_scope_is_answered_by_its_best_fixed_direction() -> None:
    # one 100-row template one way, three 20-row templates the other: the fixed rule "variant 0" answers
    # 100 of 160 rows (62.5%); a direction chosen per template on the *other* templates would answer none
    tally = tally_of([("A", "big", 100, 100), ("A", "s1", 20, 0), ("A", "s2", 20, 0), ("A", "s3", 20, 0)])
    found = figures(tally, ("first", "second"), majority=False, resamples=200, seed_parts=("c", "p"))
    assert found is not None
    assert found.categories["A"].value == 0.625 and found.categories["A"].rule == "first"
    # the worst templates are those its direction answers, under that direction
    assert [(t.template, t.value) for t in found.categories["A"].ranked][:2] == [("big", 1.0), ("s1", 0.0)]
    # each scope picks its own direction: B leans the other way, and overall variant 1 wins (90 + 60 > 100)
    tally = tally_of([("A", "a", 100, 100), ("B", "b1", 90, 0), ("B", "b2", 60, 0)])
    found = figures(tally, ("first", "second"), majority=False, resamples=200, seed_parts=("c", "p"))
    assert found is not None
    assert (found.categories["A"].rule, found.categories["A"].value) == ("first", 1.0)
    assert (found.categories["B"].rule, found.categories["B"].value) == ("second", 1.0)
    assert (found.overall.rule, found.overall.value) == ("second", 0.6)


def test_a_direction_is_chosen_on_hits_first_on_ties() -> None:
    assert choose_variant(np.array([[9.0, 1.0], [8.0, 2.0], [3.0, 7.0]])) == 0
    assert choose_variant(np.array([[1.0, 9.0], [3.0, 7.0]])) == 1
    assert choose_variant(np.array([[0.5, 0.5], [1 / 3 + 1 / 6, 0.5]])) == 0


def test_templates_leaning_both_ways_do_not_fall_below_chance(audit) -> None:
    # in each category, half the templates name the person who did the negative act last, half first: no
    # fixed direction carries over, and the figure is chance (a direction chosen on each template's
    # other templates, where the opposite side is the larger, would be wrong on every row: 0%)
    last = built_bbq(bbq_rows(gold_last=True))
    first = built_bbq(bbq_rows(gold_named_first=True))
    mixed = [row for row in last if int(row["template_id"][1:]) // 2 % 2]
    mixed += [row for row in first if not int(row["template_id"][1:]) // 2 % 2]
    found = result(audit("bbq", mixed), "mention-order-disambiguating")
    assert found.overall.value == found.overall.chance == 0.5
    assert all(scope.value == 0.5 for scope in found.categories.values())
    # and a side that outweighs the other is found, named by its direction
    # (11 of 12 templates: the interval is simultaneous over the pick among four pairs of directions,
    # so 10 of 12 no longer clears the bar, its lower end at 0.625% reaching chance)
    lopsided = [row for row in first if row["template_id"] == "t00"]
    lopsided += [row for row in last if row["template_id"] != "t00"]
    found = result(audit("bbq", lopsided), "mention-order-disambiguating")
    assert found.overall.value == pytest.approx(11 / 12, abs=1e-4) and found.overall.exceeds
    assert found.overall.rule == "negative → the later last mention, non-negative → the earlier last mention"


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
    from scipy.special import ndtri
    from scipy.stats import binomtest

    assert ndtri(0.975) == Z_975
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
    assert [t.template for t in found.overall.ranked][0] == "a1"


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
            "mention-order": ProbeThreshold(margin=0.5),
        },
    )
    report = audit("bbq", rows, lenient)
    disambiguating = result(report, "mention-order-disambiguating").overall
    assert disambiguating.threshold is None and not disambiguating.exceeds and disambiguating.value == 1.0
    assert not result(report, "attribute-confound").overall.exceeds
    assert result(report, "mention-order").overall.threshold == 1.0
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


def test_a_point_figure_over_the_bar_with_an_interval_below_it_has_a_status_of_its_own(audit) -> None:
    from types import SimpleNamespace

    from jbcompile.emit.card import audit_table

    # per category four of six templates lean one way: over the bar, within it at the lower end
    mirrored = {"t00", "t01", "t02", "t03"}
    rows = [r for r in built_bbq(bbq_rows(gold_last=True)) if r["template_id"] not in mirrored]
    rows += [r for r in built_bbq(bbq_rows(gold_named_first=True)) if r["template_id"] in mirrored]
    report = audit("bbq", rows)
    found = result(report, "mention-order")
    assert found.overall.low < found.overall.threshold < found.overall.value
    assert found.overall.status == "over, not significant" and not found.overall.exceeds and report.passed
    assert [name for name, _ in found.scopes("over, not significant")] == ["overall", *CATEGORIES]
    assert result(report, "option-position").overall.status == "within"
    line = next(line for line in audit_table(SimpleNamespace(audit=report))["configs"]["test"])
    assert line["probe"] == "mention-order" and line["rule"].startswith("negative → the later last mention")
    assert line["verdict"] == (
        "within; over the bar on the point figure, not significantly, in all 66.7%, Age 66.7%, "
        "Disability_status 66.7%"
    )
    off = audit("bbq", rows, AuditSettings(probes={"mention-order": ProbeThreshold(off=True)}))
    assert result(off, "mention-order").overall.status == "not judged"


def test_one_template_alone_is_never_above_by_an_accuracy(audit) -> None:
    # read in its better direction, any template that leans one way is right on all its rows: one
    # template proves nothing about a cue across templates (a starter benchmark of one template)
    rows = [r for r in built_bbq(bbq_rows(gold_last=True, confound=True)) if r["template_id"] == "t00"]
    report = audit("bbq", rows)
    order = result(report, "mention-order-disambiguating").overall
    assert order.value == 1.0 and order.status == "over, not significant" and not order.exceeds
    assert result(report, "attribute-confound").overall.exceeds  # a defect in the rows counts at once
    two = [r for r in built_bbq(bbq_rows(gold_last=True)) if r["template_id"] in ("t00", "t02")]
    assert result(audit("bbq", two), "mention-order-disambiguating").overall.exceeds


def test_the_interval_of_a_picked_direction_is_simultaneous_over_the_pick() -> None:
    """Reporting the best of k pairs of directions is k tests at once: each tail is 2.5%/k, so the same
    hits give a lower end that is lower with more pairs, and one pair keeps the plain 95% interval."""
    from jbcompile.audit.probe import Tally
    from jbcompile.audit.stats import pick_tail

    assert pick_tail(2) == 0.025 and pick_tail(8) == 0.025 / 4 and pick_tail(9) == 0.025 / 5
    rng = np.random.default_rng(0)
    hits = np.round(rng.uniform(12, 24, size=20))
    lows = []
    for pairs in (1, 4):
        tally = Tally(2 * pairs)
        for t, got in enumerate(hits):
            tally.sums[("c", f"t{t}")] = np.array(
                [24, 12, 0, got, *[12] * (pairs - 1), 24 - got, *[12] * (pairs - 1)]
            )
        found = figures(
            tally, tuple(str(v) for v in range(2 * pairs)), majority=False, resamples=2000, seed_parts=("x",)
        )
        assert found is not None and found.overall.value == pytest.approx(hits.sum() / 480)
        lows.append(found.overall.low)
    assert lows[1] < lows[0]
    plain = bootstrap(
        hits, np.full(20, 24.0), np.zeros(20, dtype=int), 2000, stable_hash("audit", "x", "overall")
    )
    assert lows[0] == pytest.approx(min(plain[0], wilson(hits.sum(), 480)[0]))
