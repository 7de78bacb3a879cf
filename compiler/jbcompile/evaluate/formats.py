"""Files other people released or produced, read as they are, into the rows the evaluator's kinds read.

``eval`` and ``score`` accept these without an import step (docs/eval.md, "score: formats read"):

- **BBQ / JBBQ rows** (``answer_info``, ``additional_metadata.stereotyped_groups``, no label columns of
  ours): the label columns are derived by the documented rule of :mod:`.bbq.bbq_format`; rows where
  it is ambiguous are listed, never guessed.
- **JUBAKU-v2 rows** (``example_id`` ``<case>_<wording>_<fwd|rev>``, ``viewpoint``, ``instruction`` =
  the whole prompt, ``input``, ``correct_answer`` ``a``/``b``, ``original_id``, ``is_swapped``).
- **The JUBAKU-v2 evaluation script's output**: one JSON object ``{"score": …, "entries": [release row
  + "model_ans" (+ "generated_text" | "likelihood_scores", "best_candidate")]}``.
- **lm-evaluation-harness ``--log_samples`` lines of its ``bbq`` tasks** (``doc_id``, ``doc``,
  ``arguments``, ``filtered_resps`` …): the doc is a BBQ row; the prediction is the highest
  log-likelihood choice (multiple choice; ``arguments`` as ``gen_args_<k>`` requests or, from older
  lm-eval versions, [context, continuation] pairs) or the generated reply read by
  :func:`.parsing.read_reply`; ``--prediction-field`` does not apply to them.

BBQ numbers its rows per category file, so when example ids repeat across categories (a concatenation,
or a Hub config holding every category) they are qualified as ``<category>/<id>``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic
from .bbq.bbq_format import BBQ_ROW_FIELDS, derive_labels, question_of, second_attributes
from .kind import option_index
from .parsing import read_prediction

JUBAKU_RELEASE_FIELDS = frozenset(
    {"example_id", "viewpoint", "instruction", "correct_answer", "original_id", "is_swapped"}
)
JUBAKU_OUTPUT_PREDICTION = "model_ans"
BBQ_RELEASE_FIELDS = BBQ_ROW_FIELDS
OUR_BBQ_LABELS = ("target_label", "unknown_label", "biased_label")
LM_EVAL_FIELDS = frozenset({"doc_id", "doc", "arguments", "filtered_resps"})
LM_EVAL_PREDICTION = "filtered_resps"
RAW_REPLY = "_raw_reply"  # where an lm-eval reply is kept for the predictions' raw_output

_JUBAKU_ID = re.compile(r"^(?P<case>.+)_(?P<wording>\d+)_(?P<order>fwd|rev)$")
_JUBAKU_MARKS = ("【文脈】", "【応答A】", "【応答B】")


@dataclass
class Adapted:
    """Rows in the columns of the evaluator's kinds, with where each came from and what was unclear."""

    rows: list[dict[str, Any]]
    lines: list[int]
    format: str  # jbcompile | bbq | jubaku-v2 | jubaku-v2-output | lm-eval-bbq | other
    kind: str | None = None  # the kind the format belongs to, when the format says
    prediction_field: str | None = None  # where the format keeps its prediction
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    verbatim_prompt: bool = False  # ``instruction`` is the release's whole prompt: send it as it is


def detect_format(row: Mapping[str, Any]) -> str:
    keys = set(row)
    if keys >= LM_EVAL_FIELDS:
        return "lm-eval-bbq"
    if keys >= JUBAKU_RELEASE_FIELDS and "label" not in keys:
        return "jubaku-v2-output" if JUBAKU_OUTPUT_PREDICTION in keys else "jubaku-v2"
    if keys >= BBQ_RELEASE_FIELDS and not all(name in keys for name in OUR_BBQ_LABELS):
        return "bbq"
    return "other"


