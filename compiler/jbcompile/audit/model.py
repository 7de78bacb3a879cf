"""A context-free baseline: a linear model that sees a row's question and two candidate options, never
the context, and learns which candidate is gold (logistic regression, fitted by scikit-learn's
``SGDClassifier`` with the logistic loss: a fixed number of passes, so its time does not depend on how
separable the rows are).

A candidate is described by the part of its option text that differs from the other candidate's
(「七十代」 of 「七十代の男性」 against 「二十代の男性」): its hashed character n-grams, its character
bigrams crossed with the question's (so the model can learn "this kind of question → this kind of
person"), and — where the rows class their questions the same way across templates (BBQ's polarity,
``kind_column``) — its n-grams and its length crossed with that class, so that "negative → the longer
option" or "negative → this kind of word" is learnable on other templates' questions; and, where the
rows name the stereotyped group's option (``mark_column``), whether it is that one, crossed with the class
("negative → the stereotyped person"). A row becomes the difference of its two candidates' features,
labelled by whether the first is gold — a symmetric pairwise ranking, so option order carries nothing.
It is scored by grouped cross-validation (``GroupKFold``): no template is both trained and scored on, so
a template's own wording cannot leak (a probe may hold out whole categories instead:
``held_out_by_category``).

The model trains on at most ``SAMPLE_CAP`` rows: those with the smallest hash of their question,
candidates and gold — a sample that does not depend on the order rows come in. Rows differ mostly in
their context, which the model never sees, so the sample holds few distinct rows (about 1,300 of
20,000 in the bundled ``full``): each distinct row of a template is fitted once, weighted by how often it
occurs, and its score goes to every copy. It needs at least ``MIN_TEMPLATES`` templates (five folds, one
template held out at the least).
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .probe import Batch, Probe, ProbeNotRun, Scored, Tally, TemplateKey

if TYPE_CHECKING:
    from ..sidework import SideProcess

SAMPLE_CAP = 20_000
MIN_TEMPLATES = 5
FOLDS = 5
FEATURES = 2**18
PASSES = 10
LENGTH_STEPS = (1, 2, 4, 8, 16, 32)  # a candidate's length as the steps it reaches: bounded, monotone
# What the model imports (ahead of the audit, in a build's side process: see Probe.libraries).
LIBRARIES = ("sklearn.linear_model", "sklearn.model_selection", "sklearn.feature_extraction.text")


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


# a row as the model sees it: question class, question, two candidates, which candidate is the marked one
# (0: neither, 1: the first, 2: the second)
Sampled = tuple[str, str, str, str, int]


class PairwiseModelProbe(Probe):
    """A probe that fits this module's context-free model; a design says which rows and candidates in
    :meth:`pairs`."""

    variants = ("model",)
    chance = "1/2: a guess between the two candidates"
    libraries = LIBRARIES
    fewest_judged = MIN_TEMPLATES  # its folds: fewer templates are a few decisions of the model
    sample_cap: ClassVar[int] = SAMPLE_CAP
    # a column that classes a row's question the same way in every template (BBQ's polarity), read where
    # the rows have it: its value is crossed with the candidates' features
    kind_column: ClassVar[str] = "question_polarity"
    # a column that names one option as the stereotyped group's (BBQ's target_label), read where the rows
    # have it: a model that knows the stereotype knows which person it is
    mark_column: ClassVar[str] = "target_label"
    optional_columns = (kind_column, mark_column)
    # hold out a whole category at a time, not a template: the model then learns only what a category's
    # texts share with the other categories' (a style), never the words of its own groups
    held_out_by_category: ClassVar[bool] = False

    @abstractmethod
    def pairs(self, batch: Batch) -> Pairs: ...

    def kinds(self, batch: Batch) -> tuple[np.ndarray, list[str]]:
        """Per row, the code of its question's class (into the returned texts; "" without one)."""
        if not batch.has(self.kind_column):
            return np.zeros(len(batch), dtype=np.int64), [""]
        codes, texts = batch.codes(self.kind_column)
        return codes[:, 0], texts

    def marked(self, batch: Batch, pairs: Pairs) -> np.ndarray:
        """Per row, which candidate ``mark_column`` names: 1 the first, 2 the second, 0 neither."""
        if not batch.has(self.mark_column):
            return np.zeros(len(batch), dtype=np.int64)
        mark = batch.ints(self.mark_column)
        return np.where(mark == pairs.first, 1, np.where(mark == pairs.second, 2, 0))

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
        kind_codes, kind_texts = self.kinds(batch)
        marked = self.marked(batch, pairs)
        codes = np.concatenate([pairs.codes, kind_codes[:, None], marked[:, None]], axis=1)
        hashes = [
            np.array([_hash(text) for text in values] or [0], dtype=np.uint64)
            for values in (*pairs.texts, kind_texts, ["", "1", "2"])
        ]
        key = gold_first.astype(np.uint64)
        for column, (hashed, multiplier) in enumerate(zip(hashes, _MULTIPLIERS[: len(hashes)], strict=True)):
            key = key ^ (hashed[codes[rows, column]] * np.uint64(multiplier))
        sample = self.__dict__.setdefault("_sample", [])
        cut = self.__dict__.get("_cut")
        wanted = np.flatnonzero(key <= cut) if cut is not None else np.arange(len(rows))
        wanted = wanted[np.lexsort((wanted, key[wanted]))][: self.sample_cap]
        template_codes, template_keys = batch.templates()
        question_texts, first_texts, second_texts = pairs.texts
        for index in wanted.tolist():
            row = rows[index]
            question, first, second, kind, mark = codes[row].tolist()
            sample.append(
                (
                    int(key[index]),
                    seen + int(row),
                    template_keys[template_codes[row]],
                    kind_texts[kind],
                    question_texts[question],
                    first_texts[first],
                    second_texts[second],
                    mark,
                    bool(gold_first[index]),
                )
            )
        if len(sample) > 2 * self.sample_cap:
            sample.sort()
            del sample[self.sample_cap :]
            self.__dict__["_cut"] = np.uint64(sample[-1][0])

    def begin_finish(self, side: SideProcess | None) -> None:
        """Fit in ``side`` (the build's second process, which loaded scikit-learn while the rows were
        made) while this process finishes the other probes."""
        if side is not None:
            try:
                training = self._training_set()
            except ProbeNotRun:
                return  # finish() says so
            self.__dict__["_fitting"] = (
                training,
                side.submit(cross_validated_scores, *training, self.held_out_by_category),
            )

    def finish(self) -> Tally:
        fitting = self.__dict__.pop("_fitting", None)
        if fitting is None:
            training = self._training_set()
            scores = cross_validated_scores(*training, self.held_out_by_category)
        else:
            training, scores = fitting[0], fitting[1].result()
        templates, _, gold_first, groups = training
        if scores is None:
            raise ProbeNotRun("scikit-learn is not installed (pip install scikit-learn)", warn=True)
        hits = np.where(scores == 0, 0.5, ((scores > 0) == gold_first).astype(np.float64))
        scored = Scored(np.ones(len(groups), dtype=bool), hits[:, None], chance=np.full(len(groups), 0.5))
        self.tally.add(groups, templates, scored)
        return self.tally

    def _training_set(self) -> tuple[list[TemplateKey], list[Sampled], np.ndarray, np.ndarray]:
        """The sample's templates (sorted), per row (question class, question, first, second), whether
        the first is gold, and the index of its template."""
        sample = sorted(self.__dict__.get("_sample", []))[: self.sample_cap]
        templates = sorted({entry[2] for entry in sample})
        if len(templates) < MIN_TEMPLATES:
            raise ProbeNotRun(f"fewer than {MIN_TEMPLATES} templates to cross-validate over by template")
        index = {key: i for i, key in enumerate(templates)}
        texts = [(k, q, a, b, m) for _, _, _, k, q, a, b, m, _ in sample]
        gold_first = np.array([entry[8] for entry in sample])
        groups = np.array([index[entry[2]] for entry in sample])
        return templates, texts, gold_first, groups


