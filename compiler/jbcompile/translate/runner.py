"""The programmatic entry point of ``jbcompile translate``; the CLI only parses options and prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError
from ..loader import load_yaml
from ..outputs import settle
from ..reading import SOURCE, is_present
from ..schema.translation import GlossaryFile
from .glossary import GLOSSARY_FILE, load_glossary
from .memory import MEMORY_FILE, TranslationMemory
from .pipeline import Plan, RunResult, Settings, Translator, make_plan, run_plan
from .units import collect_units, source_paths


@dataclass
class Prepared:
    root: Path
    plan: Plan
    memory: TranslationMemory
    glossary: GlossaryFile
    dataset_name: str
    postprocess: Callable[[str], str]  # the pronoun rules, applied to DeepL's output before write-back


def _dataset_name(root: Path) -> str:
    """The dataset's name, read leniently: sources may not validate before they are translated."""
    path = root / "dataset.yaml"
    if not is_present(path, SOURCE):
        return root.resolve().name
    data = load_yaml(path).data
    name = data.get("name") if isinstance(data, dict) else None
    return str(name) if name else root.resolve().name


def prepare(root: Path, paths: Sequence[Path], settings: Settings) -> Prepared:
    """Read the sources, the memory and the glossary; decide what DeepL has to translate. Bills nothing."""
    root = Path(root)
    settle(root)  # a write-back a kill cut short is finished before the sources are read
    glossary = load_glossary(root / GLOSSARY_FILE)
    if glossary.source_lang.upper() != settings.source_lang.upper() or (
        glossary.target_lang.upper() != settings.target_lang.upper()
    ):
        raise DiagnosticError(
            [
                Diagnostic(
                    code="TR011",
                    message=f"the glossary is {glossary.source_lang}→{glossary.target_lang}, the run is "
                    f"{settings.source_lang}→{settings.target_lang}",
                    path=str(root / GLOSSARY_FILE),
                    hint="make the glossary's source_lang / target_lang match",
                )
            ]
        )
    memory = TranslationMemory.load(root / MEMORY_FILE)
    units = collect_units(source_paths(root, paths))
    plan = make_plan(units, memory, glossary, settings)
    return Prepared(root, plan, memory, glossary, _dataset_name(root), pronoun_postprocessor(root))


def pronoun_postprocessor(root: Path) -> Callable[[str], str]:
    """The pronoun rules of the checks (彼ら/彼女ら → かれら): one implementation, shared with `check`.

    The sources' own ``rules/pronouns.yaml`` is used when it has one, else the bundled file.
    """
    from ..checks.pronouns import apply_pronoun_rules, load_pronoun_rules
    from ..checks.ruledata import rule_file_path
    from ..schema.rules import PronounRulesFile

    rules = load_pronoun_rules(rule_file_path(PronounRulesFile, root))
    return lambda text: apply_pronoun_rules(text, rules, scope="translation")


def run(
    prepared: Prepared,
    translator_factory: Callable[[], Translator],
    progress: Callable[[int], None] | None = None,
    batch_size: int = 50,
) -> RunResult:
    result = run_plan(
        prepared.plan,
        prepared.memory,
        translator_factory,
        prepared.glossary,
        prepared.dataset_name,
        prepared.postprocess,
        progress=progress,
        batch_size=batch_size,
        sources=prepared.root,
    )
    return result
