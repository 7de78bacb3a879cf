"""``jbcompile import jubaku-jsonl FILE``: the JUBAKU-v2 release → ``jubaku`` cases that rebuild it.

The release is one JSONL file, one row per case × instruction wording × response order:

- ``example_id``: ``<case>_<wording>_<fwd|rev>``; ``original_id``: the case; ``is_swapped``: false for
  ``fwd``, true for ``rev``; ``correct_answer``: ``a`` or ``b`` (the response without bias);
- ``viewpoint``: the category, in Japanese; ``input``: empty;
- ``instruction``: the whole prompt — the wording (a bias definition), ``【文脈】`` and the dialogue,
  ``【応答A】`` and ``【応答B】`` with the two responses, and a closing line asking for one letter.

Each case becomes one ``jubaku`` case whose ``prompt:`` carries the release's wordings, its layout (the
markers and the closing line) and its id pattern as data, so that ``jbcompile build`` gives back the same
``example_id`` and the same ``instruction``, byte for byte. The round trip is checked after writing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...diagnostics import Diagnostic, Severity
from ...importers.draft import SourcesDraft, slug
from ...importers.interface import Imported, Importer, Input, ProgressBar, no_progress
from ...importers.releases import RowCodes, read_release_rows, require_rows
from ...importers.report import ImportReport

ID_PATTERN = re.compile(r"^(?P<case>.+)_(?P<wording>\d+)_(?P<order>fwd|rev)$")
ORDER_NAMES = {"biased_first": "fwd", "neutral_first": "rev"}  # fwd shows the biased response as A
CONTEXT_MARK = "【文脈】\n"
A_MARK = "\n\n【応答A】\n"
B_MARK = "\n\n【応答B】\n"
# Wording rules that refuse a build by default; a release is kept as written, so they only warn.
RELEASE_WORDING_CHECKS = {"JA101": "warning", "JA102": "warning"}
RELEASE_FIELDS = ("viewpoint", "instruction", "input", "correct_answer", "original_id", "is_swapped")

# The release's viewpoints and the category names the jubaku kind documents for them.
VIEWPOINTS = {
    "性別": "Gender",
    "宗教": "Religion",
    "民族": "Nationality_ethnicity",
    "教育": "Education",
    "人種": "Race",
    "地域": "Region",
    "感情と価値観": "Emotions_values",
    "食べ物と飲み物": "Food_drink",
    "基本的な行動様式": "Basic_behaviors",
    "氏名": "Names",
}


@dataclass(frozen=True)
class JubakuRow:
    """One release row, parsed: the prompt cut at its markers."""

    path: str
    line: int
    data: dict[str, Any]
    case: str
    wording: int
    order: str  # neutral_first | biased_first
    prefix: str  # the wording: everything before 【文脈】
    context: str
    response_a: str
    response_b: str
    closing: str  # everything after the second response

    @property
    def neutral(self) -> str:
        return self.response_a if self.order == "neutral_first" else self.response_b

    @property
    def biased(self) -> str:
        return self.response_b if self.order == "neutral_first" else self.response_a

    def diagnostic(
        self, code: str, message: str, severity: Severity = Severity.ERROR, hint: str | None = None
    ) -> Diagnostic:
        return Diagnostic(
            code=code, message=message, path=self.path, line=self.line, col=1, severity=severity, hint=hint
        )


def parse_row(data: Any, path: str, line: int) -> JubakuRow:
    """One JSON object as a JubakuRow; ValueError says what does not fit the release's format."""
    if not isinstance(data, dict):
        raise ValueError("a row must be a JSON object")
    missing = [name for name in ("example_id", *RELEASE_FIELDS) if name not in data]
    if missing:
        raise ValueError(f"missing fields: {', '.join(missing)}")
    match = ID_PATTERN.match(str(data["example_id"]))
    if match is None:
        raise ValueError(f"example_id {data['example_id']!r} is not <case>_<wording>_<fwd|rev>")
    order = "biased_first" if match.group("order") == "fwd" else "neutral_first"
    if data["is_swapped"] is not (order == "neutral_first"):
        raise ValueError(f"is_swapped {data['is_swapped']!r} does not fit the id's {match.group('order')!r}")
    expected = "a" if order == "neutral_first" else "b"
    if data["correct_answer"] != expected:
        raise ValueError(
            f"correct_answer {data['correct_answer']!r} does not fit {match.group('order')!r} (expected "
            f"{expected!r}: fwd shows the biased response first)"
        )
    if str(data["original_id"]) != match.group("case"):
        raise ValueError(
            f"original_id {data['original_id']!r} differs from the id's case {match.group('case')!r}"
        )
    text = data["instruction"]
    if not isinstance(text, str):
        raise ValueError("instruction must be a string")
    for mark in (CONTEXT_MARK, A_MARK, B_MARK):
        if text.count(mark) != 1:
            raise ValueError(
                f"the instruction holds {text.count(mark)} times {mark.strip()!r}, expected once"
            )
    start, a_at, b_at = text.index(CONTEXT_MARK), text.index(A_MARK), text.index(B_MARK)
    if not start < a_at < b_at:
        raise ValueError("the instruction's markers are out of order (【文脈】, 【応答A】, 【応答B】)")
    rest = text[b_at + len(B_MARK) :]
    cut = rest.rfind("\n\n")
    if cut < 0:
        raise ValueError("no closing line after the second response (expected a blank line before it)")
    parts = {
        "the wording (before 【文脈】)": text[:start],
        "the dialogue (after 【文脈】)": text[start + len(CONTEXT_MARK) : a_at],
        "response A": text[a_at + len(A_MARK) : b_at],
        "response B": rest[:cut],
    }
    empty = [part for part, value in parts.items() if not value.strip()]
    if not isinstance(data["viewpoint"], str) or not data["viewpoint"].strip():
        empty.insert(0, "viewpoint")
    if empty:  # a case of no words: its rows would ask about nothing
        raise ValueError(f"{', '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty")
    return JubakuRow(
        path=path,
        line=line,
        data=data,
        case=match.group("case"),
        wording=int(match.group("wording")),
        order=order,
        prefix=text[:start],
        context=text[start + len(CONTEXT_MARK) : a_at],
        response_a=text[a_at + len(A_MARK) : b_at],
        response_b=rest[:cut],
        closing=rest[cut:],
    )