def cross_validated_scores(
    templates: list[TemplateKey],
    texts: list[Sampled],
    gold_first: np.ndarray,
    groups: np.ndarray,
    by_category: bool = False,
) -> np.ndarray | None:
    """Each row's decision value from a model that never saw its template (grouped k-fold; with
    ``by_category``, its category); None when scikit-learn is not installed. A pure function of its
    arguments, so it can run in another process."""
    try:
        import sklearn.linear_model  # noqa: F401
    except ImportError:
        return None
    distinct: dict[tuple[int, Sampled, bool], int] = {}
    copies = np.array(
        [
            distinct.setdefault(row, len(distinct))
            for row in zip(groups.tolist(), texts, gold_first.tolist(), strict=True)
        ],
        dtype=np.intp,
    )
    weights = np.bincount(copies, minlength=len(distinct)).astype(np.float64)
    groups_of = np.array([group for group, _, _ in distinct], dtype=np.intp)
    gold_of = np.array([gold for _, _, gold in distinct], dtype=bool)
    features = _features([text for _, text, _ in distinct])
    if by_category:
        categories = sorted({category for category, _ in templates})
        groups_of = np.array([categories.index(templates[group][0]) for group in groups_of], dtype=np.intp)
    folds = min(FOLDS, len(set(groups_of.tolist())))
    if folds < 2:
        return np.zeros(len(groups))
    scores = grouped_decisions(features, gold_of, weights, groups_of, folds=folds)
    return scores[copies]


