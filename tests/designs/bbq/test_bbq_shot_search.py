"""The JBBQ shot draw on datasets with few rows per category (issue 25 §1.3): when the other categories
cannot give every shot its wanted kind, the draw taken is one that mixes context conditions, then kinds of
gold, as much as any draw of different gold positions and questions can — checked against every such
draw, over many random small datasets — and a category's draw is noted exactly when it breaks the rule."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from jbcompile.designs.bbq.shots import draw_notes, gold_of, question_key, select_shots, shot_kind
from jbcompile.diagnostics import DiagnosticError


def _dataset(draw: random.Random, categories: int) -> list[dict]:
    """A few rows per category: 1–3 questions, each asked 1–3 times in a random condition, polarity and
    option order (the labels as a build derives them)."""
    rows: list[dict] = []
    for category in "ABCD"[:categories]:
        for question in range(draw.randint(1, 3)):
            for _ in range(draw.randint(1, 3)):
                condition = draw.choice(["ambig", "disambig"])
                polarity = draw.choice(["neg", "nonneg"])
                unknown = draw.randrange(3)
                target, other = draw.sample([i for i in range(3) if i != unknown], 2)
                biased = target if polarity == "neg" else other
                label = unknown if condition == "ambig" else draw.choice([target, other])
                bias = None if condition == "ambig" else "biased" if label == biased else "counter_biased"
                rows.append(
                    {
                        "example_id": f"{category}-{len(rows):03d}",
                        "category": category,
                        "context": f"{category}{question}",
                        "question": polarity,
                        "label": label,
                        "biased_label": biased,
                        "unknown_label": unknown,
                        "target_label": target,
                        "context_condition": condition,
                        "question_polarity": polarity,
                        "context_bias": bias,
                    }
                )
    return rows


def _mix(picked: tuple[dict, ...] | list[dict], task: str) -> tuple[int, int]:
    return len({row["context_condition"] for row in picked}), len({shot_kind(row, task) for row in picked})


def _best_mix(pool: list[dict], shots: int, task: str) -> tuple[int, int] | None:
    """How much the most mixed draw of different gold positions (cycling through three) and questions
    mixes, by trying every draw; None when there is none."""
    found = None
    for draw in itertools.permutations(pool, shots):
        golds = [gold_of(row, task) for row in draw]
        if len(set(golds[:3])) != min(shots, 3) or any(g != golds[i % 3] for i, g in enumerate(golds)):
            continue
        if len({question_key(row) for row in draw}) == shots:
            found = max(found or (0, 0), _mix(draw, task))
    return found


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_the_draw_mixes_as_much_as_any_draw_can(task: str) -> None:
    draw, seen = random.Random(25), Counter()
    for trial in range(120):
        rows = _dataset(draw, draw.randint(2, 3))
        for shots in (1, 2, 3, 4):
            try:
                chosen = select_shots(rows, shots, trial, task)
            except DiagnosticError as error:
                failed = error.diagnostics[0].message.split("shots for ")[1].split(":")[0]
                pool = [row for row in rows if row["category"] != failed]
                assert _best_mix(pool, shots, task) is None, (trial, shots, failed)
                seen["no draw"] += 1
                continue
            noted = {note.split(":")[0] for note in draw_notes(chosen, task)}
            for category, picked in chosen.items():
                pool = [row for row in rows if row["category"] != category]
                assert all(row["category"] != category for row in picked)
                assert len({question_key(row) for row in picked}) == shots
                golds = Counter(gold_of(row, task) for row in picked)
                assert len(golds) == min(shots, 3) and max(golds.values()) - min(golds.values()) <= 1
                assert _mix(picked, task) == _best_mix(pool, shots, task), (trial, shots, category)
                kinds_there_are = 4 if task == "detect" else 3
                conditions, kinds = _mix(picked, task)
                follows = shots < 2 or (conditions == 2 and kinds >= min(shots, kinds_there_are))
                assert (category in noted) == (not follows), (trial, shots, category)
                seen["noted" if category in noted else "mixed"] += 1
    # the datasets reach every case: no draw at all, a draw as mixed as the rule asks, one that cannot be
    assert min(seen["no draw"], seen["noted"], seen["mixed"]) >= 20, seen


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_single_shots_mix_between_the_categories_for_every_seed(task: str) -> None:
    """--shots 1: one example cannot mix, so the categories' examples do between them — both context
    conditions, never every one of gold "unknown" (independent draws per category gave that for seeds
    34 and 111 of the bundled lite config) — for every seed, with two categories or three."""
    from pathlib import Path

    from tests.helpers import compile_folder

    fixture = Path(__file__).resolve().parents[2] / "eval" / "fixtures" / "sources"
    rows = [
        row
        for row in compile_folder(fixture).configs["full"].rows
        if task == "qa" or row["biased_label"] is not None
    ]
    two = [row for row in rows if row["category"] != "Age"]
    for pool in (rows, two):
        for seed in range(200):
            picked = [shots[0] for shots in select_shots(pool, 1, seed, task).values()]
            assert {row["context_condition"] for row in picked} == {"ambig", "disambig"}, seed
            assert {shot_kind(row, task) for row in picked} != {"unknown"}


def _reference_best_draw(candidates, n_shots, orders, kinds):  # type: ignore[no-untyped-def]
    """The rule of ``_best_draw`` said plainly, for small pools: every draw of different gold positions
    (``order[i % 3]``) and questions, in the search's order (per shot: the wanted kind first, then the
    other kinds and conditions in a fixed order, each as the candidates come), and the first that mixes
    the most (conditions, kinds, shots of their wanted kind) wins."""

    def draws(order, slot, picked):  # type: ignore[no-untyped-def]
        if slot == n_shots:
            yield picked
            return
        label, kind = order[slot % 3], kinds[slot % len(kinds)]
        used = {shot.question for shot in picked}
        fitting = [shot for shot in candidates if shot.gold == label and shot.question not in used]
        fitting.sort(
            key=lambda shot: (shot.kind != kind, str(shot.kind), str(shot.row.get("context_condition")))
        )
        for shot in fitting:
            yield from draws(order, slot + 1, [*picked, shot])

    best, best_score = None, None
    for order in orders:
        for picked in draws(order, 0, []):
            wanted = sum(shot.kind == kinds[i % len(kinds)] for i, shot in enumerate(picked))
            conditions = {shot.row.get("context_condition") for shot in picked}
            score = (len(conditions), len({shot.kind for shot in picked}), wanted)
            if best_score is None or score > best_score:
                best, best_score = [shot.row for shot in picked], score
    return best


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_the_search_takes_the_draw_the_plain_rule_takes(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounded search (its own stack, no recursion) picks, for every seed, the very draw that trying
    every draw in the same order picks: same shots, same order."""
    from jbcompile.designs.bbq import shots as module

    searched = module._best_draw
    calls = Counter()

    def reference(*args):  # type: ignore[no-untyped-def]
        calls["searches"] += 1
        return _reference_best_draw(*args)

    draw = random.Random(53)
    for trial in range(60):
        rows = _dataset(draw, draw.randint(2, 3))
        for shots in (2, 3, 4):
            for seed in range(3):
                outcomes = []
                for best_draw in (searched, reference):
                    monkeypatch.setattr(module, "_best_draw", best_draw)
                    try:
                        chosen = select_shots(rows, shots, seed, task)
                    except DiagnosticError as error:
                        outcomes.append(error.diagnostics[0].message)
                        continue
                    outcomes.append(
                        {
                            category: [row["example_id"] for row in picked]
                            for category, picked in chosen.items()
                        }
                    )
                assert outcomes[0] == outcomes[1], (trial, shots, seed)
    assert calls["searches"] >= 200, calls  # the search ran, not only the first-try draw


