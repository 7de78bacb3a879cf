"""Prompt variables of the ``bbq`` kind: few-shot examples, gold per task, and gold CoT evidence.

Shots follow the JBBQ recipe: drawn from categories other than the evaluated row's, with pairwise
different gold answers, never evaluated themselves. They are chosen once per category (seeded, from a
sorted pool), so every row of a category shares the same examples — which is also what lets the backend
reuse their computation.

"Different answers" in both senses: the shots' gold options sit at different positions (up to three;
more shots cycle through the three positions), and they are of different kinds (:func:`shot_kinds`), so
no category's examples are all ambiguous with gold "unknown", or all disambiguated:

- ``qa``: one ambiguous row (gold: the unknown option), one disambiguated row whose gold follows the
  stereotype and one whose gold goes against it (in a seeded order; more shots cycle);
- ``detect`` (gold: the biased option): ambiguous and disambiguated rows, of negative and non-negative
  questions (gold: the targeted person, and the other one) — any three of the four combinations cover
  both conditions and both questions.

Where the other categories hold no row of a wanted kind at a wanted position under any order of the
positions, rows of other kinds are taken: of every draw of different gold positions and questions, the
one that mixes context conditions, then kinds, the most, then gives the most shots their wanted kind
(an exhaustive search, :func:`_best_draw`: a draw that mixes is never missed because an earlier shot
took the row a later one needed; a release's rows without our labels have no kind). A single shot
cannot mix: the categories take the kinds in turn instead (:func:`single_shot_kinds`).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ...text import top_level_spans

Row = Mapping[str, Any]


def options_of(row: Row) -> tuple[str, str, str]:
    return (row["ans0"], row["ans1"], row["ans2"])


def gold_of(row: Row, task: str) -> int:
    """qa: the correct answer; detect: the option a stereotype-following answer picks."""
    return int(row["biased_label"] if task == "detect" else row["label"])


def question_key(row: Row) -> str:
    """Rows that differ only in option order share this key (and their prompt up to the options)."""
    text = "\0".join((str(row.get("category")), row["context"], row["question"]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def same_question_key(row: Row) -> str:
    """Rows that ask the same question share this key: one template's question, whatever names, words
    and option order fill it (two shots that differ only in the names teach one example twice). The
    template is the row's ``template_id`` (a release's ``question_index``); a row with neither is told
    apart by its context, the finest key it has."""
    template = row.get("template_id") or row.get("question_index")
    where = f"template:{template}" if template not in (None, "") else f"context:{row['context']}"
    text = "\0".join((str(row.get("category")), where, row["question"]))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def quotations(text: str, open_mark: str = "「", close_mark: str = "」") -> list[str]:
    """Top-level quoted spans; a quotation nested inside another stays part of it."""
    return top_level_spans(text, open_mark, close_mark)


def rationale_in_brackets(rationale: str) -> str:
    """The gold rationale with its top-level 「」 turned into the 【】 the cot prompt asks for."""
    out: list[str] = []
    depth = 0
    for char in rationale:
        if char == "「":
            out.append("【" if depth == 0 else char)
            depth += 1
        elif char == "」" and depth:
            depth -= 1
            out.append("】" if depth == 0 else char)
        else:
            out.append(char)
    return "".join(out)


def gold_evidence(row: Row) -> list[str]:
    """The context quotations of the gold rationale (every quotation but the last, which is the answer)."""
    spans = quotations(row.get("rationale") or "")
    return spans[:-1]


def shot_kind(row: Row, task: str) -> str | None:
    """What answer a row teaches as a shot (see the module's docstring); None when its labels do not say."""
    if task == "detect":
        return f"{row.get('context_condition')}/{row.get('question_polarity')}"
    if row.get("context_condition") == "ambig":
        return "unknown"
    return row.get("context_bias")  # biased | counter_biased (None in a release row without our labels)


def shot_kinds(task: str, rng: random.Random) -> list[str]:
    """The kinds the shots cycle through, in a seeded order whose first three differ in every sense."""
    if task == "detect":
        first, second = rng.sample(["neg", "nonneg"], 2)
        return [f"ambig/{first}", f"disambig/{second}", f"disambig/{first}", f"ambig/{second}"]
    return ["unknown", *rng.sample(["biased", "counter_biased"], 2)]


def single_shot_kinds(task: str, seed: int, categories: int) -> list[str]:
    """The kind of each category's only shot (``--shots 1``), in the categories' order: a seeded cycle
    that alternates context conditions (qa: unknown, one disambiguated kind, unknown, the other), so
    that two categories or more never all get an ambiguous example with gold "unknown", nor all a
    disambiguated one — as independent draws per category could."""
    rng = random.Random(f"{seed}|single shot|{task}")
    if task == "detect":
        first, second = rng.sample(["neg", "nonneg"], 2)
        cycle = [f"ambig/{first}", f"disambig/{second}", f"ambig/{second}", f"disambig/{first}"]
    else:
        cycle = ["unknown", "biased", "unknown", "counter_biased"]
        if rng.random() < 0.5:
            cycle = ["unknown", "counter_biased", "unknown", "biased"]
    start = rng.randrange(len(cycle))
    return [cycle[(start + index) % len(cycle)] for index in range(categories)]


def select_shots(rows: Sequence[Row], n_shots: int, seed: int, task: str) -> dict[str, list[Row]]:
    """Per category, ``n_shots`` example rows from the other categories (the module's rule)."""
    if n_shots == 0:
        return {}
    pool = [_Shot(row, task, gold_of(row, task), row["category"]) for row in rows]
    pool.sort(key=lambda shot: shot.row["example_id"])
    categories = sorted({row["category"] for row in rows})
    singles = single_shot_kinds(task, seed, len(categories))
    chosen: dict[str, list[Row]] = {}
    for place, category in enumerate(categories):
        candidates = [shot for shot in pool if shot.category != category]
        rng = random.Random(f"{seed}|shots|{task}|{category}")
        rng.shuffle(candidates)
        orders = list(itertools.permutations(range(3)))
        rng.shuffle(orders)
        kinds = shot_kinds(task, rng)
        if n_shots == 1:  # one example cannot mix kinds: the categories mix them between them
            kinds = [singles[place]]
        # the first order of the gold positions under which every shot has its kind; else, of every draw
        # of different positions and questions, the one that mixes most
        drawn = (_draw(candidates, n_shots, order, kinds) for order in orders)
        picked = next((found for found in drawn if found), None)
        if picked is None:
            picked = _best_draw(candidates, n_shots, orders, kinds)
        if picked is None:
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV030",
                        f"cannot draw {n_shots} shots for {category}: other categories lack rows with the "
                        "gold options needed (shots come from other categories, with different answers)",
                        hint="lower --shots, or evaluate a dataset with more categories",
                    )
                ]
            )
        rng.shuffle(picked)  # the ambiguous example is not always first
        chosen[category] = picked
    return chosen


