"""The context-free model's own fitting: scikit-learn's grouped folds, and the optimum of its logistic
regression (scikit-learn, where installed, as the reference)."""

from __future__ import annotations

import numpy as np
import pytest
from jbcompile.audit.model import ALPHA, CandidateFeatures, fit_pairwise_logistic, group_folds


def test_the_folds_are_scikit_learns_group_folds() -> None:
    model_selection = pytest.importorskip("sklearn.model_selection")
    rng = np.random.default_rng(3)
    for templates, folds in ((7, 5), (40, 5), (5, 5), (12, 3)):
        groups = rng.integers(0, templates, size=400)
        groups[:templates] = np.arange(templates)  # every template has rows
        expected = [
            test for _, test in model_selection.GroupKFold(n_splits=folds).split(groups, groups=groups)
        ]
        found = group_folds(groups, folds)
        assert [f.tolist() for f in found] == [e.tolist() for e in expected]
        assert all(not set(groups[a]) & set(groups[b]) for a in found for b in found if a is not b)


def _rows() -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """Rows where a cue word in the question points to one kind of person, with noise."""
    rng = np.random.default_rng(0)
    persons = ["七十代の男性", "二十代の男性", "背の高い女性", "背の低い女性", "学生", "会社員"]
    questions = ["忘れっぽいのは誰ですか？", "すぐ覚えたのは誰ですか？", "遅れて来たのは誰ですか？"]
    rows, gold_first = [], []
    for _ in range(600):
        first, second = rng.choice(len(persons), size=2, replace=False)
        question = int(rng.integers(len(questions)))
        cue = (first + question) % 2 == 0
        rows.append((questions[question], persons[first], persons[second]))
        gold_first.append(bool(cue) != (rng.random() < 0.2))
    return rows, np.array(gold_first)


def test_the_fit_is_the_regularised_logistic_regressions_optimum() -> None:
    linear_model = pytest.importorskip("sklearn.linear_model")
    rows, gold_first = _rows()
    features = CandidateFeatures.of(rows)
    train = np.arange(len(rows)) % 4 != 0
    weights = fit_pairwise_logistic(features, train, gold_first)
    dense = np.zeros((features.pairs, features.tokens))
    np.add.at(dense, (features.pair, features.token), features.count)
    difference = dense[features.first] - dense[features.second]
    # the same objective: summed logistic loss + ALPHA·rows/2·|w|², i.e. C = 1 / (ALPHA·rows)
    reference = linear_model.LogisticRegression(
        C=1 / (ALPHA * train.sum()), fit_intercept=False, tol=1e-12, max_iter=10_000
    ).fit(difference[train], gold_first[train])
    expected = difference @ reference.coef_[0]
    found = features.margins(weights, np.arange(len(rows)))
    assert np.allclose(found, expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
    assert ((found > 0) == (expected > 0)).all()


def test_a_row_is_scored_the_same_whatever_the_order_of_the_training_rows() -> None:
    rows, gold_first = _rows()
    order = np.random.default_rng(1).permutation(len(rows))
    train = np.arange(len(rows)) % 4 != 0
    one = CandidateFeatures.of(rows)
    other = CandidateFeatures.of([rows[i] for i in order])
    scores = one.margins(fit_pairwise_logistic(one, train, gold_first), np.arange(len(rows)))
    shuffled = other.margins(
        fit_pairwise_logistic(other, train[order], gold_first[order]), np.arange(len(rows))
    )
    assert np.allclose(scores[order], shuffled, atol=1e-6)
    assert ((scores[order] > 0) == (shuffled > 0)).all()