def grouped_decisions(
    features,
    labels: np.ndarray,
    weights: np.ndarray,
    groups: np.ndarray,
    *,
    folds: int,
    intercept: bool = False,
) -> np.ndarray:
    """Each row's decision value from a logistic model fitted on the other folds' groups (templates);
    0 where the training folds hold one class only (the model could only guess). Call it where
    scikit-learn is importable."""
    from sklearn.linear_model import SGDClassifier
    from sklearn.model_selection import GroupKFold

    scores = np.zeros(len(labels))
    for train, test in GroupKFold(n_splits=folds).split(features, groups=groups):
        if len(set(labels[train].tolist())) < 2:
            continue
        model = SGDClassifier(
            loss="log_loss", alpha=1e-4, max_iter=PASSES, tol=None, fit_intercept=intercept, random_state=0
        )
        model.fit(features[train], labels[train], sample_weight=weights[train])
        scores[test] = model.decision_function(features[test])
    return scores


_MULTIPLIERS = (
    0x9E3779B97F4A7C15,
    0xC2B2AE3D27D4EB4F,
    0x165667B19E3779F9,
    0x27D4EB2F165667C5,
    0x85EBCA77C2B2AE63,
    0x61C8864680B583EB,
)


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def _tokens(kind: str, question: str, option: str, marked: bool) -> list[str]:
    grams = [option[i : i + n] for n in (1, 2, 3) for i in range(len(option) - n + 1)]
    crossed = {option[i : i + 2] for i in range(len(option) - 1)} or {option}
    asked = {question[i : i + 2] for i in range(len(question) - 1)}
    steps = [f"{step}" for step in LENGTH_STEPS if len(option) >= step]
    tokens = [f"o\x1f{g}" for g in grams] + [
        f"x\x1f{q}\x1f{g}" for q in sorted(asked) for g in sorted(crossed)
    ]
    tokens += [f"n\x1f{step}" for step in steps] + (["t"] if marked else [])
    if kind:  # "this class of question → this kind of word / the longer option / the marked person"
        tokens += [f"k\x1f{kind}\x1f{g}" for g in grams] + [f"m\x1f{kind}\x1f{step}" for step in steps]
        tokens += [f"t\x1f{kind}"] if marked else []
    return tokens


def _features(rows: list[Sampled]):
    """Per row: features(first) − features(second), a sparse matrix. Each distinct candidate (with its
    question class, question and mark) is featurised once: a question and its persons recur over many
    rows."""
    from sklearn.feature_extraction.text import HashingVectorizer

    from .probe import differing_parts

    vectorizer = HashingVectorizer(
        analyzer=lambda entry: _tokens(*entry), n_features=FEATURES, alternate_sign=False, norm=None
    )
    index: dict[tuple[str, str, str, bool], int] = {}
    sides: tuple[list[int], list[int]] = ([], [])
    for kind, question, first, second, mark in rows:
        parts = differing_parts(first, second)
        for side, candidate, marked in zip(sides, parts, (mark == 1, mark == 2), strict=True):
            side.append(index.setdefault((kind, question, candidate, marked), len(index)))
    distinct = vectorizer.transform(list(index)).tocsr()
    return (distinct[sides[0]] - distinct[sides[1]]).tocsr()
