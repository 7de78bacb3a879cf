"""The ``sobaco`` kind (SOBACO design): paired social-bias and cultural-commonsense problems.

A template pair shares a background context, two complementary questions and the answer options (two
names and an unknown option). The *bias* problem appends a context that invites a stereotype (gold: the
unknown option; the stereotyped name is ``biased_label``); the *culture* problem appends a context that
cultural commonsense settles (gold: usually a name). Dummy problems compile into ``sobaco_dummy``.

Expansion per problem and question: every ordered pair of two different names (3 names → 6) × the
expression slot's alternatives (1, 2 or 3) × the 6 orders of the three options → 36, 72 or 108 rows.
The bias and the culture row of the same question, names, expression and option order show identical
options and share a ``pair_id``. Each such pair picks one of the first five unknown wordings of
dataset.yaml's ``unknown_options`` by a hash seeded with the dataset seed and the pair's key, so the
choice depends on that template alone.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ... import sameness
from ...diagnostics import Diagnostic
from ...schema import LocalizedText, as_filler, text_in
from ...templating import CompiledText, FilledText, join_contexts, slots_in, stable_hash, stable_id
from ...text import did_you_mean
from ..base import (
    ConfigSpec,
    Kind,
    Row,
    TemplateRows,
    alternative_problems,
    config_problem,
    invariant_hint,
    repeated_id_problems,
)
from .schema import NAME_SLOTS, UNKNOWN, SobacoTemplate

if TYPE_CHECKING:
    import pyarrow as pa

    from ...loader import KeyPath
    from ...projecttypes import Project, SourceTemplate

UNKNOWN_WORDINGS = 5  # SOBACO varies the unknown option over five wordings
ROLES = ("NAME1", "NAME2", UNKNOWN)
ORDERS: tuple[tuple[str, ...], ...] = tuple(itertools.permutations(ROLES))
QUESTIONS = (("q1", "first"), ("q2", "second"))
PAIR_CONFIG = "sobaco"
DUMMY_CONFIG = "sobaco_dummy"
_COMPLEMENT = {"NAME1": "NAME2", "NAME2": "NAME1", UNKNOWN: UNKNOWN}


@cache
def row_schema() -> pa.Schema:
    import pyarrow as pa

    answer = pa.list_(pa.string())
    return pa.schema(
        [
            ("example_id", pa.string()),
            ("pair_id", pa.string()),
            ("template_id", pa.string()),
            ("type", pa.string()),
            ("category", pa.string()),
            ("subcategory", pa.string()),
            ("question_id", pa.string()),
            ("background_context", pa.string()),
            ("additional_context", pa.string()),
            ("context", pa.string()),
            ("question", pa.string()),
            ("ans0", pa.string()),
            ("ans1", pa.string()),
            ("ans2", pa.string()),
            ("label", pa.int64()),
            ("unknown_label", pa.int64()),
            ("biased_label", pa.int64()),
            ("answer_info", pa.struct([("ans0", answer), ("ans1", answer), ("ans2", answer)])),
            ("names", pa.list_(pa.string())),
            ("fillers", pa.list_(pa.struct([("slot", pa.string()), ("text", pa.string())]))),
        ]
    )


@dataclass(frozen=True)
class Name:
    text: str  # as the context writes it
    option: str  # as an answer option


@dataclass(frozen=True)
class Problem:
    """One problem of a template: its type, the context it adds, and the answers to the first question."""

    type: str  # "bias" | "culture"
    field: str  # the template field of the additional context
    additional: CompiledText
    gold: str  # NAME1 | NAME2 | UNKNOWN, for the first question
    biased: str | None  # the stereotyped name for the first question (bias problems only)


@dataclass(frozen=True)
class _Plan:
    model: SobacoTemplate
    config: str
    names: tuple[Name, ...]
    word_slot: str | None
    expressions: tuple[str | None, ...]
    background: CompiledText
    questions: dict[str, CompiledText]
    problems: tuple[Problem, ...]

    @property
    def name_pairs(self) -> list[tuple[Name, Name]]:
        return [(a, b) for a, b in itertools.permutations(self.names, 2)]

    def values(self, first: Name, second: Name, expression: str | None) -> dict[str, str]:
        values = {"NAME1": first.text, "NAME2": second.text}
        if self.word_slot is not None and expression is not None:
            values[self.word_slot] = expression
        return values


def _names(model: SobacoTemplate, project: Project) -> tuple[Name, ...]:
    group = project.vocab.get(model.names)
    if group is None:
        return ()
    names = []
    for raw in group.group.fillers:
        filler = as_filler(raw)
        text = text_in(filler.text, project.lang) or ""
        option = text_in(filler.option, project.lang) if filler.option is not None else None
        names.append(Name(text, option or text))
    return tuple(names)


def _compiled(value: Any, lang: str) -> CompiledText:
    return CompiledText.parse(text_in(value, lang) or "")


def _problem(kind: str, field: str, text: Any, gold: str | None, biased: str | None, lang: str) -> Problem:
    # The template model guarantees that a pair has its answers and a dummy its answer.
    return Problem(kind, field, _compiled(text, lang), gold or UNKNOWN, biased)


def _plan(template: SourceTemplate, project: Project) -> _Plan:
    model: SobacoTemplate = template.model
    lang = project.lang
    problems: tuple[Problem, ...]
    if model.dummy is None:
        problems = (
            _problem("bias", "bias_context", model.bias_context, UNKNOWN, model.biased_answer, lang),
            _problem("culture", "culture_context", model.culture_context, model.culture_answer, None, lang),
        )
    else:
        problems = (
            _problem(model.dummy, "dummy_context", model.dummy_context, model.dummy_answer, None, lang),
        )
    word_slot = next(iter(model.words), None)
    expressions: tuple[str | None, ...] = (
        tuple(text_in(alt, lang) or "" for alt in model.words[word_slot]) if word_slot else (None,)
    )
    return _Plan(
        model=model,
        config=PAIR_CONFIG if model.dummy is None else DUMMY_CONFIG,
        names=_names(model, project),
        word_slot=word_slot,
        expressions=expressions,
        background=_compiled(model.background_context, lang),
        questions={qid: _compiled(getattr(model.questions, field), lang) for qid, field in QUESTIONS},
        problems=problems,
    )


def _text_key(base: KeyPath, value: Any, lang: str) -> KeyPath:
    return base + (lang,) if isinstance(value, LocalizedText) else base


def _template_texts(model: SobacoTemplate) -> list[tuple[KeyPath, Any]]:
    """Every text shown to a model, with its key path."""
    fields = ["background_context", "bias_context", "culture_context", "dummy_context"]
    texts: list[tuple[KeyPath, Any]] = [((f,), getattr(model, f)) for f in fields if getattr(model, f)]
    texts += [(("questions", field), getattr(model.questions, field)) for _, field in QUESTIONS]
    return texts


def rows_per_problem(model: SobacoTemplate, project: Project) -> int:
    """Rows one problem × question expands to: ordered name pairs × expressions × 6 option orders."""
    names = len(_names(model, project))
    expressions = len(next(iter(model.words.values()), [None]))
    return names * (names - 1) * expressions * len(ORDERS)


def _reports_for_group(template: SourceTemplate, project: Project) -> bool:
    """A names group's problems are reported once, by the first template that uses it."""
    users = [t.id for t in project.templates if t.kind == "sobaco" and t.model.names == template.model.names]
    return not users or template.id == min(users)


