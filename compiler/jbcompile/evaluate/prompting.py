"""Prompt templates (Jinja2 files shipped in ``evaluate/prompts/<kind>/``) and chat formatting.

A kind renders one prompt per row from plain variables; which file renders it is the prompt *setting*
(``bbq/basic.j2`` …) or a user's ``--prompt-file``, which may ``{% extends %}`` a bundled layout.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta

from ..diagnostics import Diagnostic, DiagnosticError

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


@dataclass(frozen=True)
class PromptItem:
    """One prompt to run: the row it asks about, its text, and the options it offers.

    ``prefix_keys`` are grouping hints, outermost first (e.g. category, then question): items that share
    a key share a long token prefix, which the backend computes once and reuses.
    """

    example_id: str
    text: str
    options: tuple[str, ...]
    prefix_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    template: jinja2.Template
    source_sha256: str

    def render(self, **variables: Any) -> str:
        return self.template.render(**variables)


def bundled_prompt_names(kind: str) -> list[str]:
    folder = PROMPTS_DIR / kind
    return sorted(p.stem for p in folder.glob("*.j2") if not p.name.startswith("_"))


def load_prompt_template(kind: str, setting: str, prompt_file: Path | None = None) -> PromptTemplate:
    """The bundled template of ``setting``, or ``prompt_file`` (which may extend the bundled layouts)."""
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(PROMPTS_DIR))]
    if prompt_file is not None:
        if not prompt_file.is_file():
            raise DiagnosticError(
                [
                    Diagnostic(
                        "EV010", "prompt file not found", path=str(prompt_file), hint="give a Jinja2 file"
                    )
                ]
            )
        loaders.insert(0, jinja2.FileSystemLoader(str(prompt_file.resolve().parent)))
        name = prompt_file.name
        path = prompt_file
    else:
        name = f"{kind}/{setting}.j2"
        path = PROMPTS_DIR / name
        if not path.is_file():
            known = ", ".join(bundled_prompt_names(kind))
            raise DiagnosticError(
                [Diagnostic("EV011", f"no bundled prompt {setting!r} for {kind}; known: {known}")]
            )
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    try:
        template = environment.get_template(name)
    except jinja2.TemplateSyntaxError as error:
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV012", f"prompt template syntax: {error.message}", path=str(path), line=error.lineno
                )
            ]
        ) from None
    except jinja2.TemplateNotFound as error:
        raise DiagnosticError(
            [Diagnostic("EV012", f"prompt template not found: {error.name}", path=str(path))]
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


def render_checked(template: PromptTemplate, where: str, **variables: Any) -> str:
    """Render, turning a template error (e.g. an undefined variable) into a diagnostic."""
    try:
        return template.render(**variables)
    except jinja2.TemplateError as error:
        raise DiagnosticError(
            [Diagnostic("EV013", f"prompt template {template.name} failed on {where}: {error}")]
        ) from None


def apply_chat_template(tokenizer: Any, text: str) -> str:
    """Wrap a prompt as one user turn with the tokenizer's chat template, ready for the reply."""
    if not getattr(tokenizer, "chat_template", None):
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV014", "--chat was given but the tokenizer has no chat template", hint="drop --chat"
                )
            ]
        )
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