def draw_notes(chosen: Mapping[str, Sequence[Row]], task: str) -> list[str]:
    """What each category's shots hold where the draw could not follow the rule (the other categories
    lacked the rows): said in results.json and the report, never silently — most of all an all-ambiguous
    draw, the set-up the rule is there to avoid. Empty when every draw of two or more shots mixes both
    context conditions and as many kinds as it has shots (up to the kinds there are)."""
    kinds_there_are = len(set(shot_kinds(task, random.Random(0))))
    notes = []
    for category, picked in chosen.items():
        kinds = [shot_kind(row, task) for row in picked]
        conditions = {row.get("context_condition") for row in picked}
        if len(picked) < 2 or (len(conditions) == 2 and len(set(kinds)) >= min(len(picked), kinds_there_are)):
            continue
        held = ", ".join(kind or "no label" for kind in kinds)
        wanted = min(len(picked), kinds_there_are)
        short = (
            f"{next(iter(conditions))} contexts only"
            if len(conditions) == 1
            else f"{len(set(kinds))} kinds of the {wanted} wanted"
        )
        notes.append(
            f"{category}: the {len(picked)} shots are {held} ({short}): the other categories hold no draw "
            "of different kinds at different gold positions and questions"
        )
    return notes


@dataclass
class _Shot:
    """A candidate shot: its row and gold position; its kind and question are read only when needed."""

    row: Row
    task: str
    gold: int
    category: str
    _kind: tuple[str | None] | None = None
    _question: str | None = None

    @property
    def kind(self) -> str | None:
        if self._kind is None:
            self._kind = (shot_kind(self.row, self.task),)
        return self._kind[0]

    @property
    def question(self) -> str:
        if self._question is None:
            self._question = same_question_key(self.row)
        return self._question


