"""Where things are: the benchmark a command works on, the bundled benchmark and card templates
(installed or in a source checkout), the docs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


def display_path(path: Path) -> str:
    """Paths relative to the working folder where possible, so editors and CI can jump to them."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def file_in_the_way(path: str | os.PathLike[str]) -> Path | None:
    """The nearest of ``path`` and its parents that exists and is no folder (a file): why a folder cannot
    be made at ``path`` (EEXIST, ENOTDIR), which the system's message does not say; None when there is
    none."""
    place = Path(path)
    for candidate in (place, *place.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent  # compiler/jbcompile -> repository root


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[-1]


def installed_bundle() -> Path | None:
    """The copy of the benchmark installed inside the package (a wheel install), if there is one."""
    bundle = _PACKAGE / "bundled"
    return bundle if bundle.exists() else None


def bundled_sources() -> Path:
    return _first_existing(_PACKAGE / "bundled" / "sources", _CHECKOUT / "sources")


DATASET_FILE = "dataset.yaml"  # what makes a folder a sources folder
SOURCES_FOLDER = "sources"  # where a benchmark keeps its sources, beside cards/ and build/
BUILD_FOLDER = "build"


@dataclass(frozen=True)
class SourcesChoice:
    """The sources folder a command works on, and how it was chosen: ``given`` (--sources), ``found``
    (from the working folder: see :func:`find_sources`) or ``bundled`` (nothing found: the benchmark
    bundled with jbcompile)."""

    root: Path
    how: Literal["given", "found", "bundled"]

    @property
    def is_bundled(self) -> bool:
        """The benchmark shipped with jbcompile (also when found or given: an editable install's copy)."""
        return self.how == "bundled" or _same_folder(self.root, bundled_sources())

    def build_folder(self) -> Path:
        """Where a build of these sources goes by default: ``build/`` beside the sources folder found
        from the working folder (``./build`` for ``./sources``, ``../build`` inside the sources), else
        ``./build``."""
        if self.how != "found":
            return Path(BUILD_FOLDER)
        beside = Path(os.path.abspath(self.root)).parent / BUILD_FOLDER
        relative = os.path.relpath(beside)  # the shorter of the two forms: build, ../build, /abs/build
        return Path(relative) if len(relative) < len(str(beside)) else beside


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def find_sources(start: Path | None = None) -> Path | None:
    """The sources folder of the benchmark that the folder ``start`` (default: the working folder) is in.

    The one rule every command follows without --sources: ``start`` itself when it holds dataset.yaml;
    else ``start/sources`` when it is a folder (a broken one is then reported, never replaced by another);
    else the nearest parent that holds dataset.yaml, or a ``sources/`` folder with one. None when there is
    none: the caller falls back to the bundled benchmark and says so, or refuses (commands that write).
    """
    here = Path.cwd() if start is None else Path(start)
    if (here / DATASET_FILE).exists():  # whatever it is: the loader refuses a FIFO or a folder (F002)
        return here if start is not None else Path(".")
    if (here / SOURCES_FOLDER).is_dir():
        return here / SOURCES_FOLDER if start is not None else Path(SOURCES_FOLDER)
    for folder in Path(os.path.abspath(here)).parents:
        for candidate in (folder, folder / SOURCES_FOLDER):
            if (candidate / DATASET_FILE).exists():
                return candidate
    return None


def local_sources(given: Path | None) -> SourcesChoice | None:
    """--sources when given, else the benchmark :func:`find_sources` finds; None when there is none (the
    rule of the commands that write into the sources: they never fall back to the bundled benchmark)."""
    if given is not None:
        return SourcesChoice(Path(given), "given")
    found = find_sources()
    return SourcesChoice(found, "found") if found is not None else None


def choose_sources(given: Path | None) -> SourcesChoice:
    """:func:`local_sources`, else the bundled benchmark (the caller says so)."""
    return local_sources(given) or SourcesChoice(bundled_sources(), "bundled")


def bundled_cards() -> Path:
    return _first_existing(_PACKAGE / "bundled" / "cards", _CHECKOUT / "cards")


def docs_root() -> Path:
    """The folder holding README.md and docs/ (the repository, or their copy in an installed wheel)."""
    bundled = _PACKAGE / "bundled"
    return bundled if (bundled / "docs").is_dir() else _CHECKOUT


def shown_path(path: Path) -> str:
    """A path of the repository as written from its root (``compiler/jbcompile/…``); others as they are."""
    resolved = path.resolve()
    return resolved.relative_to(_CHECKOUT).as_posix() if resolved.is_relative_to(_CHECKOUT) else str(path)


def home_as_tilde(value: Any) -> Any:
    """``value`` (JSON data) with every path in the user's home folder written ``~/…``.

    Results are shared; the name of the home folder (often the user's own) is not part of them. Other
    paths stay as they were given. A path is found where it starts a string or follows a space or a
    bracket (``model [/home/me/runs/a]``), never inside another path.
    """
    home = os.path.expanduser("~").rstrip("/\\")
    if len(home) <= 1:  # no home folder, or the root
        return value
    pattern = re.compile(r"(?<![\w.~/\\-])" + re.escape(home) + r"(?![\w.-])")

    def scrub(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: scrub(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [scrub(inner) for inner in item]
        if isinstance(item, str):
            return pattern.sub("~", item)
        return item

    return scrub(value)