def _many_questions(categories: str, questions: int) -> list[dict]:
    """Rows of many questions, none of them disambiguated against the stereotype (qa) or of a non-negative
    question (detect): no draw gives every shot its wanted kind, so the search runs."""
    rows = []
    for category in categories:
        for question in range(questions):
            condition = "ambig" if question % 2 else "disambig"
            unknown = question % 3
            target = (unknown + 1) % 3
            rows.append(
                {
                    "example_id": f"{category}-{question:04d}",
                    "category": category,
                    "context": f"{category}{question}",
                    "question": "neg",
                    "label": unknown if condition == "ambig" else target,
                    "biased_label": target,
                    "unknown_label": unknown,
                    "target_label": target,
                    "context_condition": condition,
                    "question_polarity": "neg",
                    "context_bias": None if condition == "ambig" else "biased",
                }
            )
    return rows


@pytest.mark.parametrize("task", ["qa", "detect"])
def test_the_most_shots_draw_without_deep_recursion(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """--shots at its maximum (EV033's bound) searches a draw 100 shots deep; it must not take a Python
    frame per shot (it did: a RecursionError under a tighter limit, and frames a caller may not have)."""
    import sys

    from jbcompile.designs.bbq import shots as module
    from jbcompile.limits import MAX_SHOTS

    monkeypatch.setattr(module, "SEARCH_STEPS", 3_000)  # the draw's depth is what is tested, not its time
    rows = _many_questions("ABC", MAX_SHOTS + 20)
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 40)  # room for a few calls, far from one per shot
    try:
        chosen = select_shots(rows, MAX_SHOTS, 0, task)
    finally:
        sys.setrecursionlimit(limit)
    for category, picked in chosen.items():
        assert len(picked) == MAX_SHOTS
        assert all(row["category"] != category for row in picked)
        assert len({question_key(row) for row in picked}) == MAX_SHOTS
        assert sorted(Counter(gold_of(row, task) for row in picked).values()) == [33, 33, 34]
