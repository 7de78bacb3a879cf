"""Assemble imported templates and vocabulary into a sources folder in our format, and write it atomically.

Every importer fills a :class:`SourcesDraft` with its templates (already in its design's source format)
and vocab groups; the draft owns the YAML shape (English goes into ``en`` of a text, Japanese data into
plain strings), deduplicates vocab groups by content, and writes dataset.yaml. The folder is validated
against the schema and written in one step: it appears whole or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .. import placeholders
from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..fsio import replaced_folder, taken_with
from .report import ImportReport

# Our own wordings of "cannot be answered from the context", used when the input brings fewer than 8.
DEFAULT_UNKNOWN = {
    "en": [
        "Unknown",
        "Cannot be determined",
        "Not enough information",
        "Cannot answer",
        "Not known",
        "Undetermined",
        "Can't tell",
        "Not answerable",
        "Impossible to say",
    ],
    "ja": [
        "不明",
        "判断できない",
        "情報が足りない",
        "わからない",
        "答えられない",
        "どちらとも言えない",
        "決められない",
        "特定できない",
        "確かなことは言えない",
    ],
}
MIN_UNKNOWN = 8
# Why an import's dataset.yaml says keep_as_written: true, for the user who reads it.
KEEP_AS_WRITTEN = (
    "# keep_as_written: true: the texts are the release's own, so that the build gives its rows back;\n"
    "# `jbcompile check` reports its findings, `check --fix` leaves them. Set it to false to let --fix\n"
    "# rewrite the texts (the build then no longer reproduces the release).\n"
)
SHORT = 60  # texts up to this length are written as flow mappings: {en: …}


class Flow(dict):
    """A mapping written on one line."""


class FlowList(list):
    """A list written on one line."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    FlowList, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)
)
_Dumper.add_representer(
    str,
    lambda dumper, data: dumper.represent_scalar(
        "tag:yaml.org,2002:str", data, style="|" if "\n" in data else None
    ),
)
_Dumper.add_representer(
    Flow, lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)
)


def dump_yaml(data: Any, header: str = "") -> str:
    """Deterministic YAML: key order as built, Unicode as is, no line folding."""
    body = yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100_000)
    return header + body