def adapt(
    records: Sequence[tuple[int, Mapping[str, Any]]], path: str, prediction_field: str | None = None
) -> Adapted:
    """Rows of a release or harness format turned into our columns; other rows pass through unchanged.

    ``prediction_field`` is the column the user named (``score --prediction-field``), checked against
    formats that keep their prediction in one place of their own."""
    if not records:
        return Adapted([], [], "other")
    fmt = detect_format(records[0][1])
    lines = [line for line, _ in records]
    if fmt == "other":
        return Adapted([dict(row) for _, row in records], lines, "other")
    adapted = Adapted([], [], fmt)
    if fmt == "lm-eval-bbq" and prediction_field not in (None, LM_EVAL_PREDICTION):
        adapted.problems.append(
            Diagnostic(
                "EV135",
                f"--prediction-field {prediction_field} does not apply to lm-evaluation-harness logs: "
                f"the prediction is read from each sample's {LM_EVAL_PREDICTION} (and arguments)",
                path=path,
                hint="leave --prediction-field out",
            )
        )
        return adapted
    for line, row in records:
        if fmt == "lm-eval-bbq":
            converted, problem = lm_eval_row(row)
        elif fmt.startswith("jubaku"):
            converted, problem = jubaku_release_row(row)
        else:
            converted, problem = dict(row), None
        if problem is None and converted is not None and fmt in ("bbq", "lm-eval-bbq"):
            problem = bbq_row_problem(converted)
        if problem is not None or converted is None:
            adapted.problems.append(Diagnostic("EV130", f"{fmt} row: {problem}", path=path, line=line))
            continue
        adapted.rows.append(converted)
        adapted.lines.append(line)
    qualify_repeated_ids(adapted.rows)
    if fmt in ("bbq", "lm-eval-bbq"):
        adapted.kind = "bbq"
        adapted.ambiguous = add_bbq_labels(adapted.rows, adapted.lines)
        adapted.prediction_field = LM_EVAL_PREDICTION if fmt == "lm-eval-bbq" else None
    else:
        adapted.kind = "jubaku"
        adapted.verbatim_prompt = True
        adapted.prediction_field = JUBAKU_OUTPUT_PREDICTION if fmt == "jubaku-v2-output" else None
    return adapted


# ---- BBQ ------------------------------------------------------------------------------------------


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


def qualify_repeated_ids(rows: list[dict[str, Any]]) -> None:
    """Example ids as strings; ``<category>/<id>`` when an id recurs in another category (BBQ's files)."""
    categories: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        categories[str(row.get("example_id"))].add(str(row.get("category")))
    repeated = any(len(names) > 1 for names in categories.values())
    for row in rows:
        example_id = str(row.get("example_id"))
        row["example_id"] = f"{row.get('category')}/{example_id}" if repeated else example_id


# ---- JUBAKU-v2 ------------------------------------------------------------------------------------


