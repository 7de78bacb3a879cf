"""Load the rule data of a sources folder (``<sources>/rules/*.yaml``), falling back to the bundled files.

A benchmark that has no ``rules/`` folder of its own is checked with the bundled pronoun rules,
normalization table, lexicon and attribute markers; one that has a file of its own uses it instead, whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..diagnostics import Diagnostic, DiagnosticError
from ..paths import display_path
from ..schema.rules import AttributesFile, LexiconFile, NormalizationFile, PronounRulesFile

M = TypeVar("M", bound=BaseModel)

RULE_FILES: dict[type[BaseModel], str] = {
    PronounRulesFile: "pronouns.yaml",
    NormalizationFile: "normalization.yaml",
    LexiconFile: "lexicon.yaml",
    AttributesFile: "attributes.yaml",
}


@dataclass(frozen=True)
class RuleData:
    pronouns: PronounRulesFile
    normalization: NormalizationFile
    lexicon: LexiconFile
    attributes: AttributesFile


def rule_file_path(model: type[BaseModel], sources: Path | None = None) -> Path:
    """``<sources>/rules/<file>`` when it exists, else the bundled one; F002 when something else than a
    file stands in its place (a FIFO, a folder): the project's rules are never replaced in silence."""
    from ..paths import bundled_sources, display_path
    from ..reading import SOURCE, is_present

    name = RULE_FILES[model]
    own = Path(sources) / "rules" / name if sources is not None else None
    if own is not None and is_present(own, SOURCE, display_path(own)):
        return own
    return bundled_sources() / "rules" / name


def load_rule_file(model: type[M], path: Path | None = None) -> M:
    """Read and validate one rule file; DiagnosticError (with positions) when it is invalid."""
    from ..loader import load_yaml
    from ..validation import validate_document

    path = Path(path) if path is not None else rule_file_path(model)
    doc = load_yaml(path, display_path(path))
    return validate_document(model, doc)


def load_rule_data(sources: Path | None) -> tuple[RuleData | None, list[Diagnostic]]:
    """All rule data of a sources folder, or None and the problems found in its files."""
    problems: list[Diagnostic] = []
    loaded: dict[type[BaseModel], BaseModel] = {}
    for model in RULE_FILES:
        try:
            loaded[model] = load_rule_file(model, rule_file_path(model, sources))
        except DiagnosticError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        return None, problems
    return (
        RuleData(
            pronouns=loaded[PronounRulesFile],  # type: ignore[arg-type]
            normalization=loaded[NormalizationFile],  # type: ignore[arg-type]
            lexicon=loaded[LexiconFile],  # type: ignore[arg-type]
            attributes=loaded[AttributesFile],  # type: ignore[arg-type]
        ),
        [],
    )
