"""A probe for any design whose rows have an unknown option (``unknown_label``): can a model tell
whether the gold *is* the unknown option without reading the context?

In a BBQ-style benchmark the gold is unknown exactly where the context leaves the question open, so the
answer to "is it unknown?" must come from the context. A model that sees only what else a row shows — the
question, the unknown option's wording and position, the other options — should do no better than the
majority class. It does better where those carry the context's condition: an unknown option worded
「不明」 in ambiguous rows and 「判断できない」 in disambiguated ones gives every ambiguous gold away,
and no probe that picks between the two persons sees it.

The model is logistic regression over hashed character n-grams of each part, with the question class
(BBQ's polarity) where the rows have one, fitted with the other templates held out
(:func:`.model.grouped_decisions`): a template's own wording cannot leak. Rows differ mostly in their
context, so the probe keeps per distinct view (template, what the model sees, gold class) a count,
the ``SAMPLE_CAP`` views with the smallest hash (a sample that does not depend on row order), and fits
each once, weighted by its rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .model import _MULTIPLIERS, FOLDS, LIBRARIES, MIN_TEMPLATES, _hash, grouped_decisions
from .probe import Batch, Probe, ProbeNotRun, Scored, Tally, TemplateKey

if TYPE_CHECKING:
    from ..sidework import SideProcess

MAJORITY = "the majority-class rate: the share of rows whose gold is (or is not) the unknown option"
KIND_COLUMN = "question_polarity"
# distinct views the model fits: a view is a question and its options, few per template, so a sample far
# smaller than the context-free model's still holds several of every template (and keeps the fit short)
SAMPLE_CAP = 5_000
View = tuple[tuple[str, str], ...]  # (part, text) pairs: what the model sees of a row


class UnknownGold(Probe):
    """Answers "is the gold the unknown option?" with a model of what a row shows besides its context."""

    name = "unknown-gold"
    title = "a model that tells whether the gold is the unknown option from the question and options alone"
    scores = "rows with an unknown option, of templates with both unknown and other golds"
    chance = MAJORITY
    majority_chance = True
    variants = ("model",)
    optional_columns = (KIND_COLUMN,)
    libraries = LIBRARIES
    fewest_judged = MIN_TEMPLATES  # its folds: fewer templates are a few decisions of the model

    def __init__(self, options: int = 3) -> None:
        self.options = options
        self.columns = ("question", *(f"ans{i}" for i in range(options)), "label", "unknown_label")  # type: ignore[misc]

    def add(self, batch: Batch) -> None:
        """Count the rows of each distinct view whose sampling key is among the ``SAMPLE_CAP`` smallest
        seen so far. The key hashes the template, what the model sees and the gold class, from hashes of
        the batch's distinct texts (vectorised): only a view not kept yet costs Python work."""
        unknown, label = batch.ints("unknown_label"), batch.ints("label")
        valid = (unknown >= 0) & (unknown < self.options) & (label >= 0) & (label < self.options)
        if not valid.any():
            return
        rows = np.flatnonzero(valid)
        at = unknown[rows]
        question_codes, questions = batch.codes("question")  # both shared with the other probes
        option_codes, texts = batch.codes(*(f"ans{i}" for i in range(self.options)))
        kind_codes, kinds = batch.codes(KIND_COLUMN) if batch.has(KIND_COLUMN) else (None, [""])
        kind = kind_codes[rows, 0] if kind_codes is not None else np.zeros(len(rows), dtype=np.int64)
        template_codes, template_keys = batch.templates()
        templates = template_codes[rows]
        gold = (label[rows] == at).astype(np.uint64)
        hashed = np.array([_hash(text) for text in texts] or [0], dtype=np.uint64)
        question_hashes = np.array([_hash(text) for text in questions] or [0], dtype=np.uint64)
        options = option_codes[rows]
        asked = question_codes[rows, 0]
        unknown_text = options[np.arange(len(rows)), at]
        others = hashed[options].sum(axis=1) - hashed[unknown_text]  # order-free: wraps in uint64
        template_hashes = np.array([_hash(repr(key)) for key in template_keys] or [0], dtype=np.uint64)
        kind_hashes = np.array([_hash(text) for text in kinds] or [0], dtype=np.uint64)
        key = gold
        for part, multiplier in zip(
            (
                question_hashes[asked],
                hashed[unknown_text],
                others,
                kind_hashes[kind],
                at.astype(np.uint64) + np.uint64(1),
                template_hashes[templates],
            ),
            _MULTIPLIERS,
            strict=True,
        ):
            key = key ^ (part * np.uint64(multiplier))
        cut = self.__dict__.get("_cut")
        if cut is not None:
            kept = key <= cut
            rows, key = rows[kept], key[kept]
            at, kind, templates, gold = at[kept], kind[kept], templates[kept], gold[kept]
            options, unknown_text, asked = options[kept], unknown_text[kept], asked[kept]
        unique, first, counts = np.unique(key, return_index=True, return_counts=True)
        # a key with SAMPLE_CAP smaller ones in this batch alone can never be among the smallest kept
        unique, first, counts = unique[:SAMPLE_CAP], first[:SAMPLE_CAP], counts[:SAMPLE_CAP]
        entries = self.__dict__.setdefault("_entries", {})
        for value, index, count in zip(unique.tolist(), first.tolist(), counts.tolist(), strict=True):
            found = entries.get(value)
            if found is not None:
                entries[value] = (found[0], found[1] + count)
                continue
            row_options = options[index].tolist()
            view: View = (
                ("q", questions[asked[index]]),
                ("k", kinds[kind[index]]),
                ("u", texts[unknown_text[index]]),
                ("@", str(at[index])),
                ("o", "\x1e".join(sorted(texts[c] for i, c in enumerate(row_options) if i != at[index]))),
            )
            entries[value] = ((template_keys[templates[index]], view, bool(gold[index])), count)
        if len(entries) > SAMPLE_CAP:
            kept_keys = sorted(entries)[:SAMPLE_CAP]
            self.__dict__["_entries"] = {value: entries[value] for value in kept_keys}
            self.__dict__["_cut"] = np.uint64(kept_keys[-1])

    def _training_set(self) -> tuple[list[TemplateKey], list[View], np.ndarray, np.ndarray, np.ndarray]:
        entries = self.__dict__.get("_entries", {})
        kept = [entries[key] for key in sorted(entries)[:SAMPLE_CAP]]
        classes: dict[TemplateKey, set[bool]] = {}
        for entry, _ in kept:
            classes.setdefault(entry[0], set()).add(entry[2])
        # a template whose golds are all unknown (or none is) shows nothing that separates the classes;
        # held out, it would be answered by the other templates' balance
        kept = [(entry, count) for entry, count in kept if len(classes[entry[0]]) == 2]
        templates = sorted({entry[0] for entry, _ in kept})
        if len(templates) < MIN_TEMPLATES:
            raise ProbeNotRun(
                f"fewer than {MIN_TEMPLATES} templates with both unknown and other golds to cross-validate"
            )
        index = {key: i for i, key in enumerate(templates)}
        views = [entry[1] for entry, _ in kept]
        gold = np.array([entry[2] for entry, _ in kept], dtype=bool)
        weights = np.array([count for _, count in kept], dtype=np.float64)
        groups = np.array([index[entry[0]] for entry, _ in kept], dtype=np.intp)
        return templates, views, gold, weights, groups

    def begin_finish(self, side: SideProcess | None) -> None:
        if side is not None:
            try:
                training = self._training_set()
            except ProbeNotRun:
                return
            self.__dict__["_fitting"] = (training, side.submit(unknown_scores, *training))

    def finish(self) -> Tally:
        fitting = self.__dict__.pop("_fitting", None)
        if fitting is None:
            training = self._training_set()
            scores = unknown_scores(*training)
        else:
            training, scores = fitting[0], fitting[1].result()
        if scores is None:
            raise ProbeNotRun("scikit-learn is not installed (pip install scikit-learn)", warn=True)
        templates, _, gold, weights, groups = training
        copies = weights.astype(np.int64)
        hits = np.where(scores == 0, 0.5, ((scores > 0) == gold).astype(np.float64))
        rows = np.repeat(np.arange(len(gold)), copies)
        scored = Scored(
            np.ones(len(rows), dtype=bool), hits[rows][:, None], classes=gold[rows].astype(np.float64)
        )
        self.tally.add(groups[rows], templates, scored)
        return self.tally


