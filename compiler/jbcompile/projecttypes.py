"""A loaded sources folder as plain data: what :func:`jbcompile.project.load_project` returns.

The types sit below the loader (which asks the design registry for each template's kind), so that a
design's compile part and the checks can name them without importing the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic
from .loader import KeyPath, LoadedDocument
from .schema import DatasetConfig, FillerGroup


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

    def template_files(self) -> dict[str, str]:
        """Template id → the file it is written in (as diagnostics name it)."""
        return {template.id: template.path for template in self.templates}