def holds_whole_prompts(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Built ``jubaku`` rows whose ``instruction`` already shows both responses: a benchmark's own prompt
    layout (``prompt.layout`` in the sources, e.g. an imported JUBAKU-v2 release), to be sent as it is
    rather than wrapped in our prompt a second time."""
    return bool(rows) and all(
        isinstance(row.get("instruction"), str)
        and isinstance(row.get("ans0"), str)
        and isinstance(row.get("ans1"), str)
        and row["ans0"] in row["instruction"]
        and row["ans1"] in row["instruction"]
        for row in rows
    )


def split_jubaku_prompt(instruction: str) -> tuple[str, str, str]:
    """The dialogue and the two responses inside a JUBAKU-v2 prompt ("" when the marks are missing)."""
    positions = [instruction.find(mark) for mark in _JUBAKU_MARKS]
    if any(p < 0 for p in positions) or positions != sorted(positions):
        return "", "", ""
    (ctx, a, b), width = positions, [len(mark) for mark in _JUBAKU_MARKS]
    context = instruction[ctx + width[0] : a].strip()
    first = instruction[a + width[1] : b].strip()
    rest = instruction[b + width[2] :].strip()
    second = rest.rsplit("\n\n", 1)[0].strip() if "\n\n" in rest else rest  # drop the closing request
    return context, first, second


def jubaku_release_row(row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """A JUBAKU-v2 row (or an entry of its evaluation output) in the ``jubaku`` kind's columns."""
    example_id = row.get("example_id")
    match = _JUBAKU_ID.match(str(example_id)) if isinstance(example_id, str) else None
    if match is None:
        return None, f"example_id {example_id!r} is not <case>_<wording>_<fwd|rev>"
    answer = row.get("correct_answer")
    if not isinstance(answer, str) or answer.strip().lower() not in ("a", "b"):
        return None, f"correct_answer must be 'a' or 'b', found {answer!r}"
    if not isinstance(row.get("instruction"), str) or not row["instruction"].strip():
        return None, "instruction (the prompt) is empty"
    if not isinstance(row.get("viewpoint"), str) or not row["viewpoint"]:
        return None, "viewpoint (the category) is missing"
    label = 0 if answer.strip().lower() == "a" else 1
    context, first, second = split_jubaku_prompt(row["instruction"])
    converted = dict(row)
    converted.update(
        category=row["viewpoint"],
        template_id=str(row.get("original_id") if row.get("original_id") is not None else match["case"]),
        instruction_id=int(match["wording"]),
        order="neutral_first" if label == 0 else "biased_first",
        context=context,
        ans0=first,
        ans1=second,
        label=label,
        biased_label=1 - label,
    )
    return converted, None


# ---- lm-evaluation-harness ------------------------------------------------------------------------


def _loglikelihood(response: Any) -> float | None:
    value = response[0] if isinstance(response, list | tuple) and response else response
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def lm_eval_row(sample: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The BBQ doc of an lm-eval sample with its prediction (option index or None) in ``filtered_resps``."""
    doc = sample.get("doc")
    if not isinstance(doc, Mapping):
        return None, "doc is not an object"
    responses = sample.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        return None, "filtered_resps is empty"
    options = [doc.get(f"ans{i}") for i in range(3)]
    if not all(isinstance(option, str) for option in options):
        return None, "the doc lacks ans0, ans1 or ans2"
    row = dict(doc)
    if row.get("example_id") is None:
        row["example_id"] = sample.get("doc_id")
    if len(responses) == 1 and isinstance(responses[0], str):  # generate_until: one reply
        row[RAW_REPLY] = responses[0]
        row[LM_EVAL_PREDICTION] = read_prediction(responses[0], ("0", "1", "2"), options)
        return row, None
    scores = [_loglikelihood(response) for response in responses]
    if any(score is None for score in scores):
        return None, "filtered_resps holds a value that is not a log-likelihood"
    arguments = sample.get("arguments")
    choices = _continuations(arguments, len(scores))
    if choices is None:
        return None, "arguments do not list one continuation per log-likelihood"
    unknowns = [i for i in range(3) if str(_tag_of(doc, i)).casefold() == "unknown"]
    to_option = _choice_options(choices, options, unknowns[0] if len(unknowns) == 1 else None)
    if to_option is None:
        return None, "its choices cannot be matched to ans0-ans2"
    best = max(range(len(scores)), key=lambda k: (scores[k], -k))  # numpy's argmax: the first maximum
    row[RAW_REPLY] = choices[best]
    row[LM_EVAL_PREDICTION] = to_option[best]
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


def duplicate_ids(rows: Sequence[Mapping[str, Any]], lines: Sequence[int], path: str) -> list[Diagnostic]:
    """One diagnostic per example id that occurs on more than one line."""
    where: dict[str, list[int]] = defaultdict(list)
    for row, line in zip(rows, lines, strict=True):
        where[str(row.get("example_id"))].append(line)
    counts = Counter({key: len(found) for key, found in where.items() if len(found) > 1})
    return [
        Diagnostic(
            "EV121",
            f"example_id {key!r} occurs on {count} lines ({', '.join(map(str, where[key][:5]))}"
            + (", …" if count > 5 else "")
            + "); which prediction counts is not clear",
            path=path,
            line=where[key][1],
            hint="keep one line per row",
        )
        for key, count in sorted(counts.items(), key=lambda item: where[item[0]][1])
    ]


def release_path(path: Path) -> bool:
    """A single file in a release's own format, rather than a build folder or a Hub id."""
    return path.is_file() and path.suffix.lower() in (".jsonl", ".json", ".parquet")
