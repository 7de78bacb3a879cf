"""``jbcompile translate`` as plain steps: plan (free), run (billed, resumable), write back (atomic).

plan   sources + memory + glossary ─▶ which texts need DeepL, which the memory already answers
run    batches to DeepL; the memory is saved after every batch, so a failure loses nothing
write  memory ─▶ ``ja`` (pronoun rules applied) + ``status: machine``, never over a reviewed text
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..diagnostics import Diagnostic, DiagnosticError, Severity
from ..outputs import Change, commit_files
from ..schema.common import TranslationStatus
from ..schema.translation import GlossaryFile, MemoryEntry, TranslationOptions, memory_key
from .client import MAX_TEXTS_PER_REQUEST, Translated, TranslationStopped
from .glossary import glossary_name, relevant_entries
from .memory import TranslationMemory
from .protect import protect, restore, slot_problem
from .units import TranslationUnit


class Translator(Protocol):
    def close(self) -> None: ...

    def ensure_glossary(self, name: str, entries: dict[str, str]) -> str: ...

    def translate(
        self, texts: Sequence[str], context: str | None = None, glossary_id: str | None = None
    ) -> list[Translated]: ...


@dataclass(frozen=True)
class Settings:
    source_lang: str = "EN"
    target_lang: str = "JA"
    formality: str | None = None
    only_missing: bool = False


@dataclass(frozen=True)
class PlannedText:
    """A unit that gets a (new) Japanese text: from the memory, or from DeepL."""

    unit: TranslationUnit
    options: TranslationOptions
    key: str

    @property
    def protected(self) -> str:
        return protect(self.unit.en)


@dataclass
class Plan:
    planned: list[PlannedText] = field(default_factory=list)
    skipped: list[tuple[TranslationUnit, str]] = field(default_factory=list)
    to_bill: list[PlannedText] = field(default_factory=list)  # one per distinct memory key
    remembered: int = 0  # planned texts the memory already holds (the others repeat one billed once)

    @property
    def billed_characters(self) -> int:
        """Characters DeepL counts: the texts as sent (context is free)."""
        return sum(len(item.protected) for item in self.to_bill)


def skip_reason(unit: TranslationUnit, settings: Settings) -> str | None:
    """Why ``unit`` keeps its Japanese text as is, or None when it gets a machine translation."""
    if unit.status is TranslationStatus.REVIEWED:
        return "reviewed"
    if unit.status is TranslationStatus.ORIGINAL and unit.ja:
        return "written in Japanese"
    if settings.only_missing and unit.ja:
        return "already translated"
    return None


def make_plan(
    units: Iterable[TranslationUnit], memory: TranslationMemory, glossary: GlossaryFile, settings: Settings
) -> Plan:
    plan = Plan()
    billed_keys: set[str] = set()
    for unit in units:
        reason = skip_reason(unit, settings)
        if reason:
            plan.skipped.append((unit, reason))
            continue
        options = TranslationOptions(
            source_lang=settings.source_lang,
            target_lang=settings.target_lang,
            context=unit.context,
            glossary=relevant_entries(unit.en, glossary),
            formality=settings.formality,
        )
        item = PlannedText(unit, options, memory_key(unit.en, options))
        plan.planned.append(item)
        if memory.get(item.key) is not None:
            plan.remembered += 1
        elif item.key not in billed_keys:
            billed_keys.add(item.key)
            plan.to_bill.append(item)
    return plan


def batches(items: Sequence[PlannedText], size: int = MAX_TEXTS_PER_REQUEST) -> list[list[PlannedText]]:
    """Requests to send: DeepL reads `context` per request, so only texts of one context share one."""
    by_context: dict[str | None, list[PlannedText]] = {}
    for item in items:
        by_context.setdefault(item.unit.context, []).append(item)
    out: list[list[PlannedText]] = []
    for group in by_context.values():
        for start in range(0, len(group), size):
            out.append(group[start : start + size])
    return out


@dataclass
class RunResult:
    translated: int = 0  # texts DeepL translated in this run
    billed_characters: int = 0
    written: list[tuple[TranslationUnit, str]] = field(default_factory=list)
    unchanged: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stopped: Diagnostic | None = None


def run_plan(
    plan: Plan,
    memory: TranslationMemory,
    translator_factory: Callable[[], Translator],
    glossary: GlossaryFile,
    dataset_name: str,
    postprocess: Callable[[str], str],
    progress: Callable[[int], None] | None = None,
    batch_size: int = MAX_TEXTS_PER_REQUEST,
    sources: Path | None = None,
) -> RunResult:
    """Translate what the memory lacks, then write every planned text back — even after a failure — in
    one commit into the sources folder ``sources`` (default: the memory's)."""
    result = RunResult()
    translator: Translator | None = None
    try:
        if plan.to_bill:
            translator = translator_factory()
            glossary_id = None
            if glossary.entries:
                glossary_id = translator.ensure_glossary(
                    glossary_name(dataset_name, glossary), dict(sorted(glossary.entries.items()))
                )
            for batch in batches(plan.to_bill, batch_size):
                outputs = translator.translate(
                    [item.protected for item in batch],
                    context=batch[0].unit.context,
                    glossary_id=glossary_id if any(item.options.glossary for item in batch) else None,
                )
                for item, output in zip(batch, outputs, strict=True):
                    text = restore(output.text)
                    memory.add(
                        MemoryEntry(
                            source=item.unit.en,
                            options=item.options,
                            translation=text,
                            billed_characters=output.billed_characters,
                            problem=slot_problem(item.unit.en, text),
                        )
                    )
                    result.billed_characters += output.billed_characters
                memory.save()  # flushed per batch: a later failure cannot lose this one
                result.translated += len(batch)
                if progress:
                    progress(len(batch))
    except TranslationStopped as stop:
        result.stopped = stop.diagnostic
    finally:
        if translator is not None:
            translator.close()
        write_back(plan, memory, postprocess, result, sources or memory.path.parent.parent)
    return result


def write_back(
    plan: Plan,
    memory: TranslationMemory,
    postprocess: Callable[[str], str],
    result: RunResult,
    root: Path,
) -> None:
    """Put every planned text the memory can answer into its source file: every file of the sources
    folder ``root`` changes in one journaled commit (:func:`jbcompile.outputs.commit_files`)."""
    from ..yamledit import with_values

    changes: dict[Path, list[tuple[tuple[str | int, ...], Any]]] = {}
    for item in plan.planned:
        entry = memory.get(item.key)
        if entry is None:
            continue  # not translated yet (the run stopped): a re-run picks it up
        unit = item.unit
        if entry.problem:
            result.diagnostics.append(
                Diagnostic(
                    code="TR006",
                    message=f"{entry.problem} in the translation of {unit.key_label()}: "
                    f"{entry.translation!r}",
                    path=unit.display_path,
                    line=unit.line,
                    col=unit.col,
                    severity=Severity.WARNING,
                    hint="write the Japanese by hand (status: reviewed); the memory keeps DeepL's output",
                    key_path=unit.key_path,
                )
            )
            continue
        text = postprocess(entry.translation)
        if unit.ja == text and unit.status is TranslationStatus.MACHINE:
            result.unchanged += 1
            continue
        changes.setdefault(unit.path, []).extend(
            [(unit.key_path + ("ja",), text), (unit.key_path + ("status",), TranslationStatus.MACHINE.value)]
        )
        result.written.append((unit, text))
    texts: dict[Path, Change] = {}
    for path, path_changes in sorted(changes.items()):
        try:
            texts[path] = with_values(path, path_changes)
        except (KeyError, IndexError, OSError, DiagnosticError) as exc:
            _not_written(result, {path}, exc)
    try:
        commit_files(root, texts, "translate")  # every file at once, or none
    except OSError as exc:
        _not_written(result, set(texts), exc)


def _not_written(result: RunResult, paths: set[Path], exc: Exception) -> None:
    """TR013 for each file of ``paths``, whose texts are no longer counted as written."""
    for path in sorted(paths):
        unit_path = next(unit.display_path for unit, _ in result.written if unit.path == path)
        result.diagnostics.append(
            Diagnostic(
                code="TR013",
                message=f"could not write the translations into this file: {exc}",
                path=unit_path,
                hint="was it edited during the run? Re-run: the memory already holds the translations",
            )
        )
    result.written = [(unit, text) for unit, text in result.written if unit.path not in paths]
