"""Which files of a sources folder are sources: one rule for the loader and the sources hash alike.

A file the build reads is always in the hash, and a file it skips never is; every skipped file gets a
diagnostic (hidden files, ``.yml`` among the sources, stray files, build folders, link loops), so nothing
is left out in silence.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic, DiagnosticError, Severity
from .jsonl import read_json
from .outputs import is_own_name
from .paths import display_path
from .reading import DATA_FILE, DOCUMENT, RECORD, SOURCE, FileKind, iter_blocks

SOURCE_SUFFIX = ".yaml"
# What the compiler reads from a sources folder, by place; other files are hashed but not parsed.
KNOWN_ENTRIES = ("dataset.yaml", "vocab", "templates", "rules", "translations", "CHANGELOG.md", "README.md")
# The text files in those places: every one is scanned whole for characters no reader sees (JA120, JA121).
TEXT_SUFFIXES = (SOURCE_SUFFIX, ".md")


@dataclass
class SourceWalk:
    """The one rule for which files of a sources folder count: what the loader reads and the hash covers.

    Hidden files and folders, ``__pycache__`` and build folders are skipped, each with a diagnostic; so
    are files in ``vocab/`` and ``templates/`` that are not ``.yaml`` (``.yml`` is an error: it was meant
    to be a source).
    """

    root: Path
    files: list[Path] = field(default_factory=list)  # every file the sources hash covers
    vocab: list[Path] = field(default_factory=list)
    templates: list[Path] = field(default_factory=list)
    skipped: list[Diagnostic] = field(default_factory=list)

    @property
    def dataset(self) -> Path:
        return self.root / "dataset.yaml"


def _skip(path: Path, code: str, why: str, hint: str, severity: Severity = Severity.WARNING) -> Diagnostic:
    return Diagnostic(code=code, message=why, path=display_path(path), severity=severity, hint=hint)


# Hidden entries that tools keep beside any project: skipped with a note, not a warning.
_TOOLING = frozenset(
    {".git", ".gitignore", ".gitattributes", ".github", ".hg", ".svn", ".DS_Store", "__pycache__"}
)


def _hidden(path: Path, what: str) -> Diagnostic:
    """A hidden file or folder is no source; one that looks like a source (``.x.yaml``) is a warning."""
    harmless = path.name in _TOOLING and path.suffix not in (SOURCE_SUFFIX, ".yml")
    return _skip(
        path,
        "S012",
        f"hidden {what}: not part of the sources (not built, not hashed)",
        "rename it without the leading dot if it should be",
        Severity.INFO if harmless else Severity.WARNING,
    )


def is_jbcompile_manifest(path: Path) -> bool:
    """A manifest written by jbcompile (by content, not by name: any web app may have a manifest.json)."""
    try:
        if not path.is_file():
            return False
        manifest = read_json(path, RECORD)
    except (OSError, ValueError, DiagnosticError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("compiler") == "jbcompile"
        and isinstance(manifest.get("files"), dict)
        and isinstance(manifest.get("rows"), dict)
    )


def _is_build_folder(folder: Path) -> bool:
    return is_jbcompile_manifest(folder / "manifest.json")


def walk_sources(root: Path) -> SourceWalk:
    """Every file of the sources folder ``root``, sorted, split by role, with a note on each one skipped."""
    root = Path(root)
    walk = SourceWalk(root)
    visited = {os.path.realpath(root)}
    for folder, dirs, names in os.walk(root, followlinks=True):
        here = Path(folder)
        kept_dirs = []
        for name in sorted(dirs):
            path = here / name
            real = os.path.realpath(path)
            if real in visited or root.resolve().is_relative_to(real):
                walk.skipped.append(
                    _skip(
                        path,
                        "S018",
                        "a link to a folder already read (a loop): not followed",
                        "remove the link, or point it at a folder outside the sources",
                    )
                )
            elif is_own_name(name):
                continue  # jbcompile's own staging, being written or left by a kill (outputs.settle)
            elif name.startswith(".") or name == "__pycache__":
                walk.skipped.append(_hidden(path, "folder"))
            elif path.suffix in (SOURCE_SUFFIX, ".yml") and here != root:
                walk.skipped.append(
                    _skip(
                        path,
                        "S013",
                        "a folder named like a source file: not read",
                        "rename it, or put the source file in its place",
                        Severity.ERROR,
                    )
                )
            elif _is_build_folder(path):
                walk.skipped.append(
                    _skip(
                        path,
                        "S016",
                        "a build folder inside the sources: not part of the sources",
                        "build outside the sources folder (its hash would change with every build)",
                    )
                )
            else:
                kept_dirs.append(name)
                visited.add(real)
        dirs[:] = kept_dirs
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(root)
            if is_own_name(name):
                continue  # a file jbcompile is writing (or a kill's leftover the next claim removes)
            if name.startswith("."):
                walk.skipped.append(_hidden(path, "file"))
                continue
            area = relative.parts[0] if len(relative.parts) > 1 else None
            if not path.is_file():
                meant = area in ("vocab", "templates") and path.suffix in (SOURCE_SUFFIX, ".yml")
                walk.skipped.append(
                    _skip(
                        path,
                        "S013",
                        "not a regular file (a broken link, a device or a pipe): not read",
                        "remove it, or fix the link",
                        Severity.ERROR if meant else Severity.WARNING,
                    )
                )
                continue
            if area in ("vocab", "templates"):
                if path.suffix == ".yml":
                    walk.skipped.append(
                        _skip(
                            path,
                            "S011",
                            f"{area} files end in {SOURCE_SUFFIX}; this one is not read",
                            f"rename it to {path.stem}{SOURCE_SUFFIX}",
                            Severity.ERROR,
                        )
                    )
                    continue
                if path.suffix != SOURCE_SUFFIX or (area == "vocab" and len(relative.parts) > 2):
                    walk.skipped.append(
                        _skip(
                            path,
                            "S013",
                            f"not a source file: only {area}/"
                            + ("*" if area == "vocab" else "**/*")
                            + f"{SOURCE_SUFFIX} is read",
                            "move it out of the sources folder, or give it the right place and suffix",
                        )
                    )
                    continue
                (walk.vocab if area == "vocab" else walk.templates).append(path)
            walk.files.append(path)
    walk.files.sort()
    walk.vocab.sort()
    walk.templates.sort()
    walk.skipped.extend(_case_collisions(root, walk.files))
    return walk


def _is_text_file(root: Path, path: Path) -> bool:
    return path.suffix in TEXT_SUFFIXES and path.relative_to(root).parts[0] in KNOWN_ENTRIES


def text_files(root: Path) -> list[Path]:
    """The text files of the sources folder ``root`` that jbcompile reads — its YAML sources, rules,
    translations, CHANGELOG.md and README.md — sorted."""
    root = Path(root)
    return [path for path in walk_sources(root).files if _is_text_file(root, path)]


def text_kind(path: Path) -> FileKind:
    """The limit a text file of the sources is read under: a YAML source's (Y006), else a Markdown
    document's (README.md, CHANGELOG.md: F001, MAX_DOCUMENT_BYTES)."""
    return SOURCE if path.suffix == SOURCE_SUFFIX else DOCUMENT


