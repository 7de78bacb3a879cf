"""Every error the tool can report says what to do about it: a static reading of the code.

A diagnostic is made by ``Diagnostic(...)``, by a check rule's ``Finding(...)``, or by a helper that
passes its own ``hint`` or ``severity`` parameter on to one of those (``row.diagnostic(code, message)``,
``doc.diagnostic(key_path, code, message)`` …; the helpers are found here, not listed). A call whose
severity may be an error — the default, ``Severity.ERROR``, or one only known when it runs — must pass a
hint; a helper's call is judged where the helper is called. What a hint passed on as a value holds is
seen when it runs: every test fails that makes an error without one (``tests/conftest.py``), and the
input fuzz tests feed the readers bad bytes (``tests/test_input_fuzz.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.conftest import HINT_PENDING, PACKAGE, hint_pending

QUIET = {"Severity.WARNING", "Severity.INFO"}


@dataclass(frozen=True)
class Maker:
    """How a callable makes a diagnostic: which parameter gives its hint and which its severity."""

    hint: str | None  # the parameter that becomes the hint (None: none does)
    hint_index: int | None  # that parameter's place among the positional arguments
    severity: str | None  # the parameter that becomes the severity; None: fixed by the maker
    severity_index: int | None
    severity_default: str  # the severity when the caller gives none ("?" when only known at run time)
    kwargs: bool = False  # takes **kwargs on to the diagnostic (hint and severity among them)
    hint_default: bool = False  # the hint parameter has a default hint of its own
    own_hint: bool = False  # the helper writes the hint itself


BASE = {
    "Diagnostic": Maker("hint", 6, "severity", 5, "Severity.ERROR"),
    "Finding": Maker("hint", 4, "severity", 6, "?"),  # the project's settings may make any finding an error
    "Finding.at": Maker("hint", None, "severity", None, "?", kwargs=True),
}


@dataclass(frozen=True)
class Site:
    path: str  # relative to the package
    line: int
    call: str


def _name(call: ast.Call) -> str | None:
    """What a call is known by: a function's or method's name (``Finding.at`` in full: ``at`` says little)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return "Finding.at" if ast.unparse(func) == "Finding.at" else func.attr
    return None