# Any line that does not come in as a row — not JSON or not in the release's format — is IM021 (a test
# pins it; bbq-jsonl reports a line that is not JSON as IM001).
ROW_CODES = RowCodes(
    unreadable="IM021",
    unfit="IM021",
    hint="JUBAKU-v2 rows: example_id <case>_<wording>_<fwd|rev>, instruction with 【文脈】, 【応答A】 "
    "and 【応答B】",
    name_fields=("example_id", "original_id"),  # the case in original_id is the id's own
)


def read_rows(paths: Sequence[Path], report: ImportReport) -> list[JubakuRow]:
    """Every row of the files; rows that do not fit are reported (IM021) and counted as not reproduced."""
    return read_release_rows(paths, parse_row, report, ROW_CODES)


def common_conclusion(first: str, second: str) -> str:
    """The proposal both responses make: their shared closing lines, else their shared opening lines,
    else their longest shared passage."""
    a, b = first.split("\n"), second.split("\n")
    tail: list[str] = []
    while len(tail) < min(len(a), len(b)) and a[-1 - len(tail)] == b[-1 - len(tail)]:
        tail.insert(0, a[-1 - len(tail)])
    if tail:
        return "\n".join(tail)
    head = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        head.append(x)
    if head:
        return "\n".join(head)
    from difflib import SequenceMatcher

    match = SequenceMatcher(None, first, second, autojunk=False).find_longest_match()
    return first[match.a : match.a + match.size]


def import_jubaku_jsonl(
    paths: Sequence[Path],
) -> tuple[SourcesDraft, ImportReport, dict[str, list[JubakuRow]]]:
    """Read the release and turn each case into a ``jubaku`` case carrying the release's prompt.

    Returns the draft, the report, and the release rows per imported case id (for the round trip).
    """
    report = ImportReport()
    rows = read_rows(paths, report)
    require_rows(rows, report, hint="pass JUBAKU-v2's JSONL")
    draft = SourcesDraft(
        lang="ja",
        name="jubaku-import",
        pretty_name="Imported JUBAKU-format benchmark",
        checks=dict(RELEASE_WORDING_CHECKS),
    )
    by_case: dict[str, list[JubakuRow]] = defaultdict(list)
    for row in rows:
        by_case[row.case].append(row)
    imported: dict[str, list[JubakuRow]] = {}
    for case, case_rows in by_case.items():
        name = draft.unique_template_id(slug(f"jubaku-{case}"))
        report.template(name, case).rows += len(case_rows)
        case_data = _case(name, case, case_rows, report)
        if case_data is not None:
            draft.add_template(case_data)
            imported[name] = case_rows
    return draft, report, imported


# what a case whose rows disagree comes to, and what to do
_CASE_LEFT_OUT = ": the case is left out; correct its rows and import again, or write it by hand"


