"""``jbcompile import bbq-jsonl FILE…``: recover editable templates from released BBQ-format rows.

The rows of one template (same category, question_index and version) come in *instances*: one pair of
persons (and one choice of words) gives an ambiguous and a disambiguated context, each asked with the
negative and the non-negative question. Recovery per template:

1. link every disambiguated row to the ambiguous row it extends (same persons, context is a prefix);
2. find the two persons (``answer_info``) in each instance's texts and replace them by {{NAME1}} (the one
   mentioned first) and {{NAME2}};
3. align the instances' texts: spans that still vary are lexical slots {{WORD1}} …;
4. the fillers of the target slot (the person whose tag is a stereotyped group) and of the other slot
   become two vocab groups; their answer-option wording is kept per filler.

Versions are first pooled (a version b that swaps the persons yields the very same template); when the
pooled template does not reproduce every instance, each version gets its own template. Steps 1–3 are
``recovery``; the intersectional files take their own way (``jsonl_intersectional``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ....diagnostics import Diagnostic, DiagnosticError, Severity
from ....importers.draft import DraftFiller, SourcesDraft
from ....importers.interface import Imported, Importer, Input, Option, ProgressBar, no_progress
from ....importers.releases import require_rows
from ....importers.report import ImportReport
from .common import literal_braces
from .draft import DraftTemplate
from .jsonl_intersectional import import_intersectional_rows, is_intersectional, known_persons
from .recovery import (
    ANSWER_FIELDS,
    NOT_RECOVERED,
    PERSON_SLOTS,
    Instance,
    Person,
    Recovered,
    build_instances,
    person_words,
    recover,
    tagged_by_text,
    undo_word_rewrites,
)
from .roundtrip import count_reproduced
from .rows import SourceRow, read_rows

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


class BbqJsonl(Importer):
    name = "bbq-jsonl"
    summary = "Recover editable templates from released BBQ-format rows; check that they reproduce every row."
    input = Input("files", "BBQ-format JSONL files (BBQ or JBBQ releases).", many=True)
    options = (
        Option("lang", ("--lang",), "Language of the data: en, ja, or auto (detect).", default="auto"),
    )

    def read(self, inputs: Sequence[Path], options: Mapping[str, Any]) -> Imported:
        draft, report, rows = import_bbq_jsonl(inputs, options["lang"])
        return Imported(draft, report, rows)

    def verify_round_trip(
        self, sources: Path, imported: Imported, progress: ProgressBar = no_progress
    ) -> None:
        count_reproduced(sources, imported.draft.lang, imported.release, imported.report)


IMPORTER = BbqJsonl()


def detect_lang(rows: Sequence[SourceRow]) -> str:
    japanese = sum(1 for row in rows[:200] if _JAPANESE.search(row.context))
    return "ja" if japanese * 2 >= min(len(rows), 200) and rows else "en"


def _fillers(
    people: Sequence[Person], instance_notes: list[str], worded: bool
) -> tuple[tuple[DraftFiller, ...], str]:
    """The distinct persons as fillers; their option wording is kept per filler unless the template words
    the answers itself (``worded``)."""
    by_text: dict[str, Person] = {}
    for person in people:
        known = by_text.setdefault(person.text, person)
        if known.option != person.option and not worded:
            instance_notes.append(f"{person.text!r} is worded both {known.option!r} and {person.option!r}")
    tag = Counter(p.tag for p in by_text.values()).most_common(1)[0][0]
    return (
        tuple(
            DraftFiller(
                p.text,
                None if p.option == p.text or worded else p.option,
                None if p.tag == tag else p.tag,
            )
            for p in by_text.values()
        ),
        tag,
    )


def _template(
    name: str,
    upstream: str,
    rows: Sequence[SourceRow],
    recovered: Recovered,
    usable: Sequence[Instance],
    draft: SourcesDraft,
    report: ImportReport,
    undone: Sequence[dict[str, str]] = (),
) -> DraftTemplate:
    first = rows[0]
    groups = list(dict.fromkeys(g for row in rows for g in row.stereotyped))
    notes: list[str] = []
    worded = all(f in recovered.texts for f in ANSWER_FIELDS)  # the options are the slots' answer wordings
    targets = [tagged_by_text(i.target, groups) for i in usable]
    if any(t.tag != i.target.tag for t, i in zip(targets, usable, strict=True)):
        report.add(
            name,
            first.diagnostic(
                "IM026",
                "the stereotyped persons' tags are not stereotyped groups (e.g. regions); their own words "
                "are their tags, so that the other persons' tags do not clash",
                Severity.INFO,
            ),
        )
    target_fillers, target_tag = _fillers(targets, notes, worded)
    other_fillers, other_tag = _fillers([i.other for i in usable], notes, worded)
    for note in notes:
        report.add(name, first.diagnostic("IM007", note, Severity.WARNING))
    for filler in target_fillers:
        tag = filler.tag or target_tag
        if tag not in groups:  # the compiler's check R009 wants the tag itself listed
            groups.append(tag)
            report.add(
                name,
                first.diagnostic("IM009", f"target tag {tag!r} added to stereotyped_groups", Severity.INFO),
            )
    shared = sorted({f.text for f in target_fillers} & {f.text for f in other_fillers})
    if shared:  # e.g. BBQ's SES proper-name templates pair any two first names
        draft.checks["JA110"] = "warning"
        report.add(
            name,
            first.diagnostic(
                "IM028",
                f"both persons are drawn from the same words ({', '.join(shared[:3])}…): each fills both "
                "slots (a row never names one person twice; check JA110 is a warning for this reason)",
                Severity.INFO,
            ),
        )
    target_slot = recovered.target_slot
    other_slot = "NAME2" if target_slot == "NAME1" else "NAME1"
    stereotype = f"{', '.join(groups)}: {recovered.texts['negative']}"
    report.add(
        name,
        first.diagnostic(
            "IM009",
            "the stereotype is written from the negative question; describe it in your own words",
            Severity.INFO,
        ),
    )
    attested = first.source or f"imported from {first.path}"
    if not first.source:
        report.add(
            name,
            first.diagnostic(
                "IM009", "no additional_metadata.source: `attested` names the input file", Severity.INFO
            ),
        )
    texts, brace_rewrites = {}, []
    for key, text in recovered.texts.items():
        texts[key], found = literal_braces(text)  # a brace the rows carry beside a person ("{Swedish")
        brace_rewrites += found
    if brace_rewrites:
        report.add(
            name,
            first.diagnostic(
                "IM036",
                "the rows carry a brace beside a slot: the slot is kept well-formed and a rewrite puts "
                "the brace back into the rows",
                Severity.INFO,
            ),
        )
    return DraftTemplate(
        id=name,
        category=first.category,
        subcategory=first.subcategory,
        upstream=upstream,
        stereotype=stereotype,
        stereotyped_groups=groups,
        attested=attested,
        target_slot=target_slot,
        other_slot=other_slot,
        target_group=draft.group_for(first.category, target_tag, target_fillers, None),
        other_group=draft.group_for(first.category, other_tag, other_fillers, None),
        words=recovered.words,
        ambiguous=texts["ambiguous"],
        disambiguating=texts["disambiguating"],
        negative=(texts["negative"], recovered.answers["negative"]),
        non_negative=(texts["non_negative"], recovered.answers["non_negative"]),
        answers={slot: texts[f"answer_{slot}"] for slot in PERSON_SLOTS} if worded else {},
        max_alternatives=max([3, *(len(alternatives) for alternatives in recovered.words.values())]),
        rewrites=brace_rewrites + list(undone),
    )


def _try(rows: Sequence[SourceRow], lang: str, report: ImportReport, name: str):
    groups = list(dict.fromkeys(g for row in rows for g in row.stereotyped))
    instances = build_instances(rows, groups, lang, report, name)
    return instances, recover(instances)


def import_bbq_jsonl(
    paths: Sequence[Path], lang: str = "auto"
) -> tuple[SourcesDraft, ImportReport, list[SourceRow]]:
    """Read BBQ-format rows and recover templates, vocab and unknown wordings into a draft."""
    report = ImportReport()
    rows = read_rows(paths, report)
    require_rows(rows, report, hint="pass BBQ-format JSONL files")
    detected = detect_lang(rows)
    if lang not in ("auto", detected):
        report.add(
            None,
            rows[0].diagnostic(
                "IM058",
                f"--lang {lang}, but the contexts look {'Japanese' if detected == 'ja' else 'English'}: the "
                f"texts go into `{lang}` (check --lang; `auto` detects it)",
                Severity.WARNING,
            ),
        )
    if lang == "auto":
        lang = detected
    if lang not in ("en", "ja"):
        raise DiagnosticError(
            [Diagnostic(code="IM002", message=f"unknown --lang {lang!r}", hint="give --lang en, ja or auto")]
        )
    draft = SourcesDraft(lang=lang, name="bbq-import", pretty_name="Imported BBQ-format benchmark")
    unknown = Counter(row.options[row.unknown_index] for row in rows)
    draft.unknown_options = [w for w, _ in sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0]))]
    by_question: dict[tuple[str, str], list[SourceRow]] = {}
    for row in rows:
        by_question.setdefault((row.category, row.question_index), []).append(row)
    known = known_persons(rows) if lang == "en" else None
    words = person_words(rows)
    for (category, question_index), released in by_question.items():
        versions = sorted({row.version for row in released})
        base = f"{category}-{question_index}"
        pooled_name = draft.unique_template_id(base)
        if known is not None and is_intersectional(released):
            import_intersectional_rows(category, question_index, released, known, draft, report, pooled_name)
            continue
        undoing = [undo_word_rewrites(row, words) for row in released]
        group = [row for row, _ in undoing]
        undone = {id(row): rewrites for row, rewrites in undoing}
        pooled_report = ImportReport()
        instances, recovered = _try(group, lang, pooled_report, pooled_name)
        if recovered is not None and not recovered.failed and not recovered.notes or len(versions) == 1:
            parts = [(pooled_name, "+".join(versions), group, instances, recovered, pooled_report)]
        else:
            parts = []
            for version in versions:
                subset = [row for row in group if row.version == version]
                name = draft.unique_template_id(f"{base}-{version}")
                sub_report = ImportReport()
                sub_instances, sub_recovered = _try(subset, lang, sub_report, name)
                parts.append((name, version, subset, sub_instances, sub_recovered, sub_report))
                draft.templates[name] = {}  # reserve the id
        for name, version_label, subset, part_instances, part_recovered, part_report in parts:
            upstream = f"{category}/{question_index}/{version_label}"
            entry = report.template(name, upstream)
            entry.rows += len(subset)
            entry.findings.extend(part_report.diagnostics)
            for instance in part_instances:
                if instance.problem is not None:
                    entry.findings.append(instance.problem)
            if part_recovered is None:
                draft.templates.pop(name, None)
                entry.findings.append(
                    subset[0].diagnostic(
                        "IM007", "no template could be recovered from these rows", hint=NOT_RECOVERED
                    )
                )
                continue
            for instance, note in part_recovered.notes:
                entry.findings.append(instance.rows[0].diagnostic("IM005", note, Severity.WARNING))
            usable = [i for i in part_instances if i.problem is None]
            redo = [
                dict(t) for t in dict.fromkeys(tuple(r.items()) for row in subset for r in undone[id(row)])
            ]
            template = _template(name, upstream, subset, part_recovered, usable, draft, report, redo)
            draft.add_template(template.source(draft))
            for row in subset:
                row.templates = (name,)
        for original, row in zip(released, group, strict=True):  # the round trip compares the released texts
            original.templates = row.templates
    return draft, report, rows