def text_file_problems(root: Path, reported: Collection[str] = ()) -> list[Diagnostic]:
    """What keeps a text file of the sources from being read whole — too large (Y006, F001), not UTF-8
    (Y005, at its line and column), unreadable (Y004) — for each one whose shown path is not in
    ``reported`` (the files the project and the rules loaded, which said so themselves). README.md,
    CHANGELOG.md and the translations are read by no loader of ``check``: without this, the scan for
    characters a reader cannot see (JA120) would pass over such a file in silence."""
    from .loader import read_source_text

    problems: list[Diagnostic] = []
    for path in text_files(root):
        shown = display_path(path)
        if shown in reported:
            continue
        try:
            read_source_text(path, text_kind(path), shown)
        except DiagnosticError as error:
            problems.extend(error.diagnostics)
    return problems


def _case_collisions(root: Path, files: list[Path]) -> list[Diagnostic]:
    """Paths that differ only in case are one file on macOS and Windows: a checkout there loses one."""
    seen: dict[str, Path] = {}
    out = []
    for path in files:
        key = path.relative_to(root).as_posix().casefold()
        if key in seen:
            out.append(
                _skip(
                    path,
                    "S019",
                    f"differs from {display_path(seen[key])} only in case: one file on case-insensitive "
                    "file systems",
                    "rename one of the two",
                    Severity.ERROR,
                )
            )
        else:
            seen[key] = path
    return out


def layout_problems(root: Path) -> list[Diagnostic]:
    """A missing ``templates/`` (often misspelled) would build nothing; unknown top-level entries."""
    import difflib

    problems = []
    present = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
    for name in present:
        if name not in KNOWN_ENTRIES:
            close = difflib.get_close_matches(name, KNOWN_ENTRIES, n=1)
            problems.append(
                _skip(
                    root / name,
                    "S015",
                    "not read by the compiler" + (f" (did you mean {close[0]}?)" if close else ""),
                    f"the compiler reads {', '.join(KNOWN_ENTRIES)}",
                    Severity.WARNING if close else Severity.INFO,
                )
            )
    if not (root / "templates").is_dir():
        close = difflib.get_close_matches("templates", present, n=1, cutoff=0.6)
        problems.append(
            Diagnostic(
                code="S014",
                message=f"no templates/ folder in {display_path(root)}"
                + (f" ({close[0]} is there: a misspelling?)" if close else ""),
                path=display_path(root),
                hint="put the templates in templates/<Category>/<id>.yaml",
            )
        )
    return problems


def sources_hash(root: Path) -> str:
    """sha256 over every source file (path and bytes), independent of file system order.

    The files are those of :func:`walk_sources`, the rule the loader follows too: a file
    the build reads is always in the hash, and a file it skips never is.
    """
    digest = hashlib.sha256()
    root = Path(root)
    for path in walk_sources(root).files:
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        # in blocks: a large stray file must not fill the memory; a text file under its own limit
        kind = text_kind(path) if _is_text_file(root, path) else DATA_FILE
        for block in iter_blocks(path, kind, display_path(path)):
            digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()
