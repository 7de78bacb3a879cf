"""A context-free baseline: a linear model that sees a row's question and two candidate options, never
the context, and learns which candidate is gold: L2-regularised logistic regression, fitted to its
optimum by Newton's method in numpy (:func:`fit_pairwise_logistic`), so the figures depend only on the
rows and a build does not import a machine-learning library for it.

A candidate is described by the part of its option text that differs from the other candidate's
(「七十代」 of 「七十代の男性」 against 「二十代の男性」): its character n-grams, and its character
bigrams crossed with the question's (so the model can learn "this kind of question → this kind of
person"), counted, each distinct token its own weight. A row becomes the difference of its two
candidates' features, labelled by whether the first is gold — a symmetric pairwise ranking, so option
order carries nothing. It is scored by grouped cross-validation (:func:`group_folds`): no template is both
trained and scored on, so a template's own wording cannot leak.

The model trains on at most ``SAMPLE_CAP`` rows: those with the smallest hash of their question,
candidates and gold — a sample that does not depend on the order rows come in. It needs at least
``MIN_TEMPLATES`` templates (five folds, one template held out at the least).
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import numpy as np

from .probe import Batch, Probe, ProbeNotRun, Scored, Tally, TemplateKey

SAMPLE_CAP = 20_000
MIN_TEMPLATES = 5
FOLDS = 5
ALPHA = 1e-4  # the L2 penalty per training row
NEWTON_STEPS = 100  # at most; the fit stops when the gradient has shrunk by GRADIENT_TOLERANCE
CG_STEPS = 250  # conjugate-gradient steps per Newton step, at most
GRADIENT_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Pairs:
    """The rows a model probe answers: which rows, their two candidates (option indexes), and per row
    the codes of its question, first and second candidate's texts into ``texts`` (see
    :meth:`jbcompile.audit.probe.Batch.codes`)."""

    rows: np.ndarray
    first: np.ndarray
    second: np.ndarray
    codes: np.ndarray  # (rows, 3): question, first candidate, second candidate
    texts: tuple[list[str], list[str], list[str]]


class PairwiseModelProbe(Probe):
    """A probe that fits this module's context-free model; a design says which rows and candidates in
    :meth:`pairs`."""

    variants = ("model",)
    chance = "1/2: a guess between the two candidates"
    sample_cap: ClassVar[int] = SAMPLE_CAP

    @abstractmethod
    def pairs(self, batch: Batch) -> Pairs: ...

    def add(self, batch: Batch) -> None:
        """Keep the rows whose sampling key is among the ``sample_cap`` smallest seen so far. The key
        hashes the row's question, candidates and gold, so the sample does not depend on row order."""
        pairs = self.pairs(batch)
        label = batch.ints("label")
        rows = np.flatnonzero(pairs.rows & ((label == pairs.first) | (label == pairs.second)))
        seen = self.__dict__.get("_seen", 0)
        self.__dict__["_seen"] = seen + len(batch)
        if not len(rows):
            return
        gold_first = label[rows] == pairs.first[rows]
        hashes = [
            np.array([_hash(text) for text in values] or [0], dtype=np.uint64) for values in pairs.texts
        ]
        key = gold_first.astype(np.uint64)
        for column, (hashed, multiplier) in enumerate(zip(hashes, _MULTIPLIERS, strict=True)):
            key = key ^ (hashed[pairs.codes[rows, column]] * np.uint64(multiplier))
        sample = self.__dict__.setdefault("_sample", [])
        cut = self.__dict__.get("_cut")
        wanted = np.flatnonzero(key <= cut) if cut is not None else np.arange(len(rows))
        wanted = wanted[np.lexsort((wanted, key[wanted]))][: self.sample_cap]
        codes, keys = batch.templates()
        question_texts, first_texts, second_texts = pairs.texts
        for index in wanted.tolist():
            row = rows[index]
            question, first, second = pairs.codes[row].tolist()
            sample.append(
                (
                    int(key[index]),
                    seen + int(row),
                    keys[codes[row]],
                    question_texts[question],
                    first_texts[first],
                    second_texts[second],
                    bool(gold_first[index]),
                )
            )
        if len(sample) > 2 * self.sample_cap:
            sample.sort()
            del sample[self.sample_cap :]
            self.__dict__["_cut"] = np.uint64(sample[-1][0])

    def finish(self) -> Tally:
        sample = sorted(self.__dict__.get("_sample", []))[: self.sample_cap]
        templates = sorted({entry[2] for entry in sample})
        if len(templates) < MIN_TEMPLATES:
            raise ProbeNotRun(f"fewer than {MIN_TEMPLATES} templates to cross-validate over by template")
        features = CandidateFeatures.of([(q, a, b) for _, _, _, q, a, b, _ in sample])
        gold_first = np.array([entry[6] for entry in sample], dtype=bool)
        index = {key: i for i, key in enumerate(templates)}
        groups = np.array([index[entry[2]] for entry in sample])
        scores = np.zeros(len(sample))
        for test in group_folds(groups, min(FOLDS, len(templates))):
            train = np.ones(len(sample), dtype=bool)
            train[test] = False
            if len(set(gold_first[train].tolist())) < 2:  # one class only: the model can only guess
                continue
            weights = fit_pairwise_logistic(features, train, gold_first)
            scores[test] = features.margins(weights, test)
        hits = np.where(scores == 0, 0.5, ((scores > 0) == gold_first).astype(np.float64))
        keys: list[TemplateKey] = templates
        scored = Scored(np.ones(len(sample), dtype=bool), hits[:, None], chance=np.full(len(sample), 0.5))
        self.tally.add(groups, keys, scored)
        return self.tally


