"""The modules of ``jbcompile`` import each other without a cycle, except through the design registry.

The graph is read from the source, not from a running interpreter: every ``import`` statement of every
module counts — at module level, inside functions and under ``if TYPE_CHECKING:`` alike — so a cycle
cannot hide in a function body or behind a type-only import. Shared types live below the modules that
use them (e.g. ``compiled.Compiled`` under both ``build`` and ``emit``).

The one kind of cycle allowed is the plug-in registry's: ``jbcompile.designs`` loads each design's
package through the ``jbcompile.designs`` entry-point group (``importlib.metadata``), an edge no import
statement shows, and a design's package may use what asks the registry (the project loader, the
evaluator's lookups). Those registry edges are added to the graph below and are the only edges a cycle
may pass through.

A second, stricter graph holds what runs while a module is imported (and the ``__init__`` of every
package an import enters): it has no cycle at all, registry or not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path

import jbcompile
from jbcompile.designs import ENTRY_POINT_GROUP

PACKAGE = Path(jbcompile.__file__).resolve().parent
REGISTRY = "jbcompile.designs"

Graph = dict[str, dict[str, str]]  # module → imported module → the statement that imports it (path:line)


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    """``jbcompile.x.y`` → its file, for every module of the package (a package by its ``__init__``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def executed_imports(node: ast.AST) -> Iterator[ast.AST]:
    """The import statements that run while the module is imported: outside functions, and not under
    ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for statement in child.orelse:
                yield from executed_imports(ast.Module(body=[statement], type_ignores=[]))
        elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from executed_imports(child)


def imported_modules(
    name: str, path: Path, modules: Mapping[str, Path], import_time: bool = False
) -> Iterator[tuple[str, int]]:
    """The package's modules that ``path`` imports anywhere in its body, with the line of each import;
    with ``import_time``, those its import runs: the executed imports, each with the ``__init__`` of
    every package above it that ``path`` is not inside (importing ``a.b.c`` runs ``a/b/__init__.py``)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in executed_imports(tree) if import_time else ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            # ``from pkg import sub`` imports the module ``pkg.sub``; ``from pkg import name``, ``pkg``
            targets = [
                f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names
            ]
        else:
            continue
        if import_time:
            targets += [
                ".".join(target.split(".")[:end])
                for target in list(targets)
                for end in range(1, target.count(".") + 1)
                if not f"{name}.".startswith(".".join(target.split(".")[:end]) + ".")
            ]
        for target in targets:
            if target in modules and target != name:
                yield target, node.lineno


def static_graph(modules: Mapping[str, Path], root: Path = PACKAGE, import_time: bool = False) -> Graph:
    graph: Graph = {name: {} for name in modules}
    for name, path in modules.items():
        for target, line in imported_modules(name, path, modules, import_time):
            graph[name].setdefault(target, f"{path.relative_to(root.parent)}:{line}")
    return graph


def registry_edges(modules: Mapping[str, Path]) -> set[tuple[str, str]]:
    """registry → each built-in design's package, as its entry point names it (the allowed cycles)."""
    targets = {point.module for point in entry_points(group=ENTRY_POINT_GROUP)}
    return {(REGISTRY, target) for target in targets if target in modules}


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def one_cycle(graph: Graph, component: list[str]) -> list[str]:
    """A shortest way round from the component's first module back to it, as the import lines to read."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for target in sorted(graph[module]):
            if target == start:
                way = [*paths[module], start]
                return [f"{a} → {b}  ({graph[a][b]})" for a, b in zip(way, way[1:], strict=False)]
            if target in members and target not in paths:
                paths[target] = [*paths[module], target]
                queue.append(target)
    return component


def without(graph: Graph, edges: set[tuple[str, str]]) -> Graph:
    return {
        a: {b: where for b, where in targets.items() if (a, b) not in edges} for a, targets in graph.items()
    }


def test_the_registry_edges_are_the_only_cycles() -> None:
    modules = module_names()
    assert REGISTRY in modules and len(modules) > 100  # the scan sees the package
    allowed = registry_edges(modules)
    assert len(allowed) >= 3  # the built-in designs are found through their entry points
    graph = static_graph(modules)
    for source, target in allowed:
        assert target not in graph[source], f"{source} imports {target} directly: ask the registry instead"
        graph[source][target] = f"entry point of the {ENTRY_POINT_GROUP} group"
    found = cycles(without(graph, allowed))
    report = [
        "\n  ".join([f"{len(component)} modules: {', '.join(component)}", *one_cycle(graph, component)])
        for component in found
    ]
    assert not found, (
        "import cycles (move the shared types to a module below both, rather than hiding the import in a "
        "function):\n" + "\n".join(report)
    )


def test_importing_any_module_runs_no_cycle() -> None:
    """What runs at import time — imports outside functions and ``TYPE_CHECKING``, and the ``__init__`` of
    each package an import enters — has no cycle at all, so a module imported first never meets another
    one half-initialised (a package's ``__init__`` that re-exports a module above its users is one)."""
    graph = static_graph(module_names(), import_time=True)
    found = cycles(graph)
    report = [
        "\n  ".join([f"{len(component)} modules: {', '.join(component)}", *one_cycle(graph, component)])
        for component in found
    ]
    assert not found, "import cycles at import time:\n" + "\n".join(report)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Function-level, type-only and relative imports are edges, and a cycle of them is found."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n",
        "c.py": "import pkg.a\nclass C: ...\n",
        "d.py": "from . import c\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = static_graph(module_names(package), package)
    assert {name: sorted(targets) for name, targets in graph.items()} == {
        "pkg": [],
        "pkg.a": ["pkg.sub.b"],
        "pkg.c": ["pkg.a"],
        "pkg.d": ["pkg.c"],
        "pkg.sub": [],
        "pkg.sub.b": ["pkg.c"],
    }
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert cycles(without(graph, {("pkg.c", "pkg.a")})) == []
    # at import time: c's import of a runs; b's type-only import of c and a's function-level one do not,
    # and d's import of pkg.sub.b runs pkg/sub/__init__.py first
    (package / "e.py").write_text("from .sub.b import X\n", encoding="utf-8")
    at_import = static_graph(module_names(package), package, import_time=True)
    assert {name: sorted(targets) for name, targets in at_import.items() if targets} == {
        "pkg.c": ["pkg.a"],
        "pkg.d": ["pkg.c"],
        "pkg.e": ["pkg.sub", "pkg.sub.b"],
    }
