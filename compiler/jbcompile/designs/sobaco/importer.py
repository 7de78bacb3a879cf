"""``jbcompile import sobaco-json FILE``: SOBACO's public template set → ``sobaco`` pair templates.

The input is one JSON list of problems. Each problem has ``context`` and ``question`` with ``{name1}`` /
``{name2}`` placeholders, ``category``, ``sample_idx``, ``param`` (alternative expressions for
``{param}``, possibly empty), ``additional_context_bias``, ``additional_context_culture``,
``biased_option_template`` and ``answer_template`` (``{name1}``, ``{name2}`` or ``IDK`` for the unknown
option). Two problems that share every text but the question, and whose answers are complementary, are
one pair of our format: the first question and its complement.

SOBACO's generator fills ``{param}`` into ``context`` only and picks the unknown wording at random; the
round trip therefore compares the context, the added context, the question, the option set (any unknown
wording counts as the unknown option) and the gold of every row SOBACO generates.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError, Severity
from ...importers.draft import DraftFiller, SourcesDraft, slug
from ...importers.interface import Imported, Importer, Input, Option, ProgressBar, no_progress
from ...importers.releases import REPEATED, repeat_problem, repeats
from ...importers.report import GENERAL, ImportReport
from ...jsonl import JsonCodes, read_json_document
from ...paths import display_path
from ...reading import RELEASE

# The SOBACO paper's three family names and five unknown wordings (the defaults of the command).
PAPER_NAMES = ("佐藤", "鈴木", "田中")
PAPER_UNKNOWN = ("わからない", "判断できない", "回答できない", "情報が不十分", "どちらでもない")
FIELDS = (
    "context",
    "question",
    "category",
    "sample_idx",
    "param",
    "additional_context_bias",
    "additional_context_culture",
    "biased_option_template",
    "answer_template",
)
SHARED = ("context", "category", "param", "additional_context_bias", "additional_context_culture")
PLACEHOLDERS = {"{name1}": "{{NAME1}}", "{name2}": "{{NAME2}}", "{param}": "{{WORD1}}"}
ANSWERS = {"{name1}": "NAME1", "{name2}": "NAME2", "IDK": "UNKNOWN"}
COMPLEMENT = {"NAME1": "NAME2", "NAME2": "NAME1", "UNKNOWN": "UNKNOWN"}
UNKNOWN = "\x00unknown"  # any unknown wording, when rows are compared
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
# A file that is not JSON cannot be read at all (IM001); a problem that does not fit is IM031.
JSON_CODES = JsonCodes(
    not_json="IM001", too_deep="IM001", not_text="IM001", not_object="IM031", not_rows="IM031"
)


@dataclass(frozen=True)
class Problem:
    index: int  # position in the JSON list
    path: str
    data: dict[str, Any]
    line: int | None = None  # where it starts in the file

    def get(self, name: str) -> Any:
        return self.data[name]

    @property
    def biased(self) -> str:
        return ANSWERS[self.data["biased_option_template"]]

    @property
    def answer(self) -> str:
        return ANSWERS[self.data["answer_template"]]

    def diagnostic(
        self, code: str, message: str, severity: Severity = Severity.ERROR, hint: str | None = None
    ) -> Diagnostic:
        return Diagnostic(
            code=code,
            message=f"problem {self.index} (sample_idx {self.data.get('sample_idx')}): {message}",
            path=self.path,
            line=self.line,
            severity=severity,
            hint=hint,
        )


# What a problem of SOBACO's template set holds (the hint of IM031).
PROBLEM_HINT = (
    f"a SOBACO problem is an object with the fields {', '.join(FIELDS)}: context, question and the two "
    "additional contexts are texts (with {name1}, {name2}, {param}), param a list of expressions (may be "
    "empty), biased_option_template and answer_template one of {name1}, {name2}, IDK; fix the problem to "
    "bring its rows in"
)


# what names a problem (SOBACO numbers its problems per category); a second problem of the same name, or
# of the same content under another number, is one given twice (IM064)
NAME_FIELDS = ("sample_idx",)
NAME_SCOPE = ("category",)


def _check(data: Any) -> str | None:
    """What makes ``data`` not a SOBACO problem, or None."""
    if not isinstance(data, dict):
        return "a problem must be a JSON object"
    missing = [name for name in FIELDS if name not in data]
    if missing:
        return f"missing fields: {', '.join(missing)}"
    if not isinstance(data["param"], list) or not all(
        isinstance(p, str) and p.strip() for p in data["param"]
    ):
        return "param must be a list of strings, none of them empty"
    if type(data["sample_idx"]) is not int:  # it orders a pair's problems and names its template
        return f"sample_idx must be a whole number, found {data['sample_idx']!r}"
    if not isinstance(data["category"], str) or not data["category"].strip():
        return "category must be a name (a string, not empty)"
    for name in ("biased_option_template", "answer_template"):
        if data[name] not in ANSWERS:
            return f"{name} is {data[name]!r}; expected one of {', '.join(ANSWERS)}"
    for name in ("context", "question", "additional_context_bias", "additional_context_culture"):
        if not isinstance(data[name], str):
            return f"{name} must be a string"
        if not data[name].strip():  # every row of the problem would show a text of no words
            return f"{name} is empty"
        stray = set(_PLACEHOLDER.findall(data[name])) - set(PLACEHOLDERS)
        if stray:
            known = "{name1}, {name2}, {param}"
            return f"{name} holds placeholders {sorted(stray)}; SOBACO fills only {known}"
    if "{param}" in data["context"] and len(data["param"]) < 2:
        return "context holds {param} but param lists fewer than two expressions"
    return None


def _lost_rows(item: Any, names: int) -> int:
    """The rows a problem left out would have given (both types), so that the coverage counts them: its
    ``param`` expressions when it lists them, else one."""
    param = item.get("param") if isinstance(item, dict) else None
    return 2 * _rows_per_type(len(param) if isinstance(param, list) else 0, names)


def read_problems(path: Path, report: ImportReport, names: int = len(PAPER_NAMES)) -> list[Problem]:
    display = display_path(Path(path))
    try:  # the shown path names the same file (relative to the working folder where it can be)
        document = read_json_document(Path(display), JSON_CODES, RELEASE)
    except OSError as exc:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM001",
                    message=f"cannot read {display}: {exc}",
                    path=display,
                    hint="check the path and that the file can be read",
                )
            ]
        ) from None
    if document.problem is not None:
        raise DiagnosticError([document.problem])
    data = document.value
    if not isinstance(data, list):
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM031",
                    message="the file must hold a JSON list of problems",
                    path=display,
                    hint="give SOBACO's ja_templates.json (a list of problem objects)",
                )
            ]
        )
    problems = []
    for index, (line, item) in enumerate(zip(document.element_lines(), data, strict=True)):
        reason = _check(item)
        if reason is None:
            problems.append(Problem(index, display, item, line))
            continue
        report.template(GENERAL).rows += _lost_rows(item, names)
        report.add(
            None,
            Diagnostic(
                code="IM031",
                message=f"problem {index}: {reason}; skipped",
                path=display,
                line=line,
                hint=PROBLEM_HINT,
            ),
        )
    twice = repeats([problem.data for problem in problems], NAME_FIELDS, NAME_SCOPE)
    for position, (first, what) in sorted(twice.items()):  # counted once: its rows are the first's
        problem = problems[position]
        report.template(GENERAL).rows += _lost_rows(problem.data, names)
        where = (display, problems[first].line)
        report.add(
            None, repeat_problem(REPEATED, problem.data, what, NAME_FIELDS, display, problem.line, where)
        )
    return [problem for position, problem in enumerate(problems) if position not in twice]


def _slots(text: str) -> str:
    for placeholder, slot in PLACEHOLDERS.items():
        text = text.replace(placeholder, slot)
    return text


def pair_problems(
    problems: Sequence[Problem], report: ImportReport, names: int = len(PAPER_NAMES)
) -> list[tuple[Problem, Problem]]:
    """Problems that share their texts and have complementary answers, two by two (others reported)."""
    groups: dict[tuple, list[Problem]] = defaultdict(list)
    for problem in problems:
        groups[tuple(json.dumps(problem.get(f), ensure_ascii=False) for f in SHARED)].append(problem)
    pairs = []
    for members in groups.values():
        members = sorted(members, key=lambda p: (p.get("sample_idx"), p.index))
        if len(members) == 2:
            first, second = members
            if second.biased == COMPLEMENT[first.biased] and second.answer == COMPLEMENT[first.answer]:
                pairs.append((first, second))
                continue
            reason = "their answers are not complementary (the other name, or unknown for unknown)"
        else:
            reason = f"{len(members)} problems share these texts; a pair needs exactly two"
        for problem in members:
            report.template(GENERAL).rows += _lost_rows(problem.data, names)
            report.add(
                None,
                problem.diagnostic(
                    "IM032",
                    f"not imported: {reason}",
                    hint="a SOBACO pair is two problems with the same texts: a bias one and its culture "
                    "counterpart; give both, or leave this one out",
                ),
            )
    return sorted(pairs, key=lambda pair: pair[0].index)


def import_sobaco_json(
    path: Path, names: Sequence[str] = PAPER_NAMES, unknown: Sequence[str] = PAPER_UNKNOWN, source: str = "ja"
) -> tuple[SourcesDraft, ImportReport, dict[str, tuple[Problem, Problem]]]:
    """Read SOBACO's template file into a draft of pair templates; returns the pairs per template id."""
    if any(not name.strip() for name in names):
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM033", message="a --name is empty", hint="give family names, e.g. --name 佐藤"
                )
            ]
        )
    if len(set(names)) < 2:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM033",
                    message="fewer than two different --name values",
                    hint="give at least two different --name values",
                )
            ]
        )
    if not unknown:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM033", message="no --unknown wording", hint="give at least one --unknown wording"
                )
            ]
        )
    report = ImportReport()
    problems = read_problems(path, report, len(set(names)))
    draft = SourcesDraft(lang="ja", name="sobaco-import", pretty_name="Imported SOBACO-format benchmark")
    draft.unknown_options = list(dict.fromkeys(unknown))
    if len(draft.unknown_options) < 5:
        report.add(
            None,
            Diagnostic(
                code="IM033",
                message=f"{len(draft.unknown_options)} unknown wording(s) given; the sobaco kind draws from "
                "the first five of unknown_options, so jbcompile's own wordings fill the rest",
                severity=Severity.WARNING,
                hint="give five --unknown wordings (SOBACO uses five)",
            ),
        )
    draft.checks = {"JA101": "warning", "JA102": "warning"}
    names_group = draft.group_for("Names", "name", tuple(DraftFiller(n) for n in dict.fromkeys(names)), None)
    imported: dict[str, tuple[Problem, Problem]] = {}
    for first, second in pair_problems(problems, report, len(set(names))):
        category = str(first.get("category"))
        category = slug(category[:1].upper() + category[1:])
        name = draft.unique_template_id(slug(f"sobaco-{category}-{first.get('sample_idx')}"))
        entry = report.template(name, f"{source}/{first.get('sample_idx')}+{second.get('sample_idx')}")
        entry.rows += 4 * rows_per_problem(first, len(set(names)))  # 2 problems × (bias, culture)
        template: dict[str, Any] = {
            "kind": "sobaco",
            "id": name,
            "category": category,
            "names": names_group,
        }
        params = list(first.get("param"))
        if params and "{param}" in first.get("context"):
            template["words"] = {"WORD1": params}
        elif params:
            report.add(
                name, first.diagnostic("IM034", "param is listed but context has no {param}", Severity.INFO)
            )
        template |= {
            "background_context": _slots(first.get("context")),
            "questions": {"first": first.get("question"), "second": second.get("question")},
            "bias_context": _slots(first.get("additional_context_bias")),
            "biased_answer": first.biased if first.biased != "UNKNOWN" else None,
            "culture_context": _slots(first.get("additional_context_culture")),
            "culture_answer": first.answer,
            "upstream": entry.upstream,
            "attested": f"imported from {first.path}",
        }
        if template["biased_answer"] is None:
            report.add(
                name,
                first.diagnostic(
                    "IM034",
                    "the biased option is IDK; a bias problem needs a name",
                    hint="set biased_option_template to a name's option",
                ),
            )
            continue
        if "{param}" in first.get("additional_context_bias") + first.get("additional_context_culture"):
            report.add(
                name,
                first.diagnostic(
                    "IM034",
                    "an added context holds {param}, which SOBACO's generator leaves unfilled there; the "
                    "build fills it",
                    Severity.WARNING,
                ),
            )
        draft.add_template(template)
        imported[name] = (first, second)
    return draft, report, imported


