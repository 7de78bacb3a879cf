"""Nothing outside a design's own package names a design: the pipeline asks the registry.

Outside ``designs/<name>/`` no file of the compiler mentions ``sobaco`` or ``jubaku`` (in any case), and
``bbq`` stands only where it is the default design (``designs/__init__.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "compiler" / "jbcompile"
DESIGNS = PACKAGE / "designs"
DEFAULT_HOME = DESIGNS / "__init__.py"
OTHER_DESIGNS = re.compile(r"sobaco|jubaku", re.IGNORECASE)
DEFAULT = re.compile(r"(?<![A-Za-z])bbq(?![A-Za-z])")


def _outside_designs() -> list[Path]:
    design_folders = [path for path in DESIGNS.iterdir() if path.is_dir() and (path / "__init__.py").exists()]
    return [
        path
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file()
        and path.suffix in (".py", ".j2", ".yaml", ".md", ".json")
        and not any(path.is_relative_to(folder) for folder in design_folders)
    ]


def test_no_design_is_named_outside_its_package() -> None:
    files = _outside_designs()
    assert len(files) > 50 and DEFAULT_HOME in files  # the scan sees the package
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OTHER_DESIGNS.search(line) or (DEFAULT.search(line) and path != DEFAULT_HOME)
    ]
    assert not found, "a design named outside designs/<name>/ (ask the registry instead):\n" + "\n".join(
        found
    )


def test_the_default_design_is_named_once() -> None:
    lines = [line for line in DEFAULT_HOME.read_text(encoding="utf-8").splitlines() if DEFAULT.search(line)]
    assert len(lines) == 1 and lines[0].startswith("DEFAULT_DESIGN = ")
