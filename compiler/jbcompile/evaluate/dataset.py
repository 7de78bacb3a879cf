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
    manifest: dict[str, Any] | None  # version and sources hash from the build's manifest.json
    commit: str | None = None  # the Hub commit the revision resolved to: a branch may move, a commit not


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
    if local.exists():
        commit, manifest = None, _manifest(local / "manifest.json")
    else:
        commit, manifest = _hub_release(dataset, revision)
    return LoadedRows(
        rows=split.to_list(),
        columns=list(split.column_names),
        path=dataset,
        config=config,
        revision=revision,
        manifest=manifest,
        commit=commit,
    )


def _hub_release(repo_id: str, revision: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """The commit a Hub revision points at, and that commit's manifest, so that results name the exact
    data they were computed on. Unknown (None) when the Hub cannot be asked, e.g. offline from a cache."""
    from huggingface_hub import HfApi, hf_hub_download

    try:
        commit = HfApi().dataset_info(repo_id, revision=revision).sha
    except Exception:  # noqa: BLE001 - offline, gated or a non-Hub loader: the rows are loaded regardless
        return None, None
    try:
        path = hf_hub_download(repo_id, "manifest.json", repo_type="dataset", revision=commit)
    except Exception:  # noqa: BLE001 - a dataset not built by jbcompile has no manifest
        return commit, None
    return commit, _manifest(Path(path))


def _manifest(path: Path) -> dict[str, Any] | None:
    import json

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
