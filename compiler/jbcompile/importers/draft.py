"""Assemble imported templates and vocabulary into the files of a sources folder in our format.

Every importer fills a :class:`SourcesDraft` with its templates (already in its design's source format)
and vocab groups; the draft owns the YAML shape (English goes into ``en`` of a text, Japanese data into
plain strings), deduplicates vocab groups by content, and writes dataset.yaml. :mod:`.writer` writes
the files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .. import placeholders
from ..changelog import CHANGELOG, FIRST_VERSION, first_changelog
from ..reading import SOURCE, read_text

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
            "version": FIRST_VERSION,
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
        out = {
            "dataset.yaml": dump_yaml(self.dataset(), dataset_header),
            # publish needs the version's section (P010): the import is the first version
            CHANGELOG: first_changelog("imported with `jbcompile import`"),
        }
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
    from ..translate.glossary import GLOSSARY_FILE  # the translate package, only when it is needed

    path = bundled_sources() / GLOSSARY_FILE
    return read_text(path, SOURCE) if path.is_file() else None