_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def _tokens(question: str, option: str) -> list[str]:
    grams = [option[i : i + n] for n in (1, 2, 3) for i in range(len(option) - n + 1)]
    crossed = {option[i : i + 2] for i in range(len(option) - 1)} or {option}
    asked = {question[i : i + 2] for i in range(len(question) - 1)}
    return [f"o\x1f{g}" for g in grams] + [f"x\x1f{q}\x1f{g}" for q in sorted(asked) for g in sorted(crossed)]


@dataclass(frozen=True)
class CandidateFeatures:
    """The features of each distinct (question, candidate) pair, as a sparse matrix in coordinate form
    (``pair``, ``token``, ``count``), and per row its first and second candidate's pair. Each distinct
    pair is featurised once: a question and its persons recur over many rows. Tokens are numbered as
    they first occur (no hashing, so no two tokens share a weight)."""

    pair: np.ndarray
    token: np.ndarray
    count: np.ndarray
    pairs: int
    tokens: int
    first: np.ndarray
    second: np.ndarray

    @classmethod
    def of(cls, rows: list[tuple[str, str, str]]) -> CandidateFeatures:
        from .probe import differing_parts

        index: dict[tuple[str, str], int] = {}
        sides: tuple[list[int], list[int]] = ([], [])
        parts: dict[tuple[str, str], tuple[str, str]] = {}
        for question, first, second in rows:
            if (first, second) not in parts:
                parts[first, second] = differing_parts(first, second)
            for side, candidate in zip(sides, parts[first, second], strict=True):
                side.append(index.setdefault((question, candidate), len(index)))
        vocabulary: dict[str, int] = {}
        pair_ids: list[int] = []
        token_ids: list[int] = []
        for number, (question, candidate) in enumerate(index):
            found = [vocabulary.setdefault(token, len(vocabulary)) for token in _tokens(question, candidate)]
            token_ids.extend(found)
            pair_ids.extend([number] * len(found))
        # repeated tokens of one pair become one entry with their count
        cells, counts = np.unique(
            np.array(pair_ids, dtype=np.int64) * max(len(vocabulary), 1)
            + np.array(token_ids, dtype=np.int64),
            return_counts=True,
        )
        width = max(len(vocabulary), 1)
        return cls(
            pair=cells // width,
            token=cells % width,
            count=counts.astype(np.float64),
            pairs=len(index),
            tokens=len(vocabulary),
            first=np.array(sides[0], dtype=np.int64),
            second=np.array(sides[1], dtype=np.int64),
        )

    def margins(self, weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Per row of ``rows``: its first candidate's score (its features times ``weights``) minus its
        second's."""
        scores = np.bincount(self.pair, weights=self.count * weights[self.token], minlength=self.pairs)
        return scores[self.first[rows]] - scores[self.second[rows]]


def group_folds(groups: np.ndarray, folds: int) -> list[np.ndarray]:
    """Rows split into ``folds`` test sets, whole groups (templates) at a time: the largest groups first,
    each into the fold with fewest rows so far (the rule of scikit-learn's ``GroupKFold``, whose folds
    these are)."""
    unique, group_of = np.unique(groups, return_inverse=True)
    sizes = np.bincount(group_of)
    order = np.argsort(sizes, kind="stable")[::-1]
    load = np.zeros(folds)
    fold_of = np.zeros(len(unique))
    for group in order.tolist():
        lightest = int(np.argmin(load))
        load[lightest] += sizes[group]
        fold_of[group] = lightest
    row_folds = fold_of[group_of]
    return [np.flatnonzero(row_folds == fold) for fold in range(folds)]


def fit_pairwise_logistic(
    features: CandidateFeatures, train: np.ndarray, gold_first: np.ndarray
) -> np.ndarray:
    """The weights of L2-regularised logistic regression on the training rows (mask ``train``): the
    minimum of the summed logistic loss of the rows' margins plus ``ALPHA``/2 · rows · |w|² — the
    objective scikit-learn's ``SGDClassifier(loss="log_loss", alpha=ALPHA)`` approaches with its passes —
    found by Newton's method (conjugate gradients inside, a backtracking line search around) until the
    gradient is ``GRADIENT_TOLERANCE`` of its size at the start. The result depends on the rows, not on
    their order.

    Identical training rows (the same two pairs and gold) are one term weighed by their count, and only
    the pairs and tokens of training rows take part (the others' weights stay 0), so a step costs the
    distinct pairs' features and the distinct rows, not the rows."""
    rows = _DistinctRows.of(features, train, gold_first)
    sign, weight = rows.sign, rows.weight
    penalty = ALPHA * float(train.sum())

    def objective(margins: np.ndarray, squared_norm: float) -> float:
        return _dot(weight, np.logaddexp(0.0, -sign * margins)) + 0.5 * penalty * squared_norm

    weights = np.zeros(rows.tokens)
    margins = np.zeros(len(sign))
    first_norm = 0.0
    for _ in range(NEWTON_STEPS):
        wrong = _sigmoid(-sign * margins)  # the probability the model gives the other candidate
        gradient = rows.transposed(-weight * sign * wrong) + penalty * weights
        norm = float(np.sqrt(_dot(gradient, gradient)))
        first_norm = first_norm or norm
        if norm <= GRADIENT_TOLERANCE * first_norm or norm == 0.0:
            break
        step = _conjugate_gradient(
            partial(_hessian_times, rows, weight * wrong * (1.0 - wrong), penalty),
            -gradient,
            tolerance=min(0.5, np.sqrt(norm / first_norm)) * norm,
        )
        step_margins = rows.margins(step)
        squared = _dot(weights, weights)
        cross, step_squared = _dot(weights, step), _dot(step, step)
        now = objective(margins, squared)
        slope = _dot(gradient, step)
        size = 1.0
        while size > 1e-10:
            moved = squared + 2 * size * cross + size**2 * step_squared
            if objective(margins + size * step_margins, moved) <= now + 1e-4 * size * slope:
                break
            size *= 0.5
        weights = weights + size * step
        margins = margins + size * step_margins
    every = np.zeros(features.tokens)
    every[rows.token_ids] = weights
    return every


@dataclass(frozen=True)
class _DistinctRows:
    """The distinct training rows: each row's two pairs (``first``, ``second``, numbered among the pairs
    the rows use), its sign (+1 when the first candidate is gold) and its count; and the features of those
    pairs (coordinate form: ``pair``, ``token``, ``count``) over the tokens they use (``token_ids``: their
    numbers in :class:`CandidateFeatures`). A row's features are its first pair's minus its second's."""

    first: np.ndarray
    second: np.ndarray
    sign: np.ndarray
    weight: np.ndarray
    pair: np.ndarray
    token: np.ndarray
    count: np.ndarray
    pairs: int
    token_ids: np.ndarray

    @property
    def tokens(self) -> int:
        return len(self.token_ids)

    @classmethod
    def of(cls, features: CandidateFeatures, train: np.ndarray, gold_first: np.ndarray) -> _DistinctRows:
        combined = np.stack(
            [features.first[train], features.second[train], gold_first[train].astype(np.int64)], axis=1
        )
        distinct, counts = np.unique(combined, axis=0, return_counts=True)
        used_pairs, local = np.unique(distinct[:, :2], return_inverse=True)
        local = local.reshape(-1, 2)
        renumber = np.full(features.pairs, -1)
        renumber[used_pairs] = np.arange(len(used_pairs))
        entries = renumber[features.pair] >= 0
        token_ids, token = np.unique(features.token[entries], return_inverse=True)
        return cls(
            first=local[:, 0],
            second=local[:, 1],
            sign=np.where(distinct[:, 2] == 1, 1.0, -1.0),
            weight=counts.astype(np.float64),
            pair=renumber[features.pair[entries]],
            token=token.reshape(-1),
            count=features.count[entries],
            pairs=len(used_pairs),
            token_ids=token_ids,
        )

    def margins(self, weights: np.ndarray) -> np.ndarray:
        """Per row: ``weights`` times its features."""
        scores = np.bincount(self.pair, weights=self.count * weights[self.token], minlength=self.pairs)
        return scores[self.first] - scores[self.second]

    def transposed(self, per_row: np.ndarray) -> np.ndarray:
        """Per token: the sum over rows of ``per_row`` times the row's feature."""
        per_pair = np.bincount(self.first, weights=per_row, minlength=self.pairs) - np.bincount(
            self.second, weights=per_row, minlength=self.pairs
        )
        return np.bincount(self.token, weights=self.count * per_pair[self.pair], minlength=self.tokens)


def _hessian_times(
    rows: _DistinctRows, curvature: np.ndarray, penalty: float, vector: np.ndarray
) -> np.ndarray:
    """The objective's Hessian times ``vector``, given each row's curvature of the loss."""
    return rows.transposed(curvature * rows.margins(vector)) + penalty * vector


def _conjugate_gradient(
    apply: Callable[[np.ndarray], np.ndarray], target: np.ndarray, *, tolerance: float
) -> np.ndarray:
    """An approximate solution of apply(x) = target (apply: a symmetric positive definite operator)."""
    solution = np.zeros_like(target)
    residual = target.copy()
    direction = residual.copy()
    residual_squared = _dot(residual, residual)
    for _ in range(CG_STEPS):
        if np.sqrt(residual_squared) <= tolerance:
            break
        applied = apply(direction)
        length = residual_squared / _dot(direction, applied)
        solution += length * direction
        residual -= length * applied
        previous, residual_squared = residual_squared, _dot(residual, residual)
        direction = residual + (residual_squared / previous) * direction
    return solution


def _dot(first: np.ndarray, second: np.ndarray) -> float:
    """A dot product without BLAS: on a busy machine, waking BLAS's threads for each of a fit's thousand
    small products cost milliseconds apiece, more than the products."""
    return float(np.multiply(first, second).sum())


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * values))
