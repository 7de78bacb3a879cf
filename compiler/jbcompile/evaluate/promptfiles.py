"""Prompt template files: Jinja2 files shipped in each design's ``prompts/`` folder, found and loaded.

A kind renders one prompt per row from plain variables; which file renders it is the prompt *setting*
(``<kind>/basic.j2`` …) or a user's ``--prompt-file``, which may ``{% extends %}`` a bundled layout. Bundled
templates are named ``<kind>/<file>`` wherever the design's package lies; ``release/`` holds the prompts
of no design (a release's own prompt, sent as it is).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2
from jinja2 import meta

from ..designs import all_designs
from ..diagnostics import Diagnostic, DiagnosticError
from ..limits import MAX_PROMPT_CHARS
from ..reading import PROMPT, check_file, is_present, template_loader
from ..usertemplates import user_environment
from .prompting import PromptTemplate

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"  # prompts of no design (``release/``)
VERBATIM_PROMPT = PROMPTS_DIR / "release" / "verbatim.j2"  # a release's own prompt, sent as it is


def prompt_folders() -> dict[str, Path]:
    """``<prefix>`` → folder of the bundled prompt templates: each design's, and ``release``."""
    folders = {design.name: design.prompts_dir for design in all_designs()}
    folders.setdefault("release", PROMPTS_DIR / "release")
    return folders


def bundled_prompt_files() -> list[Path]:
    """Every bundled prompt template file (each design's and ``release/``), by ``<kind>/<file>`` name."""
    named = {
        f"{prefix}/{path.relative_to(folder).as_posix()}": path
        for prefix, folder in prompt_folders().items()
        for path in folder.rglob("*.j2")
    }
    return [named[name] for name in sorted(named)]


def bundled_prompt_name(path: Path) -> str | None:
    """``<kind>/<file>`` of a bundled prompt file, or None for any other file."""
    resolved = path.resolve()
    for prefix, folder in prompt_folders().items():
        if resolved.is_relative_to(folder.resolve()):
            return f"{prefix}/{resolved.relative_to(folder.resolve()).as_posix()}"
    return None


def bundled_prompt_names(kind: str) -> list[str]:
    folder = prompt_folders().get(kind)
    if folder is None:
        return []
    return sorted(p.stem for p in folder.glob("*.j2") if not p.name.startswith("_"))


def load_prompt_template(kind: str, setting: str, prompt_file: Path | None = None) -> PromptTemplate:
    """The bundled template of ``setting``, or ``prompt_file`` (which may extend the bundled layouts)."""
    folders = prompt_folders()
    bundled = jinja2.PrefixLoader({prefix: template_loader(f, PROMPT) for prefix, f in folders.items()})
    loaders: list[jinja2.BaseLoader] = [bundled]
    if prompt_file is not None:
        if not is_present(prompt_file, PROMPT):  # a FIFO or a folder there: F002, not "not found"
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV010", "prompt file not found", path=str(prompt_file), hint="give a Jinja2 file"
                    )
                ]
            )
        check_file(prompt_file, PROMPT)  # bounded, like every file it includes (template_loader)
        loaders.insert(0, template_loader(prompt_file.resolve().parent, PROMPT))
        name = prompt_file.name
        path = prompt_file
    else:
        name = f"{kind}/{setting}.j2"
        path = folders.get(kind, PROMPTS_DIR / kind) / f"{setting}.j2"
        if not path.is_file():
            known = ", ".join(bundled_prompt_names(kind))
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV011",
                        f"no bundled prompt {setting!r} for {kind}",
                        hint=f"use one of {known}, or give your own with --prompt-file",
                    )
                ]
            )
    environment = user_environment(jinja2.ChoiceLoader(loaders), MAX_PROMPT_CHARS)
    try:
        template = environment.get_template(name)
    except jinja2.TemplateSyntaxError as error:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV012",
                    f"prompt template syntax: {error.message}",
                    path=str(path),
                    line=error.lineno,
                    hint="fix the Jinja syntax at this line",
                )
            ]
        ) from None
    except jinja2.TemplateNotFound as error:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV012",
                    f"prompt template not found: {error.name}",
                    path=str(path),
                    hint="include or extend only templates beside the prompt file, or bundled ones",
                )
            ]
        ) from None
    except UnicodeDecodeError:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV012", "the prompt template is not UTF-8 text", path=str(path), hint="save it as UTF-8"
                )
            ]
        ) from None
    digest = hashlib.sha256()
    for source in _sources(environment, name):
        digest.update(source.encode("utf-8") + b"\0")
    return PromptTemplate(name=name, template=template, source_sha256=digest.hexdigest())


def _sources(environment: jinja2.Environment, name: str) -> list[str]:
    """The template's own source and the sources of the layouts it extends, for the run fingerprint."""
    sources: list[str] = []
    visited: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in visited:
            continue
        visited.add(current)
        source, _, _ = environment.loader.get_source(environment, current)  # type: ignore[union-attr]
        sources.append(source)
        pending.extend(ref for ref in meta.find_referenced_templates(environment.parse(source)) if ref)
    return sources
