"""The EN→JA glossary (``sources/translations/glossary.yaml``), reviewed like any other source."""

from __future__ import annotations

import re
from pathlib import Path

from ..loader import load_yaml
from ..paths import display_path
from ..reading import SOURCE, is_present
from ..schema.translation import GlossaryFile

GLOSSARY_FILE = Path("translations") / "glossary.yaml"


def load_glossary(path: Path) -> GlossaryFile:
    """The glossary at ``path``; an absent file is an empty glossary (a FIFO or a folder there: F002)."""
    if not is_present(path, SOURCE, display_path(path)):
        return GlossaryFile()
    from ..validation import validate_document

    doc = load_yaml(path, display_path(path))
    if doc.data is None:
        return GlossaryFile()
    return validate_document(GlossaryFile, doc)


def _term_pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", re.IGNORECASE)


def relevant_entries(text: str, glossary: GlossaryFile) -> dict[str, str]:
    """The glossary entries whose term occurs in ``text``: only these can change DeepL's output for it."""
    return {
        source: target
        for source, target in sorted(glossary.entries.items())
        if _term_pattern(source).search(text)
    }


def glossary_name(dataset_name: str, glossary: GlossaryFile) -> str:
    """The name of the dataset's glossary on DeepL; its entries are brought up to date before use."""
    return f"jbcompile {dataset_name} {glossary.source_lang}-{glossary.target_lang}"
