"""``sources/CHANGELOG.md``: one ``## <version>`` section per release, whose body becomes the release
commit's description on the Hub (`publish`); a new benchmark (`init`, an import) starts with the first."""

from __future__ import annotations

import re
from pathlib import Path

from .reading import DOCUMENT, is_present, read_text

CHANGELOG = "CHANGELOG.md"
FIRST_VERSION = "0.1.0"  # a new benchmark's version
# "## 1.2.0", "## v1.2.0", "## [1.2.0] - 2026-01-31" (Keep a Changelog) all name version 1.2.0.
_HEADING = re.compile(r"^##\s+\[?v?(?P<version>[0-9][0-9A-Za-z.+-]*)\]?(?:\s.*)?$")


def changelog_section(text: str, version: str) -> str | None:
    """The body of the section for ``version`` (stripped), or None when there is none or it is empty."""
    lines = text.splitlines()
    body: list[str] | None = None
    for line in lines:
        if body is not None and line.startswith(("# ", "## ")):
            break  # any heading of the same or a higher level ends the section
        heading = _HEADING.match(line.strip()) if line.startswith("## ") else None
        if heading and heading.group("version") == version:
            body = []
        elif body is not None:
            body.append(line)
    section = "\n".join(body).strip() if body is not None else ""
    return section or None


def read_changelog(sources: Path) -> str | None:
    path = Path(sources) / CHANGELOG
    return read_text(path, DOCUMENT) if is_present(path, DOCUMENT) else None  # a FIFO there: F002


_FIRST = """\
# Changelog

Each release needs a section here before `jbcompile publish`: it becomes the release's description.

## {version}

- First version, {how}.
"""


def first_changelog(how: str) -> str:
    """The changelog of a new benchmark (``init``'s, an import's): the section of its first version,
    which `publish` needs (P010), saying ``how`` it began."""
    return _FIRST.format(version=FIRST_VERSION, how=how)