def slug(value: str) -> str:
    """An identifier-safe form of a name (letters, digits, _ . -)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", value).strip("-.")
    return cleaned or "x"


@dataclass(frozen=True)
class DraftFiller:
    text: str
    option: str | None = None  # answer wording, when it differs from the text
    tag: str | None = None  # when it differs from the group's tag


@dataclass
class DraftGroup:
    name: str
    category: str
    tag: str
    fillers: tuple[DraftFiller, ...]
    description: str | None = None


@dataclass
class SourcesDraft:
    lang: str  # language of the imported texts: "en" (to be translated) or "ja"
    name: str  # dataset.yaml's name and pretty_name
    pretty_name: str
    description: str = ""
    unknown_options: list[str] = field(default_factory=list)
    groups: dict[str, DraftGroup] = field(default_factory=dict)
    templates: dict[str, dict[str, Any]] = field(default_factory=dict)
    categories: list[str] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)  # rule code → severity, for dataset.yaml
    _by_content: dict[tuple, str] = field(default_factory=dict)

    # ----------------------------------------------------------------------------------------- texts
    def text(self, value: str) -> Any:
        """A text in our format: English goes into ``en`` (to translate), Japanese stays a plain string."""
        if self.lang == "ja":
            return value
        return Flow(en=value) if len(value) <= SHORT and "\n" not in value else {"en": value}

    def filler(self, filler: DraftFiller, group_tag: str) -> Any:
        if filler.option is None and filler.tag in (None, group_tag) and self.lang == "ja":
            return filler.text
        entry: dict[str, Any] = {"text": self.text(filler.text)}
        if filler.option is not None:
            entry["option"] = self.text(filler.option)
        if filler.tag not in (None, group_tag):
            entry["tag"] = filler.tag
        return entry

    # ------------------------------------------------------------------------------------------ vocab
    def group_for(
        self, category: str, tag: str, fillers: tuple[DraftFiller, ...], description: str | None
    ) -> str:
        """The name of the vocab group with exactly these fillers (created on first use)."""
        self.add_category(category)
        key = (category, tag, fillers)
        if key in self._by_content:
            return self._by_content[key]
        base = slug(f"{category}-{tag}")
        name, n = base, 1
        while name in self.groups:
            n += 1
            name = f"{base}-{n}"
        self.groups[name] = DraftGroup(name, category, tag, fillers, description)
        self._by_content[key] = name
        return name

    def add_category(self, category: str) -> None:
        if category not in self.categories:
            self.categories.append(category)

    def add_template(self, template: dict[str, Any]) -> None:
        self.add_category(template["category"])
        self.templates[template["id"]] = template

    def unique_template_id(self, wanted: str) -> str:
        name, n = slug(wanted), 1
        while name in self.templates:
            n += 1
            name = f"{slug(wanted)}-{n}"
        return name

    # ---------------------------------------------------------------------------------------- render
    @property
    def keep_as_written(self) -> bool:
        """Japanese texts an importer writes are the input release's own: `check --fix` must leave them."""
        return self.lang == "ja"

    def dataset(self) -> dict[str, Any]:
        unknown = list(dict.fromkeys(self.unknown_options))
        for extra in DEFAULT_UNKNOWN[self.lang]:
            if len(unknown) >= MIN_UNKNOWN:
                break
            if extra not in unknown:
                unknown.append(extra)
        data = {
            "name": slug(self.name),
            "pretty_name": self.pretty_name,
            "version": "0.1.0",
            "license": placeholders.LICENSE,
            "language": ["ja"],
            "description": self.description or placeholders.IMPORTED_DESCRIPTION,
            "citation": None,
            "homepage": None,
            "terms_of_use": placeholders.IMPORTED_TERMS,
            "seed": 1,
            "unknown_options": [self.text(u) for u in unknown],
            "categories": list(self.categories),
        } | ({"checks": dict(sorted(self.checks.items()))} if self.checks else {})
        if self.keep_as_written:
            data["keep_as_written"] = True
        return data

    def files(self) -> dict[str, str]:
        """Relative path → YAML text of every file of the folder."""
        header = "# Written by `jbcompile import`; edit freely.\n"
        dataset_header = header + (KEEP_AS_WRITTEN if self.keep_as_written else "")
        out = {"dataset.yaml": dump_yaml(self.dataset(), dataset_header)}
        by_category: dict[str, dict[str, Any]] = {}
        for group in self.groups.values():
            entry: dict[str, Any] = {"tag": group.tag}
            if group.description:
                entry["description"] = group.description
            entry["fillers"] = [self.filler(f, group.tag) for f in group.fillers]
            by_category.setdefault(group.category, {})[group.name] = entry
        for category, groups in sorted(by_category.items()):
            out[f"vocab/{slug(category)}.yaml"] = dump_yaml({"category": category, "groups": groups}, header)
        glossary = bundled_glossary()
        if self.lang == "en" and glossary is not None:
            out["translations/glossary.yaml"] = glossary  # so that `translate` keeps the bundled conventions
        for template_id, template in sorted(self.templates.items()):
            out[f"templates/{slug(template['category'])}/{template_id}.yaml"] = dump_yaml(template, header)
        return out


def bundled_glossary() -> str | None:
    """The EN→JA glossary of the bundled benchmark, copied into English imports."""
    from ..paths import bundled_sources
    from ..translate.glossary import GLOSSARY_FILE

    path = bundled_sources() / GLOSSARY_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else None