def unknown_scores(
    templates: list[TemplateKey], views: list[View], gold: np.ndarray, weights: np.ndarray, groups: np.ndarray
) -> np.ndarray | None:
    """Per view, the decision value ("the gold is unknown" above 0) of a model that never saw its
    template; None without scikit-learn. A pure function, so that it can run in another process."""
    try:
        from sklearn.feature_extraction.text import HashingVectorizer
    except ImportError:
        return None
    from .model import FEATURES

    vectorizer = HashingVectorizer(
        analyzer=_tokens, n_features=FEATURES, alternate_sign=False, norm=None, dtype=np.float64
    )
    # each distinct (part, text) is featurised once: a question or a wording recurs over many views
    index: dict[tuple[str, str], int] = {}
    columns = [[index.setdefault(part, len(index)) for part in view] for view in views]
    distinct_parts = vectorizer.transform([(part,) for part in index]).tocsr()
    picked = np.array(columns, dtype=np.intp).reshape(len(views), -1)
    features = distinct_parts[picked[:, 0]]
    for column in range(1, picked.shape[1]):
        features = features + distinct_parts[picked[:, column]]
    features = features.tocsr()
    # each class weighs half: a model that learnt the training folds' class balance would be right or
    # wrong on a held-out template by how its balance differs, not by what its rows show
    share = float(weights[gold].sum()) / float(weights.sum())
    balanced = weights * np.where(gold, 0.5 / max(share, 1e-9), 0.5 / max(1.0 - share, 1e-9))
    return grouped_decisions(
        features, gold, balanced, groups, folds=min(FOLDS, len(templates)), intercept=True
    )


def _tokens(parts: tuple[tuple[str, str], ...]) -> list[str]:
    """Each part's character 1–3-grams, tagged with the part; short parts (class, position) whole."""
    tokens = []
    for part, text in parts:
        if len(text) <= 1 or part in ("k", "@"):
            tokens.append(f"{part}\x1f{text}")
            continue
        tokens += [f"{part}\x1f{text[i : i + n]}" for n in (1, 2, 3) for i in range(len(text) - n + 1)]
    return tokens
