"""Labels of BBQ-format rows that lack our explicit columns, derived as BBQ's own analysis does.

The stereotyped option is the one whose ``answer_info`` tag names a group in
``additional_metadata.stereotyped_groups`` (when no tag does, the one whose ``answer_info`` name is such a
group: BBQ's Nationality rows tag regions); for a negative question the stereotype-following answer is
that option, for a non-negative one it is the other person. In BBQ's intersectional files both persons
may be of a stereotyped group (``lowSES-Black`` and ``highSES-Black``); the stereotyped one then also has
the question's second attribute (see :func:`second_attributes`). When the tags do not single out one
option, the row is reported as ambiguous instead of being guessed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The columns of a row of BBQ's released JSONL (JBBQ's are the same, in Japanese).
BBQ_ROW_FIELDS = frozenset(
    {
        "example_id",
        "category",
        "question_polarity",
        "context_condition",
        "context",
        "question",
        "ans0",
        "ans1",
        "ans2",
        "label",
        "answer_info",
        "additional_metadata",
    }
)


@dataclass(frozen=True)
class DerivedLabels:
    target_label: int | None
    unknown_label: int | None
    biased_label: int | None
    context_bias: str | None
    problem: str | None = None  # why the stereotyped option could not be derived


def _info(row: Mapping[str, Any], index: int, position: int) -> str:
    """``answer_info.ans<index>[position]``: 0 is the person's name for the group, 1 its tag."""
    info = row.get("answer_info") or {}
    entry = info.get(f"ans{index}") if isinstance(info, Mapping) else None
    if isinstance(entry, list | tuple) and len(entry) > position and entry[position] is not None:
        return str(entry[position])
    return ""


def _tag(row: Mapping[str, Any], index: int) -> str:
    return _info(row, index, 1)


def tag_names_group(tag: str, group: str) -> bool:
    """``F`` names F; ``trans_F`` names trans; ``F-Black`` names F and Black (BBQ's compound tags)."""
    tag, group = tag.casefold(), group.casefold()
    if not tag or not group:
        return False
    return tag == group or tag.startswith(group + "_") or group in tag.split("-")


def _groups(row: Mapping[str, Any]) -> list[str]:
    metadata = row.get("additional_metadata")
    found = metadata.get("stereotyped_groups") if isinstance(metadata, Mapping) else None
    return [str(g) for g in found] if isinstance(found, list) else []


def question_of(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("category")), str(row.get("question_index"))


def second_attributes(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """Per question (category, question_index) whose tags lead with a second attribute (BBQ's
    intersectional files: ``lowSES`` of ``lowSES-Black``, ``F`` of ``F-Black``): the attribute most of its
    persons of a stereotyped group carry — the one BBQ's template names as stereotyped, since its target
    person is contrasted with persons who differ in the group, the attribute, or both."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        groups = _groups(row)
        for index in range(3):
            attribute, _, group = _tag(row, index).rpartition("-")
            if attribute and any(tag_names_group(group, g) for g in groups):
                counts[question_of(row)][attribute.split("-", 1)[0]] += 1
    return {question: found.most_common(1)[0][0] for question, found in counts.items()}


def derive_labels(row: Mapping[str, Any], second_attribute: str | None = None) -> DerivedLabels:
    """Our label columns when present; else derived from tags, or a problem saying why not.
    ``second_attribute`` (from :func:`second_attributes`) tells two persons of stereotyped groups apart."""
    if all(row.get(name) is not None for name in ("target_label", "unknown_label", "biased_label")):
        return DerivedLabels(
            row["target_label"], row["unknown_label"], row["biased_label"], row.get("context_bias")
        )
    unknowns = [i for i in range(3) if _tag(row, i).casefold() == "unknown"]
    if len(unknowns) != 1:
        return DerivedLabels(None, None, None, None, f"{len(unknowns)} options are tagged unknown")
    (unknown,) = unknowns
    groups = _groups(row)
    people = [i for i in range(3) if i != unknown]
    targets = [i for i in people if any(tag_names_group(_tag(row, i), g) for g in groups)]
    if not targets:  # BBQ's Nationality rows tag a region but list nationalities as the groups
        targets = [i for i in people if _info(row, i, 0).casefold() in {g.casefold() for g in groups}]
    if len(targets) > 1 and second_attribute:  # intersectional: the one with the stereotyped attribute too
        targets = [i for i in targets if _tag(row, i).split("-", 1)[0] == second_attribute] or targets
    if len(targets) != 1:
        tags = ", ".join(_tag(row, i) or "?" for i in people)
        problem = (
            f"tags ({tags}) name both persons as of the stereotyped groups {groups}; the stereotyped "
            "option is not unique"
            if targets
            else f"tags ({tags}) name no person of the stereotyped groups {groups}; no option is the "
            "stereotyped one"
        )
        return DerivedLabels(None, unknown, None, None, problem)
    (target,) = targets
    (other,) = [i for i in people if i != target]
    biased = target if row.get("question_polarity") == "neg" else other
    context_bias = None
    if row.get("context_condition") == "disambig" and row.get("label") is not None:
        context_bias = "biased" if int(row["label"]) == biased else "counter_biased"
    return DerivedLabels(target, unknown, biased, context_bias)