def check_inputs(inputs: Sequence[Path]) -> None:
    """Refuse an input file given twice (its rows would count twice): IM057."""
    seen: dict[Path, Path] = {}
    problems = []
    for path in inputs:
        key = Path(path).resolve()
        if key in seen:
            problems.append(
                Diagnostic(
                    code="IM057",
                    message=f"{path} is given twice (as {seen[key]} too); its rows would be counted twice",
                    path=str(path),
                    hint="pass each file once",
                )
            )
        seen.setdefault(key, Path(path))
    if problems:
        raise DiagnosticError(problems)


def check_report_path(path: Path | None) -> None:
    """Refuse a --report that cannot be written, before the import writes anything (IM059)."""
    if path is None:
        return
    problem = None
    if Path(path).is_dir():
        problem = "is a folder"
    elif not Path(path).parent.is_dir():
        problem = f"is in a folder that does not exist ({Path(path).parent})"
    if problem:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM059",
                    message=f"--report {path} {problem}",
                    path=str(path),
                    hint="give a file in an existing folder",
                )
            ]
        )


def check_target(out: Path, force: bool, inputs: Sequence[Path] = ()) -> None:
    """Refuse, before any work is done, a --out that is a file, a non-empty folder (unless --force),
    or a folder whose replacement would take the working folder or an input with it (IM056)."""
    out = Path(out)
    taken = taken_with(out, [("an input", Path(path)) for path in inputs])
    if taken is not None:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM056",
                    message=f"--out {out} {taken}; an import replaces its whole --out folder",
                    path=str(out),
                    hint="choose a new folder of its own, e.g. --out sources",
                )
            ]
        )
    if out.exists() and not out.is_dir():
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM020",
                    message=f"{out} is a file; --out names the sources folder to write",
                    path=str(out),
                    hint="choose a new --out folder",
                )
            ]
        )
    if out.exists() and any(out.iterdir()) and not force:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="IM020",
                    message=f"{out} exists and is not empty",
                    path=str(out),
                    hint="choose a new --out folder, or pass --force to replace it",
                )
            ]
        )


def _outside_staging(diagnostic: Diagnostic, staging: Path, out: Path) -> Diagnostic:
    from dataclasses import replace

    from ..project import display_path

    path = diagnostic.path or ""
    for prefix in (str(staging), display_path(staging)):
        if path.startswith(prefix):
            return replace(diagnostic, path=display_path(out) + path[len(prefix) :])
    return replace(diagnostic, message=diagnostic.message.replace(staging.name, out.name))


def write_folder(files: dict[str, str], out: Path, force: bool = False, lang: str = "ja") -> None:
    """Write ``files`` as the folder ``out`` in one step, after checking it loads as a project.

    The folder is built next to ``out``, loaded with the compiler's own loader (so what is written is a
    sources folder ``jbcompile build`` accepts), then swapped in.
    """
    from ..project import load_project

    check_target(out, force)
    out = Path(out)
    # replaced_folder: under a lock, after clearing what an interrupted import left beside ``out``
    with replaced_folder(out, "import") as staging:
        for relative, text in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        try:
            load_project(staging, lang=lang)
        except DiagnosticError as error:  # name the folder the user asked for, not the staging copy
            raise DiagnosticError([_outside_staging(d, staging, out) for d in error.diagnostics]) from None


def write_sources(draft: SourcesDraft, out: Path, report: ImportReport, force: bool = False) -> None:
    """Write the draft as the sources folder ``out`` (validated, atomic) and note the files in the report.

    An import that brought nothing in writes nothing, and says why at the input files themselves.
    """
    if not draft.templates:
        reasons = [d for d in report.diagnostics if d.severity is not Severity.INFO]
        raise DiagnosticError(
            [
                *reasons,
                Diagnostic(
                    "IM037",
                    "nothing was imported: no template came from the input",
                    hint="check the input files named above (their columns and format)",
                ),
            ]
        )
    files = draft.files()
    write_folder(files, Path(out), force=force, lang=draft.lang)
    report.files_written = sorted(files)