def says_the_same_of_both(text: str, lang: str) -> bool:
    """True when ``text`` says nothing of {{NAME1}} that it does not say of {{NAME2}}: the reading BBQ-style
    golds are held to (:mod:`jbcompile.sameness`), with each way of writing a name slot read as one."""
    spans = [(slot, start, end) for slot, start, end in slots_in(text) if slot in NAME_SLOTS]
    for slot, start, end in reversed(spans):
        text = text[:start] + "{{" + slot + "}}" + text[end:]
    first, second = ("{{" + slot + "}}" for slot in NAME_SLOTS)
    return sameness.says_the_same_of_both(text, first, second, lang)


def _unsettled_problems(template: SourceTemplate, lang: str) -> list[Diagnostic]:
    """A problem whose gold is a name, but whose added context says the same of both names (SB104): the
    background cannot tell them apart either (the bias problem's gold is the unknown option), so no
    context settles that gold."""
    model: SobacoTemplate = template.model
    problems = []
    for field, answer in (("culture_context", "culture_answer"), ("dummy_context", "dummy_answer")):
        text = text_in(getattr(model, field), lang) if getattr(model, field) else None
        gold = getattr(model, answer)
        if text is not None and gold in NAME_SLOTS and says_the_same_of_both(text, lang):
            problems.append(
                template.diagnostic(
                    (field,),
                    "SB104",
                    f"the {field} says the same of {{{{NAME1}}}} and {{{{NAME2}}}}, so it cannot settle "
                    f"the gold {gold}",
                    hint=f"write in {field} what sets {{{{{gold}}}}} apart, or make {answer} UNKNOWN",
                )
            )
    return problems


