"""What a shortcut probe is: a rule or a small model that tries to reach the gold without the reasoning a
benchmark tests.

A probe reads *plain rows* — a built config's parquet rows or a release's rows, as pyarrow tables a
batch at a time — and says, for each row it scores, whether each of its *variants* (the directions of
its rule: "the person mentioned last" and "the person mentioned first") reaches the gold. A scope's rows
are all answered by the variant that does best on them (:mod:`.stats`): the figure of a fixed rule,
whichever way the benchmark leans. The audit (:mod:`.run`) keeps per template only sums: rows,
hits per variant, chance; memory does not grow with the rows.

A design declares its probes in its package's ``probes`` module (``probes(inputs) -> [Probe, …]``,
see :meth:`jbcompile.designs.spec.Design.probes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

    from ..schema.rules import AttributesFile
    from ..sidework import SideProcess

T = TypeVar("T")
TemplateKey = tuple[str, str]  # (category, template id): BBQ's releases number their templates per category
_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class ProbeInputs:
    """What probes may read beside the rows: the rule data of the benchmark's sources."""

    attributes: AttributesFile


class ProbeNotRun(Exception):
    """A probe cannot answer these rows (a column is missing, too few templates, a library is absent)."""

    def __init__(self, reason: str, *, warn: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.warn = warn  # worth a warning (the user can fix it), not only a line in the table


class Batch:
    """A batch of plain rows, with the column views probes share (each computed once per batch)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self._memo: dict[Any, Any] = {}

    def __len__(self) -> int:
        return self.table.num_rows

    def has(self, *columns: str) -> bool:
        return all(name in self.table.column_names for name in columns)

    def texts(self, column: str) -> list[str]:
        """A text column as Python strings ("" for a missing value)."""
        return self.shared(_texts, column)

    def ints(self, column: str) -> np.ndarray:
        """An integer column (-1 for a missing value)."""
        return self.shared(_ints, column)

    def equals(self, column: str, value: str) -> np.ndarray:
        """Rows whose ``column`` is ``value`` (a missing value never is)."""
        return self.shared(_equals, column, value)

    def codes(self, *columns: str) -> tuple[np.ndarray, list[str]]:
        """Text columns encoded together: per row and column an index into one list of their distinct
        values ("" for a missing value). Work per distinct text, not per row, is what keeps probes fast:
        a context recurs in every option order and polarity of its rows."""
        return self.shared(_codes, *columns)

    def shared(self, compute: Callable[..., T], *args: Any) -> T:
        """``compute(self, *args)``, computed once per batch whichever probe asks first."""
        key = (compute.__module__, compute.__qualname__, *args)
        if key not in self._memo:
            self._memo[key] = compute(self, *args)
        return self._memo[key]

    def templates(self) -> tuple[np.ndarray, list[TemplateKey]]:
        """Each row's template as an index into the batch's list of (category, template id)."""
        return self.shared(_templates)


def _texts(batch: Batch, column: str) -> list[str]:
    return ["" if value is None else str(value) for value in batch.table[column].to_pylist()]


def _ints(batch: Batch, column: str) -> np.ndarray:
    import pyarrow.compute as pc

    values = pc.fill_null(batch.table[column], -1)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)


def _equals(batch: Batch, column: str, value: str) -> np.ndarray:
    import pyarrow.compute as pc

    found = pc.fill_null(pc.equal(pc.cast(batch.table[column], "string"), value), False)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


def _codes(batch: Batch, *columns: str) -> tuple[np.ndarray, list[str]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = [pc.fill_null(pc.cast(batch.table[c], pa.string()), "").combine_chunks() for c in columns]
    encoded = pc.dictionary_encode(pa.concat_arrays(arrays) if arrays else pa.array([], pa.string()))
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes.reshape(len(columns), len(batch)).T, encoded.dictionary.to_pylist()


def _templates(batch: Batch) -> tuple[np.ndarray, list[TemplateKey]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    def column(name: str) -> pa.ChunkedArray:
        if name not in batch.table.column_names:
            return pa.chunked_array([pa.array(["?"] * len(batch), pa.string())])
        return pc.fill_null(pc.cast(batch.table[name], pa.string()), "?")

    joined = pc.binary_join_element_wise(column("category"), column("template_id"), _SEPARATOR)
    encoded = pc.dictionary_encode(joined.combine_chunks() if len(batch) else pa.array([], pa.string()))
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    keys = [tuple(key.split(_SEPARATOR, 1)) for key in encoded.dictionary.to_pylist()]
    return codes, keys


@dataclass(frozen=True)
class Scored:
    """What a probe says about one batch.

    ``rows``: the rows it scores; ``hits[:, v]``: 1 where variant ``v`` answers the gold, 0 where not, and
    ``1/k`` where the rule cannot decide between its ``k`` candidates (a fair guess); ``chance``: per row,
    what a uniform guess among the candidates scores — or, with ``classes`` (a binary target per row),
    chance is the majority-class rate of the scope instead.
    """

    rows: np.ndarray
    hits: np.ndarray
    chance: np.ndarray | None = None
    classes: np.ndarray | None = None


class Tally:
    """Per template: rows scored, summed chance, rows of class 1, and hits per variant."""

    def __init__(self, variants: int) -> None:
        self.variants = variants
        self.sums: dict[TemplateKey, np.ndarray] = {}

    def add(self, codes: np.ndarray, keys: list[TemplateKey], scored: Scored) -> None:
        rows = np.asarray(scored.rows, dtype=bool)
        if not rows.any():
            return
        picked = codes[rows]
        hits = np.asarray(scored.hits, dtype=np.float64).reshape(len(rows), -1)[rows]
        zeros = np.zeros(len(picked))
        columns = [
            np.ones(len(picked)),
            zeros if scored.chance is None else np.asarray(scored.chance, dtype=np.float64)[rows],
            zeros if scored.classes is None else np.asarray(scored.classes, dtype=np.float64)[rows],
            *hits.T,
        ]
        sums = np.stack([np.bincount(picked, weights=c, minlength=len(keys)) for c in columns], axis=1)
        for index in np.flatnonzero(sums[:, 0]):
            key = keys[index]
            found = self.sums.get(key)
            self.sums[key] = sums[index] if found is None else found + sums[index]


class Probe:
    """One shortcut probe; an instance audits one config (``Design.probes`` makes fresh ones).

    Set the metadata, ``columns`` (what it reads) and :meth:`score`. A probe that needs the whole config
    first (e.g. every ambiguous context) names ``prepare_columns`` and reads them in :meth:`prepare`.
    A probe that fits a model overrides :meth:`add` and :meth:`finish` instead of :meth:`score`.
    """

    name: ClassVar[str]  # stable id, used in dataset.yaml (audit.probes.<name>), reports and manifests
    title: ClassVar[str]  # what the rule does, in one line
    scores: ClassVar[str]  # which rows it answers, e.g. "disambiguated rows"
    chance: ClassVar[str]  # what it is compared with, e.g. "1/2: a guess between the two persons"
    variants: ClassVar[tuple[str, ...]] = ("",)  # its rule's directions, the main one first
    measure: ClassVar[Literal["accuracy", "rate"]] = "accuracy"  # rate: the share of rows with a defect
    majority_chance: ClassVar[bool] = False  # chance is the majority-class rate of Scored.classes
    # False: reported but not judged unless dataset.yaml gives it a bar (audit.probes.<name>), for a probe
    # whose high figure may come from reading the benchmark as meant (docs/audit.md says why, per probe)
    judged: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = ()
    optional_columns: ClassVar[tuple[str, ...]] = ()  # read where the rows have them (Batch.has)
    prepare_columns: ClassVar[tuple[str, ...]] = ()
    libraries: ClassVar[tuple[str, ...]] = ()  # modules it imports to finish (loaded early by a build)
    fewest_judged: ClassVar[int] = 2  # a scope of fewer templates is never above by an accuracy

    def prepare(self, batch: Batch) -> None:
        """See one batch of the first pass (only when ``prepare_columns`` is set)."""

    def score(self, batch: Batch) -> Scored:
        raise NotImplementedError

    def add(self, batch: Batch) -> None:
        codes, keys = batch.templates()
        self.tally.add(codes, keys, self.score(batch))

    def begin_finish(self, side: SideProcess | None) -> None:
        """Start the slow part of :meth:`finish` in ``side`` (a build's second process), if it has one:
        called once this config's rows were added, before any probe finishes. None: no side process."""

    def finish(self) -> Tally:
        """Every template's sums; raise :class:`ProbeNotRun` when the probe could not answer."""
        return self.tally

    @property
    def tally(self) -> Tally:
        found = self.__dict__.get("_tally")
        if found is None:
            found = self.__dict__["_tally"] = Tally(len(self.variants))
        return found


# ---- helpers shared by the designs' probes ------------------------------------------------------------


def pick_hits(picks: np.ndarray, label: np.ndarray, candidates: int = 2) -> np.ndarray:
    """Per row: 1 when the pick is the gold, 0 when not, 1/candidates when the rule picked none (-1)."""
    return np.where(picks < 0, 1.0 / candidates, (picks == label).astype(np.float64))


NEGATIVE, NON_NEGATIVE = "neg", "nonneg"  # the question polarities of BBQ-style rows


def by_polarity(batch: Batch, column: str, negative: np.ndarray, non_negative: np.ndarray) -> np.ndarray:
    """Per row: the pick ``negative`` where the row's question is negative, ``non_negative`` where it is
    not, -1 (no decision) where ``column`` names neither polarity."""
    is_negative = batch.equals(column, NEGATIVE)
    is_non_negative = batch.equals(column, NON_NEGATIVE)
    return np.where(is_negative, negative, np.where(is_non_negative, non_negative, -1))


def polarity_names(first: str, second: str) -> tuple[str, str, str, str]:
    """The variants of a pair of complementary rules: each fixed, and each per question polarity."""
    return (
        first,
        second,
        f"negative → {first}, non-negative → {second}",
        f"negative → {second}, non-negative → {first}",
    )


def polarity_picks(
    batch: Batch, column: str, first: np.ndarray, second: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The picks of :func:`polarity_names`'s variants, from the picks of the two complementary rules."""
    return first, second, by_polarity(batch, column, first, second), by_polarity(batch, column, second, first)


def compare_picks(first: np.ndarray, second: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Option ``a`` where ``first`` is larger, ``b`` where ``second`` is, -1 on a tie (no decision)."""
    return np.where(first > second, a, np.where(second > first, b, -1))


def other_options(unknown: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two option indexes of three that are not ``unknown``, in order (the persons of a row)."""
    first = np.where(unknown == 0, 1, 0)
    second = np.where(unknown == 2, 1, 2)
    return first, second


def option_codes(batch: Batch, index: np.ndarray, count: int) -> tuple[np.ndarray, list[str]]:
    """Per row, the code of option ``index[row]`` among ``ans0``…``ans<count-1>`` (see
    :meth:`Batch.codes`), and the texts the codes index."""
    codes, values = batch.codes(*(f"ans{i}" for i in range(count)))
    return codes[np.arange(len(index)), np.clip(index, 0, count - 1)], values


def distinct(*keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct combinations of non-negative integer keys (one row each, as columns) and, per row,
    which one it has: compute once per distinct combination, then spread with ``result[inverse]``."""
    stacked = np.stack(keys, axis=1) if keys else np.zeros((0, 0), dtype=np.int64)
    if not len(stacked):
        return stacked.reshape(0, len(keys)), np.zeros(0, dtype=np.int64)
    sizes = stacked.max(axis=0).astype(object) + 1
    if np.prod(sizes) < 2**62:  # one number per combination: a 1-D unique is many times faster
        radix = np.cumprod([1, *sizes[:0:-1]])[::-1].astype(np.int64)
        _, first, inverse = np.unique(stacked @ radix, return_index=True, return_inverse=True)
        return stacked[first], inverse.reshape(-1)
    unique, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def char_ngrams(text: str, n: int) -> set[str]:
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def shared_share(text: str, other: str, n: int = 2) -> float:
    """The share of ``text``'s character n-grams that occur in ``other`` (0 for a text shorter than n)."""
    grams = char_ngrams(text, n)
    return len(grams & char_ngrams(other, n)) / len(grams) if grams else 0.0


def bigram_shares(
    texts: list[str], questions: list[str], text_of: np.ndarray, question_of: np.ndarray
) -> np.ndarray:
    """Per pair ``i``: the share of ``questions[question_of[i]]``'s distinct character bigrams that occur
    in ``texts[text_of[i]]`` (0 for a question shorter than two characters), as :func:`shared_share`
    gives it. Vectorised over the pairs of each distinct question: a batch holds tens of thousands of
    pairs and few questions."""
    found = np.zeros(len(text_of))
    if not len(text_of):
        return found
    grams, starts = _bigrams(texts)
    order = np.argsort(question_of, kind="stable")
    groups, begins = np.unique(question_of[order], return_index=True)
    for question, members in zip(groups.tolist(), np.split(order, begins[1:]), strict=True):
        asked = _bigrams([questions[question]])[0]
        wanted = _sorted_distinct(asked[asked >= 0])
        if not len(wanted):
            continue
        low = starts[text_of[members]]
        sizes = np.maximum(starts[text_of[members] + 1] - low - 2, 0)  # a text of n characters: n - 1
        at = np.repeat(low - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        owner = np.repeat(np.arange(len(members)), sizes)
        hit = np.isin(grams[at], wanted)
        pairs = _sorted_distinct((owner[hit] << 42) | grams[at][hit])  # each gram once per text
        found[members] = np.bincount(pairs >> 42, minlength=len(members)) / len(wanted)
    return found


def _bigrams(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every character bigram of the texts as an integer (two 21-bit code points; -1 where none) and
    where each text starts: the bigrams of text ``t`` (of n characters) are ``grams[starts[t]:][:n - 1]``."""
    codes = np.frombuffer("\x00".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    grams = np.where((codes[:-1] != 0) & (codes[1:] != 0), (codes[:-1] << 21) | codes[1:], -1)
    starts = np.concatenate([[0], np.cumsum([len(text) + 1 for text in texts])])
    return grams, starts


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a small array, without its per-call cost (a hash table of its own in numpy 2)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def differing_parts(first: str, second: str, keep: int = 0) -> tuple[str, str]:
    """Each text without what both share at their start and at their end (a text left empty stays
    whole). ``keep`` characters of the shared end stay, so that what leads into it is still seen."""
    start = 0
    while start < min(len(first), len(second)) and first[start] == second[start]:
        start += 1
    end = 0
    while end < min(len(first), len(second)) - start and first[-1 - end] == second[-1 - end]:
        end += 1
    cut = max(0, end - keep)
    return first[start : len(first) - cut] or first, second[start : len(second) - cut] or second
