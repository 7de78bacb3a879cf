"""A sources folder loaded and cross-checked: the dataset, its vocabulary and its templates.

Every problem in every file is collected before anything stops, so a maintainer fixes them in one pass.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from .diagnostics import Diagnostic, DiagnosticError, Severity
from .loader import KeyPath, LoadedDocument, load_yaml
from .schema import DatasetConfig, FillerGroup, VocabFile

T = TypeVar("T")

LANGUAGES = ("ja", "en")


@dataclass(frozen=True)
class VocabGroup:
    name: str
    category: str
    group: FillerGroup
    doc: LoadedDocument
    key_path: KeyPath


@dataclass(frozen=True)
class SourceTemplate:
    kind: str
    model: Any  # the kind's template model, e.g. BbqTemplate
    doc: LoadedDocument
    path: str

    @property
    def id(self) -> str:
        return self.model.id

    def diagnostic(self, key_path: KeyPath, code: str, message: str, **kwargs: Any) -> Diagnostic:
        return self.doc.diagnostic(key_path, code, message, **kwargs)


@dataclass
class Project:
    root: Path
    dataset: DatasetConfig
    dataset_doc: LoadedDocument
    vocab: dict[str, VocabGroup] = field(default_factory=dict)
    templates: list[SourceTemplate] = field(default_factory=list)
    documents: dict[str, LoadedDocument] = field(default_factory=dict)
    lang: str = "ja"
    notes: list[Diagnostic] = field(default_factory=list)  # warnings found while loading

    @property
    def unknown_texts(self) -> list[str]:
        return self.dataset.unknown_texts(self.lang)


def display_path(path: Path) -> str:
    """Paths relative to the working folder where possible, so editors and CI can jump to them."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _collect(problems: list[Diagnostic], action: Callable[[], T]) -> T | None:
    try:
        return action()
    except DiagnosticError as exc:
        problems.extend(exc.diagnostics)
        return None


def _validate(model: type[BaseModel], doc: LoadedDocument) -> Any:
    from .validation import validate_document

    return validate_document(model, doc)


def source_files(root: Path) -> tuple[Path, list[Path], list[Path]]:
    return (
        root / "dataset.yaml",
        sorted((root / "vocab").glob("*.yaml")),
        sorted((root / "templates").rglob("*.yaml")),
    )


def load_project(root: Path, lang: str = "ja") -> Project:
    """Load, validate and cross-check a sources folder; raise DiagnosticError listing every problem."""
    from .kinds import get_kind, kind_names

    root = Path(root)
    problems: list[Diagnostic] = []
    if lang not in LANGUAGES:
        raise DiagnosticError([Diagnostic(code="S010", message=f"unknown language {lang!r}; use ja or en")])
    dataset_path, vocab_paths, template_paths = source_files(root)
    if not dataset_path.is_file():
        raise DiagnosticError(
            [
                Diagnostic(
                    code="S000",
                    message=f"no dataset.yaml in {display_path(root)}",
                    path=display_path(root),
                    hint="point --sources at a benchmark's sources folder (it holds dataset.yaml)",
                )
            ]
        )
    documents: dict[str, LoadedDocument] = {}

    def load(path: Path) -> LoadedDocument | None:
        doc = _collect(problems, lambda: load_yaml(path, display_path(path)))
        if doc is not None:
            documents[doc.path] = doc
        return doc

    dataset_doc = load(dataset_path)
    dataset = _collect(problems, lambda: _validate(DatasetConfig, dataset_doc)) if dataset_doc else None

    vocab: dict[str, VocabGroup] = {}
    for path in vocab_paths:
        doc = load(path)
        if doc is None:
            continue
        vocab_file = _collect(problems, lambda doc=doc: _validate(VocabFile, doc))
        if vocab_file is None:
            continue
        if dataset and vocab_file.category not in dataset.categories:
            problems.append(_unknown_category(doc, ("category",), vocab_file.category, dataset))
        for name, group in vocab_file.groups.items():
            if name in vocab:
                first = vocab[name]
                problems.append(
                    doc.diagnostic(
                        ("groups", name),
                        "R008",
                        f"vocab group {name!r} is defined twice (first in {first.doc.path})",
                        hint="rename one of the groups",
                    )
                )
                continue
            vocab[name] = VocabGroup(name, vocab_file.category, group, doc, ("groups", name))

    templates: list[SourceTemplate] = []
    seen_ids: dict[str, SourceTemplate] = {}
    for path in template_paths:
        doc = load(path)
        if doc is None:
            continue
        data = doc.data
        if not isinstance(data, dict):
            problems.append(doc.diagnostic((), "S004", "a template file holds one mapping of fields"))
            continue
        kind_name = data.get("kind", "bbq")
        if kind_name not in kind_names():
            problems.append(
                doc.diagnostic(
                    ("kind",),
                    "S005",
                    f"unknown template kind {kind_name!r}",
                    hint=f"use one of: {', '.join(kind_names())}",
                )
            )
            continue
        kind = get_kind(kind_name)
        model = _collect(problems, lambda doc=doc, kind=kind: _validate(kind.template_model, doc))
        if model is None:
            continue
        template = SourceTemplate(kind_name, model, doc, doc.path)
        if model.id in seen_ids:
            problems.append(
                doc.diagnostic(
                    ("id",),
                    "R003",
                    f"duplicate template id {model.id!r} (also in {seen_ids[model.id].path})",
                    hint="template ids must be unique: they key the rows and their seeds",
                )
            )
            continue
        seen_ids[model.id] = template
        if dataset and model.category not in dataset.categories:
            problems.append(_unknown_category(doc, ("category",), model.category, dataset))
        templates.append(template)

    if dataset_doc is None:
        raise DiagnosticError(problems)
    # With a broken dataset.yaml the templates are still cross-checked, so every problem shows at once;
    # only the project is never returned.
    project = Project(root, dataset, dataset_doc, vocab, templates, documents, lang)  # type: ignore[arg-type]
    if dataset is not None and not project.unknown_texts:
        problems.append(
            dataset_doc.diagnostic(
                ("unknown_options",),
                "R011",
                f"no unknown-option wording has a {lang!r} text",
                hint=f"give the unknown options an `{lang}:` text",
            )
        )
    kept = []
    for template in templates:
        coverage = get_kind(template.kind).language_coverage(template, lang)
        if coverage == "none":
            project.notes.append(
                template.diagnostic(
                    (),
                    "R012",
                    f"template {template.id} has no {lang!r} text and is left out of this build",
                    severity=Severity.WARNING,
                    hint=f"translate it to build it in {lang!r}",
                )
            )
            continue
        kept.append(template)
        problems.extend(get_kind(template.kind).validate(template, project))
    project.templates = kept
    if problems:
        raise DiagnosticError(problems)
    return project


def _unknown_category(
    doc: LoadedDocument, key_path: KeyPath, category: str, dataset: DatasetConfig
) -> Diagnostic:
    return doc.diagnostic(
        key_path,
        "R004",
        f"category {category!r} is not declared in dataset.yaml",
        hint=f"use one of: {', '.join(dataset.categories)}, or add it to dataset.yaml's categories",
    )


def iter_texts(value: Any, key_path: KeyPath = ()) -> Iterable[tuple[KeyPath, Any]]:
    """Every text-bearing leaf of a model dump, with its key path (used by cross-checks and linters)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from iter_texts(item, key_path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from iter_texts(item, key_path + (index,))
    else:
        yield key_path, value
