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
    # cues that follow the question's polarity
    ("bbq", "stereotyped-person", lambda: built_bbq(bbq_rows(biased_always=True))),
    ("bbq", "option-length", lambda: built_bbq(bbq_rows(negative_longer=True))),
    ("bbq", "option-position", lambda: built_bbq(bbq_rows(position_by_polarity=True))),
    ("bbq", "mention-count", lambda: built_bbq(bbq_rows(negative_named_twice=True))),
    ("bbq", "mention-order", lambda: built_bbq(bbq_rows(negative_named_first=True))),
    ("bbq", "mention-order", lambda: built_bbq(bbq_rows(negative_named_first=False))),
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


@pytest.mark.parametrize(
    ("kind", "probe", "rows"), PLANTED, ids=[f"{k}:{p}:{i}" for i, (k, p, _) in enumerate(PLANTED)]
)
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
    assert found.overall.rule == "negative → the later last mention, non-negative → the earlier last mention"
    assert found.scores == "disambiguated rows" and found.overall.chance == 0.5


POLAR = [
    (
        {"biased_always": True},
        "stereotyped-person",
        1.0,
        "negative → the stereotyped group's person, non-negative → the other person",
    ),
    (
        {"negative_longer": True},
        "option-length",
        1.0,
        "negative → the longer option, non-negative → the shorter option",
    ),
    # a disambiguated gold at ans0 or ans1 by polarity (every position gold in a third of all rows):
    # the rule is right on all disambiguated rows and on a third of the ambiguous ones
    (
        {"position_by_polarity": True},
        "option-position",
        2 / 3,
        "negative → option 0, non-negative → option 1",
    ),
    (
        {"negative_named_twice": True},
        "mention-count",
        1.0,
        "negative → named more often, non-negative → named less often",
    ),
    # the ambiguous context names the person who did the negative act first (or last): only first
    # mentions see it, and a rule must read them for both polarities to find all of it
    (
        {"negative_named_first": True},
        "mention-order",
        1.0,
        "negative → the earlier first mention, non-negative → the later first mention",
    ),
    (
        {"negative_named_first": False},
        "mention-order",
        1.0,
        "negative → the later first mention, non-negative → the earlier first mention",
    ),
]


@pytest.mark.parametrize(
    ("flags", "probe", "value", "rule"), POLAR, ids=[f"{p}:{i}" for i, (_, p, _, _) in enumerate(POLAR)]
)
def test_a_cue_that_follows_the_question_polarity_is_read_whole(audit, flags, probe, value, rule) -> None:
    """A fixed rule is right on half of such rows (the negative ones or the other ones); the probe reads
    the cue in full and names its direction, while the balanced parts of the rows stay at chance."""
    report = audit("bbq", built_bbq(bbq_rows(**flags)))
    found = result(report, probe)
    assert found.overall.value == pytest.approx(value, abs=1e-4) and found.overall.rule == rule
    assert all(scope.rule == rule for scope in found.categories.values())
    untouched = {"mention-order-disambiguating", "option-length", "stereotyped-person", "mention-count"} - {
        probe
    }
    for other in untouched:
        assert result(report, other).overall.value == pytest.approx(0.5, abs=1e-4), other


@pytest.mark.parametrize("kind", ["bbq", "jubaku", "sobaco"])
def test_position_rules_by_polarity_only_where_rows_carry_one(kind: str) -> None:
    """bbq rows carry a question polarity, so its position probe has a rule per polarity too; jubaku's
    and sobaco's rows have none, so theirs keep the fixed positions alone."""
    import importlib

    from jbcompile.audit.run import probe_inputs

    module = importlib.import_module(f"jbcompile.designs.{kind}.probes")
    (found,) = [probe for probe in module.probes(probe_inputs(None)) if probe.name == "option-position"]
    crossed = [variant for variant in found.variants if not variant.startswith("option ")]
    if kind == "bbq":
        assert len(crossed) == 6 and "negative → option 0, non-negative → option 1" in crossed
        assert "question_polarity" in found.columns
    else:
        assert crossed == [] and found.columns == ("label",)


def test_lexical_overlap_is_reported_and_judged_only_with_a_bar_of_its_own(audit) -> None:
    """Each statement of the balanced rows repeats its question's words (as a reader finds the answer):
    the probe reports it, the audit passes; a bar in dataset.yaml makes it judged."""
    from jbcompile.schema.dataset import AuditSettings, ProbeThreshold

    rows = built_bbq(bbq_rows())
    report = audit("bbq", rows)
    found = result(report, "lexical-overlap")
    assert found.overall.value == 1.0 and found.overall.rule == "more shared with the question"
    assert found.overall.threshold is None and not found.exceeded() and report.passed
    from types import SimpleNamespace

    from jbcompile.emit.card import audit_table

    lines = audit_table(SimpleNamespace(audit=report))["configs"]["test"]
    assert next(line for line in lines if line["probe"] == "lexical-overlap")["verdict"].startswith(
        "reported, not judged"
    )
    judged = audit("bbq", rows, AuditSettings(probes={"lexical-overlap": ProbeThreshold(margin=0.05)}))
    assert result(judged, "lexical-overlap").overall.exceeds and not judged.passed


def test_bigram_shares_agree_with_the_share_of_one_pair() -> None:
    """The vectorised count (per question, over many texts) gives what shared_share gives pair by pair:
    each bigram once, none across two texts, none with a character the text does not hold."""
    import random

    import numpy as np
    from jbcompile.audit.probe import bigram_shares, shared_share

    rng = random.Random(7)
    texts = ["".join(rng.choice("あいうab") for _ in range(rng.randint(0, 12))) for _ in range(40)]
    questions = ["".join(rng.choice("あいうabc") for _ in range(rng.randint(0, 6))) for _ in range(6)]
    pairs = [(rng.randrange(40), rng.randrange(6)) for _ in range(200)]
    found = bigram_shares(texts, questions, np.array([t for t, _ in pairs]), np.array([q for _, q in pairs]))
    assert found.tolist() == pytest.approx([shared_share(questions[q], texts[t]) for t, q in pairs])


def test_a_persons_own_words_run_to_the_other_persons_next_mention() -> None:
    from jbcompile.designs.bbq.probes import _own_words

    context = "駅前でaとbが話していた。そのaは財布を落とした。そのaは笑った。そのbは拾った。"
    assert _own_words(context, "a", "b") == (
        "aと\naは財布を落とした。そのaは笑った。その",
        "bが話していた。その\nbは拾った。",
    )
    assert _own_words(context, "a", None) == (context[3:], "")


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