def _modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _positional(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = [*function.args.posonlyargs, *function.args.args]
    return args[1:] if args and args[0].arg in ("self", "cls") else args


def _params(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}


def _defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    positional = [*function.args.posonlyargs, *function.args.args]
    defaults = dict(
        zip(
            [a.arg for a in positional[len(positional) - len(function.args.defaults) :]],
            map(ast.unparse, function.args.defaults),
            strict=True,
        )
    )
    for arg, default in zip(function.args.kwonlyargs, function.args.kw_defaults, strict=True):
        if default is not None:
            defaults[arg.arg] = ast.unparse(default)
    return defaults


Key = tuple[
    str, str | None, str
]  # how a maker is called ("name" or "attr"), the module it is seen from, its name


class Reader:
    """The makers of the package (found until no new helper appears) and the calls that break the rule.

    A method is called as ``x.name(...)``, from anywhere; a public function of a module by its name or
    as ``module.name(...)``, from anywhere; a private or a nested function by its name, in its module.
    """

    def __init__(self, modules: dict[str, ast.Module]):
        self.modules = modules
        self.makers: dict[Key, list[Maker]] = {
            ("name", None, "Diagnostic"): [BASE["Diagnostic"]],
            ("name", None, "Finding"): [BASE["Finding"]],
            ("attr", None, "Finding.at"): [BASE["Finding.at"]],
        }
        self.helpers: dict[ast.AST, Maker] = {}  # each helper function's own reading
        while self._find_helpers():
            pass

    def makers_of(self, module: str, call: ast.Call) -> list[Maker]:
        name = _name(call)
        if name is None:
            return []
        if isinstance(call.func, ast.Name):
            return self.makers.get(("name", module, name), []) + self.makers.get(("name", None, name), [])
        return self.makers.get(("attr", None, name), [])

    def _find_helpers(self) -> bool:
        grown = False
        for module, tree in self.modules.items():
            for parent in ast.walk(tree):
                for function in ast.iter_child_nodes(parent):
                    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                        continue
                    maker = self._helper(module, function)
                    if maker is None:
                        continue
                    self.helpers[function] = maker
                    for key in _keys(module, parent, function.name):
                        if maker not in self.makers.get(key, []):
                            self.makers.setdefault(key, []).append(maker)
                            grown = True
        return grown

    def _helper(self, module: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Maker | None:
        """The maker ``function`` is, when it passes a parameter of its own on as a hint or severity."""
        params = _params(function)
        kwargs = function.args.kwarg.arg if function.args.kwarg else None
        positional = [a.arg for a in _positional(function)]
        for call in self._calls(function):
            for maker in self.makers_of(module, call):
                hint, severity = _given(call, maker, "hint"), _given(call, maker, "severity")
                forwards_kwargs = any(k.arg is None and ast.unparse(k.value) == kwargs for k in call.keywords)
                hint_param = _param(hint, params)
                severity_param = _param(severity, params)
                if not (hint_param or severity_param or forwards_kwargs):
                    continue
                if forwards_kwargs:
                    hint_param = hint_param or "hint"
                    severity_param = severity_param or "severity"
                defaults = _defaults(function)
                default = defaults.get(severity_param or "", "Severity.ERROR")
                if severity_param is None:
                    default = _severity(call, maker)
                hint_default = defaults.get(hint_param or "", "None") not in ("None", "''", '""')
                return Maker(
                    hint_param,
                    positional.index(hint_param) if hint_param in positional else None,
                    severity_param,
                    positional.index(severity_param) if severity_param in positional else None,
                    default,
                    kwargs=forwards_kwargs,
                    hint_default=hint_default,
                    own_hint=hint is not None and hint_param is None and _hinted(call, maker),
                )
        return None

    @staticmethod
    def _calls(function: ast.AST) -> Iterator[ast.Call]:
        """The calls of ``function`` itself (not those of a function defined inside it)."""
        for child in ast.iter_child_nodes(function):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(child, ast.Call):
                yield child
            yield from Reader._calls(child)

    def unexplained(self) -> list[Site]:
        """The calls that may make an error and give no hint (a severity a helper is given is judged
        where the helper is called)."""
        found = []
        for module, tree in self.modules.items():
            scopes: list[tuple[set[str], ast.AST]] = [(set(), tree)]
            for function in _functions(tree):
                helper = self.helpers.get(function)
                scopes.append(({helper.severity} if helper and helper.severity else set(), function))
            for passed_on, scope in scopes:
                for call in self._calls(scope):
                    if any(isinstance(a, ast.Name) and a.id in passed_on for a in _arguments(call)):
                        continue  # a helper's severity: judged where the helper is called
                    for maker in self.makers_of(module, call):
                        if _may_be_error(call, maker) and not _hinted(call, maker):
                            found.append(Site(module, call.lineno, ast.unparse(call)[:120]))
                            break
        return sorted(set(found), key=lambda site: (site.path, site.line))


def _keys(module: str, parent: ast.AST, name: str) -> list[Key]:
    """How a function defined in ``parent`` is called (see :class:`Reader`)."""
    if isinstance(parent, ast.ClassDef):
        return [("attr", None, name)]
    if isinstance(parent, ast.Module) and not name.startswith("_"):
        return [("name", None, name), ("attr", None, name)]
    return [("name", module, name)]


def _given(call: ast.Call, maker: Maker, what: str) -> ast.expr | None:
    """The argument ``call`` passes as the maker's ``hint`` or ``severity`` (None: not given)."""
    name, index = (maker.hint, maker.hint_index) if what == "hint" else (maker.severity, maker.severity_index)
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg == name:
            return keyword.value
    if index is not None and len(call.args) > index and not isinstance(call.args[index], ast.Starred):
        return call.args[index]
    return None


def _param(value: ast.expr | None, params: set[str]) -> str | None:
    return value.id if isinstance(value, ast.Name) and value.id in params else None


def _severity(call: ast.Call, maker: Maker) -> str:
    literal = [a for a in call.args if ast.unparse(a) in (*QUIET, "Severity.ERROR")]
    if literal:  # a severity named outright, wherever it stands
        return ast.unparse(literal[0])
    given = _given(call, maker, "severity") if maker.severity else None
    if given is None:
        return maker.severity_default
    text = ast.unparse(given)
    return text if text in QUIET or text == "Severity.ERROR" else "?"


def _may_be_error(call: ast.Call, maker: Maker) -> bool:
    return _severity(call, maker) not in QUIET


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _hinted(call: ast.Call, maker: Maker) -> bool:
    if maker.own_hint or maker.hint_default:
        return True  # the helper gives its own hint
    if any(
        k.arg == "hint" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in call.keywords
    ):
        return True
    if maker.hint is None:
        return False
    if any(k.arg is None for k in call.keywords):
        return True  # **kwargs: judged where the helper that forwards them is called
    given = _given(call, maker, "hint")
    return given is not None and not (isinstance(given, ast.Constant) and not given.value)


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader(_modules())


def test_every_error_has_a_hint(reader: Reader) -> None:
    missing = [site for site in reader.unexplained() if not hint_pending(site.path)]
    assert not missing, "errors without a hint (pass hint= saying what to do):\n" + "\n".join(
        f"compiler/jbcompile/{s.path}:{s.line}: {s.call}" for s in missing
    )


def test_a_helper_passes_its_hint_on(reader: Reader) -> None:
    """A helper that takes a ``hint`` gives it to the diagnostic it makes (else its callers' hints are
    lost, and the reading above would count them)."""
    dropped = [
        f"{function.name} (line {function.lineno})"
        for function, maker in reader.helpers.items()
        if "hint" in _params(function) and maker.hint != "hint"
    ]
    assert not dropped, f"helpers that take a hint and drop it: {dropped}"


def test_the_helpers_are_found(reader: Reader) -> None:
    """The reading knows the helpers: a row's, a loaded document's, a check finding's."""
    for module, name in [
        ("designs/bbq/importers/common.py", "diagnostic"),
        ("loader.py", "diagnostic"),
        ("loader.py", "_problem"),
        ("jsonl.py", "_problem"),
    ]:
        keys = [("name", None, name), ("name", module, name), ("attr", None, name)]
        assert any(reader.makers.get(key) for key in keys), name


def test_pending_files_still_lack_hints(reader: Reader) -> None:
    """A path on the pending list that now explains every error leaves the list."""
    sites = {site.path for site in reader.unexplained()}
    done = sorted(p for p in HINT_PENDING if not any(path == p or path.startswith(p + "/") for path in sites))
    assert not done, (
        f"every error of {done} has a hint now: remove them from HINT_PENDING in tests/conftest.py"
    )
