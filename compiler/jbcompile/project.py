"""A sources folder loaded and cross-checked: the dataset, its vocabulary and its templates.

Every problem in every file is collected before anything stops, so a maintainer fixes them in one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from .diagnostics import Diagnostic, DiagnosticError, Severity
from .loader import KeyPath, LoadedDocument, load_yaml
from .paths import display_path
from .projecttypes import Project, SourceTemplate, VocabGroup
from .reading import SOURCE, is_present
from .schema import DatasetConfig, VocabFile
from .sourcefiles import layout_problems, walk_sources

T = TypeVar("T")

LANGUAGES = ("ja", "en")


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
    """dataset.yaml, the vocab files and the template files of a sources folder (see :mod:`.sourcefiles`).

    A file meant as a source that cannot be read (a pipe, a device, a broken link or a loop, a folder
    named like a source file) is an error, as it is when the project is loaded: the caller would
    otherwise go on without it and say nothing."""
    walk = walk_sources(root)
    errors = [note for note in walk.skipped if note.severity is Severity.ERROR]
    if errors:
        raise DiagnosticError(errors)
    return walk.dataset, walk.vocab, walk.templates


def load_project(root: Path, lang: str = "ja") -> Project:
    """Load, validate and cross-check a sources folder; raise DiagnosticError listing every problem."""
    from .designs import DEFAULT_DESIGN, get_kind, kind_names
    from .outputs import settle

    root = Path(root)
    settle(root)  # a commit into the sources that a kill cut short is finished before they are read
    problems: list[Diagnostic] = []
    if lang not in LANGUAGES:
        raise DiagnosticError(
            [Diagnostic(code="S010", message=f"unknown language {lang!r}", hint="use ja or en")]
        )
    # a folder or a FIFO named dataset.yaml is F002, never "no dataset.yaml"
    if not is_present(root / "dataset.yaml", SOURCE, display_path(root / "dataset.yaml")):
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
    walk = walk_sources(root)
    dataset_path, vocab_paths, template_paths = walk.dataset, walk.vocab, walk.templates
    found = walk.skipped + layout_problems(root)
    notes = [d for d in found if d.severity is not Severity.ERROR]
    problems.extend(d for d in found if d.severity is Severity.ERROR)
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
        problems.extend(stray_braces(doc))
        vocab_file = _collect(problems, partial(_validate, VocabFile, doc))
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
    folded_ids: dict[str, SourceTemplate] = {}
    for path in template_paths:
        doc = load(path)
        if doc is None:
            continue
        data = doc.data
        if not isinstance(data, dict):
            problems.append(
                doc.diagnostic(
                    (),
                    "S004",
                    "a template file holds one mapping of fields",
                    hint="write the template as `field: value` pairs (id, category, …: see "
                    "`jbcompile schema`)",
                )
            )
            continue
        kind_name = data.get("kind", DEFAULT_DESIGN)
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
        model = _collect(problems, partial(_validate, kind.template_model, doc))
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
        twin = folded_ids.setdefault(model.id.casefold(), template)
        if twin is not template:
            problems.append(
                doc.diagnostic(
                    ("id",),
                    "R016",
                    f"template id {model.id!r} differs from {twin.id!r} ({twin.path}) only in case",
                    hint="ids name files and rows; on case-insensitive file systems these two collide",
                )
            )
        if dataset and model.category not in dataset.categories:
            problems.append(_unknown_category(doc, ("category",), model.category, dataset))
        place = _placement_problems(template, path.relative_to(root / "templates"), dataset)
        problems.extend(d for d in place if d.severity is Severity.ERROR)
        notes.extend(d for d in place if d.severity is not Severity.ERROR)
        problems.extend(stray_braces(doc, kind.own_placeholder_keys))
        templates.append(template)

    if dataset_doc is None:
        raise DiagnosticError(problems)
    # With a broken dataset.yaml the templates are still cross-checked, so every problem shows at once;
    # only the project is never returned.
    project = Project(root, dataset, dataset_doc, vocab, templates, documents, lang)  # type: ignore[arg-type]
    project.notes.extend(notes)
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
    from .rowlimits import row_limit_problems  # before anything expands a template

    problems = row_limit_problems(project)
    if problems:
        raise DiagnosticError(problems)
    return project


def dataset_label(root: Path) -> str | None:
    """``name version (pretty name)`` of the sources folder ``root``, read leniently (a command says which
    benchmark it works on before it validates it); None when dataset.yaml cannot be read."""
    try:
        data = load_yaml(Path(root) / "dataset.yaml", display_path(Path(root) / "dataset.yaml")).data
    except DiagnosticError:
        return None
    if not isinstance(data, dict) or not data.get("name"):
        return None
    label = f"{data['name']} v{data['version']}" if data.get("version") else str(data["name"])
    title = data.get("pretty_name")
    return f"{label} ({title})" if isinstance(title, str) and title.strip() else label


def _placement_problems(
    template: SourceTemplate, relative: Path, dataset: DatasetConfig | None
) -> list[Diagnostic]:
    """The file's place should say what it holds: its name is the id, its category folder the category.

    The id may also be the path under templates/ joined with ``-`` (``pairs/dummy/x.yaml`` →
    ``pairs-dummy-x``), for folders that group by kind rather than by category.
    """
    out = []
    expected = {relative.stem, "-".join((*relative.parts[:-1], relative.stem))}
    if template.id not in expected:
        out.append(
            template.diagnostic(
                ("id",),
                "R014",
                f"template id {template.id!r} differs from its file name {relative.name!r}",
                severity=Severity.WARNING,
                hint=f"rename the file to {template.id}.yaml, or set id: {relative.stem}",
            )
        )
    folder = relative.parts[0] if len(relative.parts) > 1 else None
    category = template.model.category
    if dataset and folder in dataset.categories and category in dataset.categories and folder != category:
        out.append(
            template.diagnostic(
                ("category",),
                "R015",
                f"category {category!r} in the folder of category {folder!r}",
                hint=f"move the file to templates/{category}/, or fix its category",
            )
        )
    return out


def stray_braces(doc: LoadedDocument, own_placeholders: frozenset[str] = frozenset()) -> list[Diagnostic]:
    """``{`` or ``}`` outside a well-formed ``{{SLOT}}`` would land in the rows as they are.

    ``own_placeholders``: top-level keys whose texts are not slot texts (a design's
    ``Kind.own_placeholder_keys``: placeholders of their own, or regular expressions)."""
    from .templating import SLOT_PATTERN

    out = []
    for key_path, value in iter_texts(doc.data):
        if not isinstance(value, str) or ("{" not in value and "}" not in value):
            continue
        if key_path and key_path[0] in own_placeholders:
            continue
        masked = SLOT_PATTERN.sub(lambda m: " " * len(m.group()), value)
        offset = next((i for i, ch in enumerate(masked) if ch in "{}"), None)
        if offset is None:
            continue
        pos = doc.text_position(key_path, offset)
        out.append(
            Diagnostic(
                code="R013",
                message=f"unbalanced brace {masked[offset]!r} in {value!r}",
                path=doc.path,
                line=pos.line if pos else None,
                col=pos.col if pos else None,
                hint="a slot is written {{NAME}}: two braces on each side",
                key_path=key_path,
            )
        )
    return out


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
