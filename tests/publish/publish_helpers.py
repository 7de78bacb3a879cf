"""Helpers shared by the publish tests: build a sources folder, run the CLI, edit sources."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

REPO = "lab/pub-bench"


def build_folder(sources: Path, out: Path, formats: tuple[str, ...] = ("parquet",)) -> Path:
    """Build ``sources`` into ``out`` the way `jbcompile build` does (lint checks aside)."""
    from jbcompile.build import compile_project, write_build
    from jbcompile.project import load_project

    write_build(compile_project(load_project(sources), checks=False), out, formats=formats)
    return out


def run(*args: str):
    from jbcompile.cli import app

    return CliRunner().invoke(app, list(args))


def publish(sources: Path, build: Path, *extra: str):
    return run("publish", "--repo", REPO, "--sources", str(sources), "--build", str(build), *extra)


def build_files(build: Path) -> dict[str, bytes]:
    return {p.relative_to(build).as_posix(): p.read_bytes() for p in build.rglob("*") if p.is_file()}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def bump_version(sources: Path, version: str) -> None:
    edit(sources / "dataset.yaml", "version: 0.1.0", f"version: {version}")


def hub_process_env(hub, home: Path) -> dict[str, str]:
    """Environment of a fresh process that talks to the fake Hub (and nothing else) with its token."""
    return {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_TOKEN": hub.token,
        "HF_HOME": str(home),
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "TRANSFORMERS_OFFLINE": "0",
    }


def only_read(hub) -> bool:
    """Nothing but read-only requests reached the Hub (a refusal still reads it, to report everything)."""
    reads = all(method in ("GET", "HEAD") or path == "/api/validate-yaml" for method, path in hub.requests)
    return reads and hub.writes == []
