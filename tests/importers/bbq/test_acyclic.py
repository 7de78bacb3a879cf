"""The modules of ``designs/bbq/importers`` import each other in layers, never in a circle, and only at the
top of a module: each one can be imported first, in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import jbcompile.designs.bbq.importers as package

PACKAGE = package.__name__
FOLDER = Path(package.__file__).parent
MODULES = sorted(path.stem for path in FOLDER.glob("*.py") if path.stem != "__init__")


def _sibling_imports(module: str) -> list[tuple[str, int, bool]]:
    """(sibling module, line, at the top of the module?) for every import of another module of the
    package, wherever it stands (inside a function or under TYPE_CHECKING too)."""
    tree = ast.parse((FOLDER / f"{module}.py").read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE + "."):
            names = [node.module.removeprefix(PACKAGE + ".")]
        elif isinstance(node, ast.Import):
            names = [
                a.name.removeprefix(PACKAGE + ".") for a in node.names if a.name.startswith(PACKAGE + ".")
            ]
        found += [(name.split(".")[0], node.lineno, id(node) in top) for name in names]
    return found


def test_the_package_is_what_this_test_reads() -> None:
    assert {"common", "draft", "rows", "templates", "jsonl", "intersectional", "names"} <= set(MODULES)


def test_the_modules_import_each_other_without_a_circle() -> None:
    graph = {module: {name for name, _, _ in _sibling_imports(module)} for module in MODULES}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(
            f"the modules import each other in a circle: {' → '.join(error.args[1])}"
        ) from None
    assert set(order) == set(MODULES)
    for bottom in ("common", "draft", "rows"):  # the shared types import no module of the package
        assert graph[bottom] == set(), bottom


def test_siblings_are_imported_at_the_top_of_a_module() -> None:
    hidden = [
        f"{module}.py:{line} imports .{name}"
        for module in MODULES
        for name, line, at_top in _sibling_imports(module)
        if not at_top
    ]
    assert hidden == []


def test_each_module_can_be_imported_first_in_a_fresh_interpreter() -> None:
    script = (
        "import importlib, json, sys\n"
        "importlib.import_module(sys.argv[1])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(sys.argv[2] + '.'))))\n"
    )
    for module in MODULES:
        done = subprocess.run(
            [sys.executable, "-c", script, f"{PACKAGE}.{module}", PACKAGE],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{module}: {done.stderr}"
        loaded = json.loads(done.stdout)
        if module in ("common", "draft", "rows"):  # the bottom loads nothing else of the package
            assert loaded == [f"{PACKAGE}.{module}"], loaded