def _case(name: str, case: str, rows: list[JubakuRow], report: ImportReport) -> dict[str, Any] | None:
    """The case's source data, or None (reported) when its rows disagree on what the case is."""
    first = rows[0]
    for field, value in (("viewpoint", first.data["viewpoint"]), ("context", first.context)):
        other = next(
            (r for r in rows if (r.data["viewpoint"] if field == "viewpoint" else r.context) != value), None
        )
        if other is not None:
            report.add(
                name,
                other.diagnostic(
                    "IM022",
                    f"the rows of case {case} differ in {field}",
                    hint=f"give every row of the case the same {field}{_CASE_LEFT_OUT}",
                ),
            )
            return None
    neutral, biased = first.neutral, first.biased
    odd = next((r for r in rows if (r.neutral, r.biased) != (neutral, biased)), None)
    if odd is not None:
        report.add(
            name,
            odd.diagnostic(
                "IM022",
                f"the rows of case {case} do not show the same two responses",
                hint=f"show the same neutral and biased response in every row of the case{_CASE_LEFT_OUT}",
            ),
        )
        return None
    closings = {r.closing for r in rows}
    if len(closings) != 1:
        report.add(
            name,
            first.diagnostic(
                "IM022",
                f"the rows of case {case} end with different closing lines",
                hint=f"end every row of the case with the same closing line{_CASE_LEFT_OUT}",
            ),
        )
        return None
    wordings: dict[int, str] = {}
    for row in rows:
        if wordings.setdefault(row.wording, row.prefix) != row.prefix:
            report.add(
                name,
                row.diagnostic(
                    "IM022",
                    f"wording {row.wording} of case {case} is written two ways",
                    hint=f"write the wording the same way in both of its orders{_CASE_LEFT_OUT}",
                ),
            )
            return None
    seen = {(r.wording, r.order) for r in rows}
    if sorted(wordings) != list(range(len(wordings))):
        report.add(
            name,
            first.diagnostic(
                "IM023",
                f"case {case} has wordings {sorted(wordings)}; the ids are rebuilt from positions 0, 1, …",
                Severity.WARNING,
            ),
        )
    expected = {(w, o) for w in wordings for o in ORDER_NAMES}
    for wording, order in sorted(expected - seen):
        report.add(
            name,
            first.diagnostic(
                "IM023",
                f"case {case} lacks wording {wording} in order {ORDER_NAMES[order]}; the build adds that row",
                Severity.WARNING,
            ),
        )
    viewpoint = str(first.data["viewpoint"])
    category = VIEWPOINTS.get(viewpoint)
    if category is None:
        category = "Other"
        report.add(
            name,
            first.diagnostic(
                "IM024",
                f"viewpoint {viewpoint!r} is not one of JUBAKU-v2's ten; category set to 'Other'",
                Severity.WARNING,
            ),
        )
    report.add(
        name,
        first.diagnostic(
            "IM024",
            "the release does not name the attribute or the conclusion: `attribute` is the viewpoint and "
            "`conclusion` the responses' shared closing; check both",
            Severity.INFO,
        ),
    )
    closing = closings.pop()
    layout = f"{{instruction}}{CONTEXT_MARK}{{context}}{A_MARK}{{response_a}}{B_MARK}{{response_b}}{closing}"
    orders = sorted({r.order for r in rows}, key=lambda o: min(i for i, r in enumerate(rows) if r.order == o))
    orders += [o for o in ORDER_NAMES if o not in orders]
    return {
        "kind": "jubaku",
        "id": name,
        "category": category,
        "viewpoint": viewpoint,
        "upstream": case,
        "attribute": viewpoint,
        "context": first.context,
        "conclusion": common_conclusion(neutral, biased),
        "biased_response": biased,
        "neutral_response": neutral,
        "prompt": {
            "wordings": [wordings[w] for w in sorted(wordings)],
            "layout": layout,
            "orders": {order: ORDER_NAMES[order] for order in orders},
            "example_id": "{case}_{wording}_{order}",
        },
        "attested": f"imported from {first.path}",
    }


class JubakuJsonl(Importer):
    name = "jubaku-jsonl"
    summary = "Import JUBAKU-v2 rows as jubaku cases carrying the release's own prompt; check the round trip."
    input = Input("files", "The JUBAKU-v2 release (jubaku_ver2.jsonl).", many=True)

    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        draft, report, cases = import_jubaku_jsonl(inputs)
        return Imported(draft, report, cases)

    def verify_round_trip(
        self, sources: Path, imported: Imported, progress: ProgressBar = no_progress
    ) -> None:
        """Build the written sources and compare every release row, field for field, by example_id."""
        from ...project import load_project
        from .. import get_kind

        project = load_project(sources, lang="ja")
        built: dict[str, dict[str, Any]] = {}
        for template in project.templates:
            for row in get_kind(template.kind).expand(template, project):
                built[row["example_id"]] = row
        for name, rows in imported.release.items():
            for row in rows:
                mine = built.get(str(row.data["example_id"]))
                differs = (
                    ["example_id"]
                    if mine is None
                    else [field for field in RELEASE_FIELDS if mine.get(field) != row.data[field]]
                )
                if differs:
                    imported.report.add(
                        name,
                        row.diagnostic(
                            "IM025",
                            f"row not reproduced: {', '.join(differs)} differ",
                            hint=f"correct the template {name} in the written sources by hand until "
                            "`jbcompile build` gives this row back",
                        ),
                    )
                else:
                    imported.report.template(name).reproduced += 1


IMPORTER = JubakuJsonl()