def rows_per_problem(problem: Problem, names: int) -> int:
    """SOBACO's rows per problem and type."""
    return _rows_per_type(len(problem.get("param")), names)


def _rows_per_type(expressions: int, names: int) -> int:
    """Ordered name pairs × expressions (one when none) × 6 option orders."""
    return names * (names - 1) * max(1, expressions) * 6


def expected_signatures(problem: Problem, names: Sequence[str], kind: str) -> Counter:
    """What SOBACO's generator makes of one problem and type (bias | culture), as comparable signatures."""
    found: Counter = Counter()
    answer = "UNKNOWN" if kind == "bias" else problem.answer
    additional_field = f"additional_context_{kind}"
    for param in problem.get("param") or [None]:
        for name1, name2 in itertools.permutations(dict.fromkeys(names), 2):
            values = {"{name1}": name1, "{name2}": name2}

            def fill(text: str, values: dict[str, str] = values) -> str:
                for placeholder, value in values.items():
                    text = text.replace(placeholder, value)
                return text

            context = fill(problem.get("context"))
            if param is not None:
                context = context.replace("{param}", param)
            gold = {"NAME1": name1, "NAME2": name2, "UNKNOWN": UNKNOWN}[answer]
            options = tuple(sorted((name1, name2, UNKNOWN)))
            signature = (
                kind,
                context,
                fill(problem.get(additional_field)),
                problem.get("question"),
                options,
                gold,
            )
            found[signature] += 6  # the six option orders
    return found