class SobacoKind(Kind):
    name = "sobaco"
    template_model = SobacoTemplate
    shown_columns = ("context", "question", "ans0", "ans1", "ans2")  # what a model reads of a row
    option_columns = ("ans0", "ans1", "ans2")
    configs = (
        ConfigSpec(
            PAIR_CONFIG,
            "paired social-bias and cultural-commonsense problems: every name pair, expression, option order",
            row_schema,
        ),
        ConfigSpec(DUMMY_CONFIG, "dummy (validation) problems, for checking that a prompt works", row_schema),
    )

    # ----------------------------------------------------------------------------------------- validation
    def validate(self, template: SourceTemplate, project: Project) -> list[Diagnostic]:
        model: SobacoTemplate = template.model
        lang = project.lang
        problems: list[Diagnostic] = []
        if model.names not in project.vocab:
            problems.append(
                template.diagnostic(
                    ("names",),
                    "R002",
                    f"unknown vocab group {model.names!r}",
                    hint=did_you_mean(model.names, project.vocab)
                    + "define the names in sources/vocab/*.yaml (e.g. group family_names) or fix the name",
                )
            )
        elif _reports_for_group(template, project):
            names = _names(model, project)
            group = project.vocab[model.names]
            if len(names) < 2 or not all(name.text for name in names):
                problems.append(
                    group.doc.diagnostic(
                        group.key_path,
                        "SB101",
                        f"the names group {model.names!r} needs at least two names with a {lang!r} text",
                        hint="list common family names (three give SOBACO's six ordered pairs)",
                    )
                )
            options = [name.option for name in names]
            texts = [name.text for name in names]
            if len(set(options)) != len(options) or len(set(texts)) != len(texts):
                problems.append(
                    group.doc.diagnostic(
                        group.key_path,
                        "SB102",
                        f"the names group {model.names!r} lists a name twice",
                        hint="keep one entry of each name (its text and its option wording differ from the "
                        "other names')",
                    )
                )
        allowed = set(NAME_SLOTS) | set(model.words)
        for key_path, value in _template_texts(model):
            text = text_in(value, lang)
            if text is None:
                problems.append(
                    template.diagnostic(key_path, "R010", f"no {lang!r} text", hint=f"add `{lang}:`")
                )
                continue
            for slot, start, _ in slots_in(text):
                bad = slot not in allowed or (key_path[0] == "questions" and slot in NAME_SLOTS)
                if bad:
                    pos = template.doc.text_position(_text_key(key_path, value, lang), start)
                    hint = (
                        "a complementary question names no one (the other name answers its complement)"
                        if slot in NAME_SLOTS
                        else f"use one of: {', '.join(sorted(allowed))}"
                    )
                    problems.append(
                        Diagnostic(
                            code="R001",
                            message=f"slot {{{{{slot}}}}} cannot stand here",
                            path=template.path,
                            line=pos.line if pos else None,
                            col=pos.col if pos else None,
                            hint=hint,
                            key_path=key_path,
                        )
                    )
            if key_path == ("background_context",):
                mentioned = {slot for slot, _, _ in slots_in(text)}
                for slot in NAME_SLOTS:
                    if slot not in mentioned:
                        problems.append(
                            template.diagnostic(
                                key_path,
                                "SB103",
                                f"the background context does not mention {{{{{slot}}}}}",
                                hint="introduce both names in the background context",
                            )
                        )
        problems += _unsettled_problems(template, lang)
        problems += alternative_problems(
            template, lang, "an expression alternative", hint=f"add `{lang}:` to the expression"
        )
        return problems

    def language_coverage(self, template: SourceTemplate, lang: str) -> str:
        present = [text_in(value, lang) is not None for _, value in _template_texts(template.model)]
        return "all" if all(present) else "some" if any(present) else "none"

    # ------------------------------------------------------------------------------------------ expansion
    def build(self, template: SourceTemplate, project: Project) -> TemplateRows:
        plan = _plan(template, project)
        return TemplateRows(rows={plan.config: _expand(plan, project)})

    def row_count(self, template: SourceTemplate, project: Project) -> int:
        """Both questions × its problems (bias and culture, or one dummy) × ``rows_per_problem``."""
        model: SobacoTemplate = template.model
        problems = 1 if model.dummy is not None else 2
        return len(QUESTIONS) * problems * rows_per_problem(model, project)

    def expand(self, template: SourceTemplate, project: Project) -> list[Row]:
        plan = _plan(template, project)
        return _expand(plan, project)

    def filled_texts(self, template: SourceTemplate, project: Project) -> Iterable[FilledText]:
        plan = _plan(template, project)
        model = plan.model
        roles = {slot: "person" for slot in NAME_SLOTS} | {slot: "word" for slot in model.words}
        compiled: dict[KeyPath, CompiledText] = {
            ("background_context",): plan.background,
            **{(problem.field,): problem.additional for problem in plan.problems},
            **{("questions", field): plan.questions[qid] for qid, field in QUESTIONS},
        }
        seen: set[tuple[KeyPath, str]] = set()
        for key_path, value in _template_texts(model):
            text = compiled.get(key_path)
            if text is None:
                continue
            for first, second in plan.name_pairs:
                for expression in plan.expressions:
                    filled = text.fill_with_spans(plan.values(first, second, expression), roles)
                    if (key_path, filled.text) in seen:
                        continue
                    seen.add((key_path, filled.text))
                    yield FilledText(_text_key(key_path, value, project.lang), filled.text, filled.spans)

    # ------------------------------------------------------------------------------------------- verify
    def verifier(self, config: str, project: Project) -> SobacoVerifier:
        return SobacoVerifier(config, project)


