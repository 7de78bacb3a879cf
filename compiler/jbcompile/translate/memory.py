"""The translation memory (``sources/translations/memory.yaml``): what DeepL already translated.

Looked up before anything is billed, saved (atomically) after every batch, so an interrupted run loses
nothing and a re-run bills only what is new.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..fsio import write_atomic
from ..loader import load_yaml
from ..paths import display_path
from ..reading import SOURCE, is_present
from ..schema.translation import MemoryEntry, TranslationMemoryFile

MEMORY_FILE = Path("translations") / "memory.yaml"
_HEADER = (
    "# Translation memory of `jbcompile translate`: DeepL's output per source text and options.\n"
    "# Written by the tool; a re-run bills nothing that is already here. Review translations in the\n"
    "# sources (status: reviewed), not here.\n"
)


@dataclass
class TranslationMemory:
    path: Path
    entries: dict[str, MemoryEntry] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> TranslationMemory:
        """The memory at ``path`` (empty when the file does not exist yet; a FIFO or a folder: F002)."""
        if not is_present(path, SOURCE, display_path(path)):
            return cls(path)
        from ..validation import validate_document

        doc = load_yaml(path, display_path(path))
        if doc.data is None:
            return cls(path)
        model = validate_document(TranslationMemoryFile, doc)
        return cls(path, {entry.key: entry for entry in model.entries})

    def get(self, key: str) -> MemoryEntry | None:
        return self.entries.get(key)

    def add(self, entry: MemoryEntry) -> None:
        self.entries[entry.key] = entry

    def __len__(self) -> int:
        return len(self.entries)

    def dump(self) -> str:
        """Deterministic text: entries sorted by source text, then key."""
        ordered = sorted(self.entries.items(), key=lambda item: (item[1].source, item[0]))
        data = {
            "version": 1,
            "entries": [entry.model_dump(mode="json", exclude_defaults=True) for _, entry in ordered],
        }
        return _HEADER + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, self.dump())