def built_signature(row: dict[str, Any]) -> tuple:
    unknown = row["unknown_label"]
    options = [row["ans0"], row["ans1"], row["ans2"]]
    shown = tuple(sorted(UNKNOWN if i == unknown else o for i, o in enumerate(options)))
    gold = UNKNOWN if row["label"] == unknown else options[row["label"]]
    return (row["type"], row["background_context"], row["additional_context"], row["question"], shown, gold)


@dataclass(frozen=True)
class Release:
    """What the round trip compares the build with: SOBACO's pairs per template id, and the names."""

    pairs: dict[str, tuple[Problem, Problem]]
    names: list[str]


class SobacoJson(Importer):
    name = "sobaco-json"
    summary = "Import SOBACO's problems as sobaco pair templates; check that the build gives SOBACO's rows."
    input = Input("file", "SOBACO's template set: a JSON list of problems.")
    options = (
        Option(
            "names",
            ("--name",),
            "A family name filling {name1}/{name2} (repeat it); default: the paper's three.",
            many=True,
        ),
        Option(
            "unknown",
            ("--unknown",),
            "A wording of the unknown option (repeat it); default: the paper's five.",
            many=True,
        ),
    )

    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        names = list(options["names"] or PAPER_NAMES)
        draft, report, pairs = import_sobaco_json(inputs[0], names, list(options["unknown"] or PAPER_UNKNOWN))
        return Imported(draft, report, Release(pairs, names))

    def verify_round_trip(
        self, sources: Path, imported: Imported, progress: ProgressBar = no_progress
    ) -> None:
        """Count, per template, SOBACO's rows that the compiled template reproduces (as a multiset)."""
        from ...project import load_project
        from .. import get_kind

        release: Release = imported.release
        report = imported.report
        project = load_project(sources, lang="ja")
        for template in project.templates:
            pair = release.pairs.get(template.id)
            if pair is None:
                continue
            built = Counter(built_signature(row) for row in get_kind(template.kind).expand(template, project))
            expected: Counter = Counter()
            for problem in pair:
                for kind in ("bias", "culture"):
                    expected += expected_signatures(problem, release.names, kind)
            matched = expected & built
            report.template(template.id).reproduced += sum(matched.values())
            missing = expected - built
            if missing:
                example = next(iter(missing))
                report.add(
                    template.id,
                    pair[0].diagnostic(
                        "IM035",
                        f"{sum(missing.values())} rows not reproduced, e.g. {example[0]} {example[1][:40]!r}",
                        hint="compare the problem with the imported template (jbcompile import --verbose); "
                        "the release may hold a text the generator does not make",
                    ),
                )


IMPORTER = SobacoJson()