class _Cell:
    """The rows of one template × problem type × question seen so far: how many, and their positions."""

    def __init__(self) -> None:
        self.rows = 0
        self.positions: dict[str, Counter[int]] = {"label": Counter(), "unknown_label": Counter()}


@dataclass
class _Pair:
    """The members of one ``pair_id`` seen so far; the shown texts are kept only until the second one."""

    types: list[str]
    shown: tuple | None
    same: bool = True


class SobacoVerifier:
    """A ``sobaco`` config's invariants: every problem × question in full and balanced, labels that fit
    the problem type, and (paired config) each pair one bias and one culture row with the same options."""

    def __init__(self, config: str, project: Project) -> None:
        self.config, self.project = config, project
        self.misfits: list[str] = []  # SB203 messages, in row order
        self.cells: dict[tuple[str, str, str], _Cell] = defaultdict(_Cell)
        self.pairs: dict[str, _Pair] = {}

    def add(self, rows: Sequence[Row]) -> None:
        paired = self.config == PAIR_CONFIG
        for row in rows:
            cell = self.cells[(row["template_id"], row["type"], row["question_id"])]
            cell.rows += 1
            cell.positions["label"][row["label"]] += 1
            cell.positions["unknown_label"][row["unknown_label"]] += 1
            biased = row["biased_label"]
            if row["type"] == "bias" and paired:
                if row["label"] != row["unknown_label"] or biased is None or biased == row["unknown_label"]:
                    self.misfits.append(
                        f"{row['example_id']}: a bias row's gold must be the unknown option and "
                        "its biased option a name"
                    )
            elif biased is not None:
                self.misfits.append(f"{row['example_id']}: only bias problems declare a biased option")
            if paired:
                self._pair(row)

    def _pair(self, row: Row) -> None:
        shown = (row["background_context"], row["question"], row["ans0"], row["ans1"], row["ans2"])
        pair = self.pairs.get(row["pair_id"])
        if pair is None:
            self.pairs[row["pair_id"]] = _Pair([row["type"]], shown)
            return
        pair.types.append(row["type"])
        if pair.shown is not None:
            pair.same = pair.same and pair.shown == shown
            pair.shown = None  # a third member breaks the pair whatever it shows

    def finish(self, repeated: Mapping[str, int]) -> list[Diagnostic]:
        config, project = self.config, self.project
        problems = repeated_id_problems("SB201", config, repeated, project)

        def fail(code: str, message: str) -> None:
            problems.append(config_problem(code, config, message, project))

        for message in self.misfits:
            fail("SB203", message)
        for template in project.templates:
            if template.kind != SobacoKind.name:
                continue
            model: SobacoTemplate = template.model
            if (model.dummy is None) != (config == PAIR_CONFIG):
                continue
            expected = rows_per_problem(model, project)
            types = ("bias", "culture") if model.dummy is None else (model.dummy,)
            for problem_type, (qid, _) in itertools.product(types, QUESTIONS):
                cell = self.cells.get((model.id, problem_type, qid), _Cell())
                if cell.rows != expected:
                    problems.append(
                        template.diagnostic(
                            ("id",),
                            "SB202",
                            f"[{config}] {model.id} {problem_type} {qid}: {cell.rows} rows, not {expected}",
                            hint=invariant_hint("check the template's expressions and its names group"),
                        )
                    )
                    continue
                for column, positions in cell.positions.items():
                    counts = [positions.get(i, 0) for i in range(3)]
                    if len(set(counts)) != 1:
                        fail(
                            "SB204",
                            f"{model.id} {problem_type} {qid}: {column} positions are unbalanced {counts}",
                        )
        for pair_id, pair in self.pairs.items():
            if sorted(pair.types) != ["bias", "culture"] or not pair.same:
                fail("SB205", f"pair {pair_id} is not one bias and one culture row with the same options")
        return problems


