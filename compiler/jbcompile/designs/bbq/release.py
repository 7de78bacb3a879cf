"""BBQ's released rows (and JBBQ's) and lm-evaluation-harness ``bbq`` samples, read as they are.

- **BBQ / JBBQ rows** (``answer_info``, ``additional_metadata.stereotyped_groups``, no label columns of
  ours): the label columns are derived by the documented rule below; rows where it is ambiguous are
  listed, never guessed.
- **lm-evaluation-harness ``--log_samples`` lines of its ``bbq`` tasks** (``doc_id``, ``doc``,
  ``arguments``, ``filtered_resps`` …): the doc is a BBQ row; the prediction is the highest
  log-likelihood choice (multiple choice; ``arguments`` as ``gen_args_<k>`` requests or, from older
  lm-eval versions, [context, continuation] pairs) or the generated reply, which ``score`` reads as
  ``eval`` reads a reply of the run's task and setting; ``--prediction-field`` does not apply to them.

Labels of BBQ-format rows that lack our explicit columns are derived as BBQ's own analysis does.

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...diagnostics import Diagnostic
from ...evaluate.harness_logs import exported_reply, how_answered, lm_eval_prompt, lm_eval_reply
from ...evaluate.kind import (
    ANSWERED_BY,
    LOG_LIKELIHOOD,
    RAW_REPLY,
    SHOWN_PROMPT,
    ReleaseFormat,
    option_index,
)
from ...evaluate.parsing import are_texts

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


OUR_BBQ_LABELS = ("target_label", "unknown_label", "biased_label")
# the columns that tell a bbq row from another design's (sobaco's rows have ans2 too)
BBQ_SIGNATURE = frozenset({"context_condition", "question_polarity", "ans2"})
LM_EVAL_FIELDS = frozenset({"doc_id", "doc", "arguments", "filtered_resps"})
LM_EVAL_PREDICTION = "filtered_resps"
OPTION_NUMBERS = ("0", "1", "2")  # what our prompts ask a model to answer with


def bbq_row_problem(row: Mapping[str, Any]) -> str | None:
    """Why a BBQ-format row cannot be scored as it is (its fields' types and values), or None."""
    for name in ("context", "question", "ans0", "ans1", "ans2"):
        if not isinstance(row.get(name), str):
            return f"{name} must be text, found {row.get(name)!r}"
    if not option_index(row.get("label"), 3):
        return f"label must be an option index 0–2, found {row.get('label')!r}"
    for name, allowed in (
        ("question_polarity", ("neg", "nonneg")),
        ("context_condition", ("ambig", "disambig")),
    ):
        if row.get(name) not in allowed:
            return f"{name} must be {' or '.join(allowed)}, found {row.get(name)!r}"
    if not isinstance(row.get("answer_info"), Mapping):
        return "answer_info must be an object {ans0: [name, tag], …}"
    metadata = row.get("additional_metadata")
    groups = metadata.get("stereotyped_groups") if isinstance(metadata, Mapping) else None
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        return "additional_metadata.stereotyped_groups must be a list of group names"
    return None


def add_bbq_labels(rows: list[dict[str, Any]], lines: Sequence[int]) -> list[dict[str, Any]]:
    """Our label columns, derived in place; returns the rows where the stereotyped option is unclear."""
    ambiguous = []
    attributes = second_attributes(rows)
    for row, line in zip(rows, lines, strict=True):
        labels = derive_labels(row, attributes.get(question_of(row)))
        row.update(
            target_label=labels.target_label,
            unknown_label=labels.unknown_label,
            biased_label=labels.biased_label,
            context_bias=labels.context_bias,
        )
        if row.get("template_id") is None:
            row["template_id"] = row.get("question_index")
        if labels.problem:
            ambiguous.append(
                {"example_id": str(row.get("example_id")), "line": line, "problem": labels.problem}
            )
    return ambiguous


def _loglikelihood(response: Any) -> float | None:
    value = response[0] if isinstance(response, list | tuple) and response else response
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def lm_eval_row(sample: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The BBQ doc of an lm-eval sample with its prediction in ``filtered_resps``: the option index of
    the highest log-likelihood, or the generated reply (read by ``score`` with the others)."""
    doc = sample.get("doc")
    if not isinstance(doc, Mapping):
        return None, "doc is not an object"
    responses = sample.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        return None, "filtered_resps is empty"
    options = [doc.get(f"ans{i}") for i in range(3)]
    if not are_texts(options):
        return None, "the doc lacks ans0, ans1 or ans2"
    row = dict(doc)
    if row.get("example_id") is None:
        row["example_id"] = sample.get("doc_id")
    if len(responses) == 1 and isinstance(responses[0], str):  # generate_until: one reply
        # the filtered reply, read as `eval` reads one of its task and setting; the reply as the model
        # wrote it is what a reading of score's own (a protocol, a setting) reads, and for an exported
        # `_gen` task's sample what is read, always
        row[LM_EVAL_PREDICTION] = exported_reply(sample) or responses[0]
        row[RAW_REPLY] = lm_eval_reply(sample) or responses[0]
        row[ANSWERED_BY], row[SHOWN_PROMPT] = how_answered(sample), lm_eval_prompt(sample)
        return row, None
    scores = [_loglikelihood(response) for response in responses]
    if any(score is None for score in scores):
        return None, "filtered_resps holds a value that is not a log-likelihood"
    arguments = sample.get("arguments")
    choices = _continuations(arguments, len(scores))
    if choices is None:
        return None, "arguments do not list one continuation per log-likelihood"
    unknowns = [i for i in range(3) if str(_tag_of(doc, i)).casefold() == "unknown"]
    if choices == list(OPTION_NUMBERS):  # a `jbcompile export lm-eval` task scores the option numbers
        to_option: list[int] | None = list(range(len(choices)))
    else:
        to_option = _choice_options(choices, options, unknowns[0] if len(unknowns) == 1 else None)
    if to_option is None:
        return None, "its choices cannot be matched to ans0-ans2"
    best = max(range(len(scores)), key=lambda k: (scores[k], -k))  # numpy's argmax: the first maximum
    row[RAW_REPLY] = choices[best]
    row[LM_EVAL_PREDICTION] = to_option[best]
    row[ANSWERED_BY] = LOG_LIKELIHOOD
    return row, None


def _tag_of(doc: Mapping[str, Any], index: int) -> Any:
    info = doc.get("answer_info")
    entry = info.get(f"ans{index}") if isinstance(info, Mapping) else None
    return entry[1] if isinstance(entry, list | tuple) and len(entry) > 1 else None


def _continuations(arguments: Any, count: int) -> list[str] | None:
    """The continuation of each log-likelihood request: lm-eval logs a request's (context, continuation)
    as ``{"gen_args_<k>": {"arg_0": context, "arg_1": continuation}}``, its older versions as a list of
    ``[context, continuation]`` pairs."""
    if isinstance(arguments, Mapping):
        requests = [arguments.get(f"gen_args_{index}") for index in range(count)]
        pairs = [[r.get("arg_0"), r.get("arg_1")] if isinstance(r, Mapping) else None for r in requests]
    elif isinstance(arguments, list) and len(arguments) == count:
        pairs = arguments
    else:
        return None
    texts = [pair[1] if isinstance(pair, list | tuple) and len(pair) == 2 else None for pair in pairs]
    if not all(isinstance(text, str) for text in texts):
        return None
    return [text.strip() for text in texts]  # type: ignore[union-attr]


def _choice_options(choices: Sequence[str], options: Sequence[str], unknown: int | None) -> list[int] | None:
    """Option index of each choice: the option with its text, or else the unknown option (lm-eval's
    ``bbq`` offers a list of unknown wordings in place of the row's own one)."""
    exact = [[i for i, option in enumerate(options) if option.strip() == choice] for choice in choices]
    if any(len(hits) > 1 for hits in exact):
        return None
    if unknown is None:  # no tag says which option is unknown: the one no choice spells out
        rest = [i for i in range(len(options)) if not any(hits == [i] for hits in exact)]
        unknown = rest[0] if len(rest) == 1 else None
    if unknown is None and any(not hits for hits in exact):
        return None
    return [hits[0] if hits else unknown for hits in exact]  # type: ignore[misc]


class BbqRelease(ReleaseFormat):
    """Rows of BBQ's (or JBBQ's) released JSONL, without our label columns."""

    name = "bbq"
    kind = "bbq"

    def matches(self, row: Mapping[str, Any]) -> bool:
        keys = set(row)
        return keys >= BBQ_ROW_FIELDS and not all(name in keys for name in OUR_BBQ_LABELS)

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        return dict(row), bbq_row_problem(row)

    def finish(self, rows: list[dict[str, Any]], lines: Sequence[int]) -> list[dict[str, Any]]:
        return add_bbq_labels(rows, lines)


class LmEvalBbqSamples(BbqRelease):
    """lm-evaluation-harness ``--log_samples`` lines of its ``bbq`` tasks."""

    name = "lm-eval-bbq"
    prediction_field = LM_EVAL_PREDICTION

    def matches(self, row: Mapping[str, Any]) -> bool:
        doc = row.get("doc")  # a bbq row (another design's rows go to the generic lm-eval format)
        return set(row) >= LM_EVAL_FIELDS and isinstance(doc, Mapping) and set(doc) >= BBQ_SIGNATURE

    def convert(self, row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        converted, problem = lm_eval_row(row)
        if problem is None and converted is not None:
            problem = bbq_row_problem(converted)
        return converted, problem

    def field_problems(self, prediction_field: str | None, path: str) -> list[Diagnostic]:
        if prediction_field in (None, LM_EVAL_PREDICTION):
            return []
        return [
            Diagnostic(
                "EV135",
                f"--prediction-field {prediction_field} does not apply to lm-evaluation-harness logs: "
                f"the prediction is read from each sample's {LM_EVAL_PREDICTION} (and arguments)",
                path=path,
                hint="leave --prediction-field out",
            )
        ]


RELEASE_FORMATS = (LmEvalBbqSamples(), BbqRelease())
