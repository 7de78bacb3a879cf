"""Find the texts to translate: every ``{ja, en, status}`` mapping in the source files that has English.

The walk is over raw YAML, not over validated models, on purpose: freshly imported sources have no
Japanese yet and would not validate as a Japanese project, and the same walk serves every kind.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError
from ..loader import KeyPath, LoadedDocument, load_yaml
from ..paths import display_path
from ..schema.common import TranslationStatus

LOCALIZED_KEYS = frozenset({"ja", "en", "status"})
SHORT_TEXT = 60  # characters; shorter texts are sent with their surroundings as `context`
MAX_CONTEXT = 1500


@dataclass(frozen=True)
class TranslationUnit:
    """One English text of the sources and where its Japanese goes."""

    path: Path
    display_path: str
    key_path: KeyPath
    line: int | None
    col: int | None  # where the English text starts
    en: str
    ja: str | None
    status: TranslationStatus
    context: str | None

    def where(self) -> str:
        return f"{self.display_path}:{self.line or 1}"

    def key_label(self) -> str:
        return ".".join(str(k) for k in self.key_path)


def is_localized(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and set(value) <= LOCALIZED_KEYS and "en" in value


def _walk(value: Any, key_path: KeyPath = ()) -> Iterable[tuple[KeyPath, Any]]:
    if is_localized(value):
        yield key_path, value
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, key_path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, key_path + (index,))


def _english(value: Any) -> str | None:
    """The English of a text-bearing value, whatever its shape (str means Japanese only)."""
    if isinstance(value, dict) and isinstance(value.get("en"), str):
        return value["en"]
    return None


def _list_context(doc: LoadedDocument, key_path: KeyPath) -> str | None:
    """The list a text stands in (fillers, alternatives, unknown options), as one line of context.

    The text itself is part of the line, so every item of a list shares one context and one request.
    """
    trail = list(key_path)
    field = None  # a filler's text sits at [..., i, "text"]: the list is of fillers, read their texts
    if len(trail) >= 2 and isinstance(trail[-1], str) and isinstance(trail[-2], int):
        field = trail.pop()
    if not trail or not isinstance(trail[-1], int):
        return None
    trail.pop()
    container: Any = doc.data
    owner: Any = None
    for key in trail:
        owner, container = container, container[key]
    texts = []
    for item in container:
        english = _english(item.get(field) if field and isinstance(item, dict) else item)
        if english:
            texts.append(english)
    if len(texts) < 2:
        return None
    label = owner.get("description") if field and isinstance(owner, dict) else None  # a vocab group
    prefix = f"{label}: " if isinstance(label, str) and label else "Alternatives: "
    return prefix + "; ".join(texts) + "."


def _long_texts(localized: Sequence[tuple[KeyPath, Any]], exclude: KeyPath) -> list[str]:
    return [
        value["en"]
        for key_path, value in localized
        if key_path != exclude and isinstance(value.get("en"), str) and len(value["en"]) >= SHORT_TEXT
    ]


def context_for(
    doc: LoadedDocument, key_path: KeyPath, localized: Sequence[tuple[KeyPath, Any]]
) -> str | None:
    """The surroundings DeepL sees (unbilled) with a short text: its list siblings and the long texts."""
    value = localized_value(doc, key_path)
    if value is None or len(value) >= SHORT_TEXT:
        return None
    parts: list[str] = []
    listed = _list_context(doc, key_path)
    if listed:
        parts.append(listed)
    parts.extend(_long_texts(localized, key_path))
    if not parts:
        return None
    return " ".join(parts)[:MAX_CONTEXT]


def localized_value(doc: LoadedDocument, key_path: KeyPath) -> str | None:
    value: Any = doc.data
    for key in key_path:
        value = value[key]
    return _english(value)


def units_of(doc: LoadedDocument, path: Path) -> tuple[list[TranslationUnit], list[Diagnostic]]:
    """Every English-bearing text of one loaded file, in document order."""
    localized = list(_walk(doc.data))
    units: list[TranslationUnit] = []
    problems: list[Diagnostic] = []
    for key_path, value in localized:
        en, ja, status = value.get("en"), value.get("ja"), value.get("status", "original")
        if en is None:
            continue
        if not isinstance(en, str) or not (ja is None or isinstance(ja, str)):
            problems.append(
                doc.diagnostic(
                    key_path,
                    "TR010",
                    "`en` and `ja` must be strings",
                    hint="write each text as one string (quote it if YAML reads it as a number, a list or "
                    "a mapping)",
                )
            )
            continue
        try:
            parsed_status = TranslationStatus(status)
        except ValueError:
            problems.append(
                doc.diagnostic(
                    key_path + ("status",),
                    "TR010",
                    f"unknown translation status {status!r}",
                    hint="use original, machine or reviewed",
                )
            )
            continue
        if not en.strip():
            continue
        position = doc.position(key_path + ("en",))
        units.append(
            TranslationUnit(
                path=path,
                display_path=doc.path,
                key_path=key_path,
                line=position.line if position else None,
                col=position.col if position else None,
                en=en,
                ja=ja,
                status=parsed_status,
                context=context_for(doc, key_path, localized),
            )
        )
    return units, problems


def source_paths(root: Path, paths: Sequence[Path] = ()) -> list[Path]:
    """The YAML files to translate: the given files and folders, or the whole sources folder. A file
    outside the folder — named so, or reached through a link that leads out of it — is refused (TR015):
    translate holds and journals the sources folder only, so it would write there unguarded."""
    from ..project import source_files

    found: list[Path] = []
    if not paths:
        dataset, vocab, templates = source_files(root)
        found = ([dataset] if dataset.is_file() else []) + vocab + templates
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.yaml") if "translations" not in p.parts))
        else:
            found.append(path)
    home, shown = root.resolve(), display_path(root)
    outside = [path for path in dict.fromkeys(found) if not path.resolve().is_relative_to(home)]
    if outside:
        raise DiagnosticError(
            [
                Diagnostic(
                    code="TR015",
                    message=f"{display_path(path)} is not in the sources folder {shown}"
                    + (" (a link leads out of it)" if os.path.realpath(path) != os.path.abspath(path) else "")
                    + ": translate holds and journals that folder only, so it writes nothing outside it",
                    path=display_path(path),
                    hint=f"name files or folders inside {shown} (copy a linked file into it), or pass "
                    "--sources with the sources folder that holds this file",
                )
                for path in outside
            ]
        )
    return found if not paths else sorted(dict.fromkeys(found))


def collect_units(files: Sequence[Path]) -> list[TranslationUnit]:
    """Every translatable text of the files; raise DiagnosticError if a file cannot be read."""
    units: list[TranslationUnit] = []
    problems: list[Diagnostic] = []
    for path in files:
        try:
            doc = load_yaml(path, display_path(path))
        except DiagnosticError as exc:
            problems.extend(exc.diagnostics)
            continue
        found, file_problems = units_of(doc, path)
        units.extend(found)
        problems.extend(file_problems)
    if problems:
        raise DiagnosticError(problems)
    return units
