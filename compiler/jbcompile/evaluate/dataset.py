"""Loading the rows to evaluate: a build folder (as `jbcompile build` writes it) or a Hub dataset id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, DiagnosticError


@dataclass
class LoadedRows:
    rows: list[dict[str, Any]]
    columns: list[str]
    path: str
    config: str
    revision: str | None
    manifest: dict[str, Any] | None  # version and sources hash from a build folder's manifest.json


def load_rows(dataset: str, config: str, revision: str | None = None) -> LoadedRows:
    """``datasets.load_dataset(dataset, config, split="test", revision=...)``; problems as diagnostics."""
    import datasets

    local = Path(dataset)
    if local.exists() and not (local / "README.md").is_file() and not any(local.glob("data/*")):
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV003",
                    "this folder is not a dataset folder (no README.md with configs, no data/)",
                    path=dataset,
                    hint="run `jbcompile build` and pass its --out folder",
                )
            ]
        )
    try:
        split = datasets.load_dataset(
            dataset, config, split="test", revision=None if local.exists() else revision
        )
    except ValueError as error:  # unknown config, bad split
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV004", f"cannot load config {config!r}: {str(error).splitlines()[0]}", path=dataset
                )
            ]
        ) from None
    except Exception as error:  # noqa: BLE001 - datasets raises many types for a missing repo or file
        raise DiagnosticError(
            [
                Diagnostic(
                    "EV005",
                    f"cannot load the dataset: {type(error).__name__}: {_first_line(error)}",
                    path=dataset,
                    hint="give a build folder or a Hub id you can access (HF_TOKEN for gated datasets)",
                )
            ]
        ) from None
    return LoadedRows(
        rows=split.to_list(),
        columns=list(split.column_names),
        path=dataset,
        config=config,
        revision=revision,
        manifest=_manifest(local) if local.exists() else None,
    )


def _manifest(folder: Path) -> dict[str, Any] | None:
    import json

    path = folder / "manifest.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {key: data.get(key) for key in ("dataset", "version", "compiler_version", "sources_hash")}


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0] if text else ""