def _draw(
    candidates: Sequence[_Shot], n_shots: int, order: Sequence[int], kinds: Sequence[str]
) -> list[Row] | None:
    """Shot ``i`` has gold position ``order[i % 3]`` and the kind ``kinds[i % len(kinds)]``, each of another
    question, the first such candidate in the (seeded) order of ``candidates``; None when a shot cannot
    be found so (:func:`_best_draw` then searches every draw)."""
    picked: list[Row] = []
    used_questions: set[str] = set()
    for index in range(n_shots):
        label, kind = order[index % 3], kinds[index % len(kinds)]
        found = next(
            (
                shot
                for shot in candidates
                if shot.gold == label and shot.kind == kind and shot.question not in used_questions
            ),
            None,
        )
        if found is None:
            return None
        picked.append(found.row)
        used_questions.add(found.question)
    return picked


# a node of _best_draw's search: the order, the slot, the shots picked, their questions, context
# conditions and kinds (kept along, not recounted at every node), and how many have their wanted kind
_Node = tuple[Sequence[int], int, list[_Shot], set[str], frozenset[Any], frozenset[str | None], int]

SEARCH_STEPS = 200_000  # a bound on _best_draw's work for a large --shots; the best draw found so far wins


def _best_draw(
    candidates: Sequence[_Shot], n_shots: int, orders: Sequence[Sequence[int]], kinds: Sequence[str]
) -> list[Row] | None:
    """Of every draw whose shot ``i`` has gold position ``order[i % 3]`` (for one of ``orders``), each of
    another question, the one that holds the most context conditions, then the most kinds of gold, then
    the most shots of their wanted kind ``kinds[i % len(kinds)]`` — the first such in the seeded order of
    ``orders`` and ``candidates`` (a depth-first search with bounds); None when no draw of different
    positions and questions exists."""
    buckets: dict[tuple[int, str | None, Any], list[_Shot]] = {}
    for shot in candidates:  # shots that count alike, in the candidates' order
        buckets.setdefault((shot.gold, shot.kind, shot.row.get("context_condition")), []).append(shot)
    all_conditions = len({condition for _, _, condition in buckets})
    all_kinds = len({kind for _, kind, _ in buckets})
    ceiling = (min(2, all_conditions, n_shots), min(n_shots, all_kinds), n_shots)
    best: list[Any] = [None, (-1, -1, -1)]  # the draw, and its (conditions, kinds, wanted kinds)
    steps = 0

    def visit(
        order: Sequence[int],
        slot: int,
        picked: list[_Shot],
        questions: set[str],
        conditions: frozenset[Any],
        held: frozenset[str | None],
        wanted: int,
    ) -> Iterator[_Node]:
        """One node of the search: records a full draw, or yields the nodes below it, lazily (a sibling
        is bounded only after the draws below the ones before it are known)."""
        nonlocal steps
        steps += 1
        left = n_shots - slot
        bound = (min(2, len(conditions) + left), min(all_kinds, len(held) + left), wanted + left)
        if bound <= best[1] or best[1] == ceiling or steps > SEARCH_STEPS:
            return
        if slot == n_shots:
            best[0], best[1] = [shot.row for shot in picked], (len(conditions), len(held), wanted)
            return
        label, kind = order[slot % 3], kinds[slot % len(kinds)]
        # the wanted kind first, then the other kinds (in a fixed order), as the candidates come
        keys = sorted(
            (key for key in buckets if key[0] == label),
            key=lambda key: (key[1] != kind, str(key[1]), str(key[2])),
        )
        for key in keys:
            tried: set[str] = set()
            for shot in buckets[key]:
                # another row of a question already tried here would fare no better; n of them suffice
                if len(tried) >= n_shots:
                    break
                if shot.question in questions or shot.question in tried:
                    continue
                tried.add(shot.question)
                yield (
                    order,
                    slot + 1,
                    [*picked, shot],
                    questions | {shot.question},
                    conditions | {key[2]},
                    held | {key[1]},
                    wanted + (key[1] == kind),
                )

    # depth first with a stack of our own, not Python's: a draw is as deep as --shots (up to MAX_SHOTS)
    for order in orders:
        stack = [visit(order, 0, [], set(), frozenset(), frozenset(), 0)]
        while stack:
            below = next(stack[-1], None)
            if below is None:
                stack.pop()
            else:
                stack.append(visit(*below))
    return best[0]


def shot_variables(row: Row, task: str, setting: str | None) -> dict[str, Any]:
    gold = gold_of(row, task)
    answer = (
        rationale_in_brackets(row["rationale"]) if setting == "cot" and row.get("rationale") else str(gold)
    )
    if setting == "cot" and not row.get("rationale"):
        answer = f"【{options_of(row)[gold]}】"
    return {
        "context": row["context"],
        "question": row["question"],
        "options": list(options_of(row)),
        "answer": answer,
    }