def _expand(plan: _Plan, project: Project) -> list[Row]:
    model = plan.model
    seed = project.dataset.seed
    unknowns = project.unknown_texts[:UNKNOWN_WORDINGS]
    rows: list[Row] = []
    word_slots = [plan.word_slot] if plan.word_slot else []
    for qid, _ in QUESTIONS:
        question_text = plan.questions[qid]
        for first, second in plan.name_pairs:
            for expression in plan.expressions:
                values = plan.values(first, second, expression)
                background = plan.background.fill(values)
                question = question_text.fill(values)
                fillers = [{"slot": slot, "text": values[slot]} for slot in (*NAME_SLOTS, *word_slots)]
                people = {"NAME1": first, "NAME2": second}
                for order_index, order in enumerate(ORDERS):
                    key = (model.id, qid, first.text, second.text, expression or "", order_index)
                    unknown = unknowns[stable_hash(seed, "sobaco-unknown", *key) % len(unknowns)]
                    options = {slot: person.option for slot, person in people.items()} | {UNKNOWN: unknown}
                    position = {role: i for i, role in enumerate(order)}
                    info = {
                        f"ans{i}": [options[role], "unknown" if role == UNKNOWN else role]
                        for i, role in enumerate(order)
                    }
                    pair_id = f"{model.id}-{qid}-{stable_id(*key)}"
                    for problem in plan.problems:
                        gold = problem.gold if qid == "q1" else _COMPLEMENT[problem.gold]
                        biased = None
                        if problem.biased is not None:
                            biased = problem.biased if qid == "q1" else _COMPLEMENT[problem.biased]
                        additional = problem.additional.fill(values)
                        rows.append(
                            {
                                "example_id": f"{pair_id}-{problem.type}",
                                "pair_id": pair_id if plan.config == PAIR_CONFIG else None,
                                "template_id": model.id,
                                "type": problem.type,
                                "category": model.category,
                                "subcategory": model.subcategory,
                                "question_id": qid,
                                "background_context": background,
                                "additional_context": additional,
                                "context": join_contexts(background, additional),
                                "question": question,
                                "ans0": options[order[0]],
                                "ans1": options[order[1]],
                                "ans2": options[order[2]],
                                "label": position[gold],
                                "unknown_label": position[UNKNOWN],
                                "biased_label": position[biased] if biased is not None else None,
                                "answer_info": info,
                                "names": [first.text, second.text],
                                "fillers": fillers,
                            }
                        )
    return rows


KIND = SobacoKind()
