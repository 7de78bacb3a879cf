"""``sources/CHANGELOG.md``: one ``## <version>`` section per release, whose body becomes the release
commit's description on the Hub (`publish`); a new benchmark (`init`, an import) starts with the first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .reading import DOCUMENT, is_present, read_text

CHANGELOG = "CHANGELOG.md"
FIRST_VERSION = "0.1.0"  # a new benchmark's version
# "## 1.2.0", "## v1.2.0", "## [1.2.0] - 2026-01-31" (Keep a Changelog) all name version 1.2.0.
_HEADING = re.compile(r"^##\s+\[?v?(?P<version>[0-9][0-9A-Za-z.+-]*)\]?(?:\s.*)?$")


@dataclass(frozen=True)
class ChangelogSection:
    """One version's section: the line of its heading (1-based) and its body, stripped (may be empty)."""

    version: str
    line: int
    body: str


# A fenced code block opens with three or more backticks or tildes (CommonMark) and closes with at least
# as many of the same character: a `## 1.0.0` inside one is an example, never a heading.
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")


def _closes(line: str, found: str, fence: str) -> bool:
    """A closing fence: the opening's character, at least as long, and nothing after it."""
    return found[0] == fence[0] and len(found) >= len(fence) and not line.strip().lstrip(fence[0])


def find_section(text: str, version: str) -> ChangelogSection | None:
    """The section whose heading names ``version`` (headings inside code fences are not headings), or
    None when there is none."""
    body: list[str] | None = None
    start = 0
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opening = _FENCE.match(line)
        if fence is not None:  # inside a fenced block: only its closing fence matters
            if opening and _closes(line, opening.group("fence"), fence):
                fence = None
        elif opening:
            fence = opening.group("fence")
        elif line.startswith(("# ", "## ")):
            if body is not None:
                break  # any heading of the same or a higher level ends the section
            heading = _HEADING.match(line.strip()) if line.startswith("## ") else None
            if heading and heading.group("version") == version:
                body, start = [], number
                continue
        if body is not None:
            body.append(line)
    if body is None:
        return None
    return ChangelogSection(version, start, "\n".join(body).strip())


def changelog_section(text: str, version: str) -> str | None:
    """The body of the section for ``version`` (stripped), or None when there is none or it is empty."""
    section = find_section(text, version)
    return section.body or None if section is not None else None


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
