"""The adversarial run of issue 23: every command of the CLI, driven the way a careless or hostile user (or
machine) drives it, with the guarantees of docs/guarantees.md checked after each case.

    python benchmarks/adversarial.py [--only CLASS] [--keep] [--jobs N]

Each case runs the real CLI in a fresh process in a scratch folder under /tmp, and checks: a bad input
ends non-zero with a coded diagnostic and no traceback; no input byte changes; no partial output and no
stray file of the tool's own once a command (or the rerun after a kill) has finished; no secret is
printed or written; a command never exits 0 with a wrong output. It prints one line per failure and a
table ``class → cases tried, failures``; it exits 1 when a case failed. Not part of the test suite (it
takes a few minutes); ``tests/test_adversarial_driver.py`` runs one case of it.

Full disks are a tmpfs of a few hundred KiB when this process may mount one (root in a container),
else a file size limit (``RLIMIT_FSIZE``, which the CLI turns into ``EFBIG``). Read-only folders are a
``chmod 555`` (run as the ``nobody`` user when this process is root, whom permissions do not stop).
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import contextlib
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "compiler"))

SOURCES = REPO / "tests" / "eval" / "fixtures" / "sources"
KEY = "sk-adversarial-0123456789abcdef"
USER, PASSWORD = "alice", "hunter2-very-secret"
SECRETS = (KEY, PASSWORD, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
CODED = re.compile(r"\b[A-Z]{1,3}\d{3}\b")
TOOL_OWN = ".jbcompile-"

CLASSES = (
    "overlap",
    "concurrent",
    "kill",
    "read-only",
    "full disk",
    "special files",
    "unicode/yaml",
    "json traps",
    "altered builds",
    "servers",
)


@dataclass
class Outcome:
    rc: int
    out: str
    timed_out: bool = False

    def coded(self) -> bool:
        return bool(CODED.search(self.out))


@dataclass
class Case:
    cls: str
    name: str
    run: Callable[[Path], list[str]]  # returns the broken guarantees (empty: the case holds)
    problems: list[str] = field(default_factory=list)


class World:
    """What every case starts from, made once: the sources, a build, two runs, release files, a server."""

    def __init__(self, root: Path):
        from tests.eval.fake_api import FakeAPI

        self.root = root
        self.api = FakeAPI().__enter__()
        self.sources = root / "world" / "sources"
        shutil.copytree(SOURCES, self.sources)
        self.build = root / "world" / "build"
        self.other_build = root / "world" / "other-build"
        self.runs = root / "world" / "runs"
        for what in (self.build,):
            result = jb("build", "-s", self.sources, "--out", what, "--format", "parquet,jsonl")
            assert result.rc == 0, result.out
        self.run1 = self.runs / "one"
        result = jb(*self.eval_args(self.build, self.run1))
        assert result.rc == 0, result.out
        self.run2 = self.runs / "two"  # another model under the same protocol: the runs compare
        result = jb(*self.eval_args(self.build, self.run2, model="fake-2"))
        assert result.rc == 0, result.out
        # a second benchmark (other texts): same name and card, other rows
        other = root / "world" / "other-sources"
        shutil.copytree(SOURCES, other)
        for path in (other / "templates").rglob("*.yaml"):
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace("。", "！", 3), encoding="utf-8")
        result = jb("build", "-s", other, "--out", self.other_build)
        assert result.rc == 0, result.out
        self.releases = root / "world" / "releases"
        self.releases.mkdir()
        from tests.importers import conftest as bbq
        from tests.importers.test_jubaku import release_rows
        from tests.importers.test_sobaco import problems

        self.bbq_jsonl = bbq.write_jsonl(self.releases / "Age.jsonl", bbq.generate_rows(bbq.EN_SPECS, "en"))
        self.bbq_csvs = bbq.write_template_csvs(self.releases / "templates", bbq.EN_SPECS)
        self.sobaco = self.releases / "sobaco.json"
        self.sobaco.write_text(json.dumps(problems(), ensure_ascii=False), encoding="utf-8")
        self.jubaku = bbq.write_jsonl(self.releases / "jubaku.jsonl", release_rows())

    def eval_args(
        self, dataset: Path, out: Path, *extra: Any, url: str | None = None, model: str = "fake"
    ) -> list[Any]:
        return [
            "eval", "--backend", "openai", "--base-url", (url or self.api.url) + "/v1", "--model", model,
            "--dataset", dataset, "--out", out, "--scoring", "generate", "--config", "lite",
            "--max-attempts", "2", "--timeout", "3", "--quiet", *extra,
        ]  # fmt: skip

    def imports(self, tmp: Path) -> dict[str, tuple[list[Any], Path]]:
        """Each import's command line (without --out) and its input, copied under ``tmp``."""
        copies = {}
        for name, source in (
            ("bbq-jsonl", self.bbq_jsonl),
            ("bbq-templates", self.bbq_csvs),
            ("sobaco-json", self.sobaco),
            ("jubaku-jsonl", self.jubaku),
        ):
            target = tmp / "in" / name / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
            copies[name] = (["import", name, target], target)
        return copies

    def close(self) -> None:
        self.api.__exit__()


WORLD: World


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS",)}
    base |= {
        "PYTHONPATH": str(REPO / "compiler"),
        "NO_COLOR": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "OPENAI_API_KEY": KEY,
        "TOKENIZERS_PARALLELISM": "false",
    }
    return base | extra


def jb(
    *args: Any,
    cwd: Path | None = None,
    timeout: float = 120,
    extra_env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Outcome:
    """The CLI in a fresh process: its exit code and its stdout and stderr together."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jbcompile", *map(str, args)],
            capture_output=True,
            text=True,
            errors="replace",
            cwd=cwd,
            env=env(**(extra_env or {})),
            timeout=timeout,
            preexec_fn=preexec,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as stopped:
        text = (stopped.stdout or b"").decode(errors="replace") if isinstance(stopped.stdout, bytes) else ""
        return Outcome(-1, text, timed_out=True)
    return Outcome(done.returncode, done.stdout + done.stderr)


def start(*args: Any, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "jbcompile", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        cwd=cwd,
        env=env(),
        stdin=subprocess.DEVNULL,
    )


# ------------------------------------------------------------------------------------------- the checks


def snapshot(*roots: Path) -> dict[str, str]:
    """Every path under the roots (links as links) with a digest of its bytes."""
    found: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() or root.is_symlink() else []
        for folder, dirs, names in os.walk(root):
            paths += [Path(folder, name) for name in [*dirs, *names]]
        for path in paths:
            if path.is_symlink():
                found[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_dir():
                found[str(path)] = "folder"
            else:
                found[str(path)] = "special"
    return found


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def strays(*roots: Path) -> list[str]:
    return [
        str(Path(folder, name))
        for root in roots
        if root.exists()
        for folder, dirs, names in os.walk(root)
        for name in [*dirs, *names]
        if TOOL_OWN in name
    ]


def leaked(text: str, *roots: Path) -> list[str]:
    found = [f"printed {s[:6]}…" for s in SECRETS if s in text]
    for root in roots:
        for path in (p for p in root.rglob("*") if p.is_file()) if root.exists() else ():
            data = path.read_bytes()
            found += [f"{path.name} holds {s[:6]}…" for s in SECRETS if s.encode() in data]
    return found


def sane(result: Outcome) -> list[str]:
    """No traceback, no hang; a failure is a coded diagnostic."""
    problems = []
    if result.timed_out:
        problems.append("hung (timed out)")
    if "Traceback (most recent call last)" in result.out:
        problems.append("traceback: " + result.out.strip().splitlines()[-1][:160])
    if result.rc not in (0, -1) and not result.coded():
        problems.append(f"exit {result.rc} without a coded diagnostic: {result.out.strip()[-200:]!r}")
    return problems


def refused(result: Outcome, *codes: str) -> list[str]:
    """A bad input: non-zero, coded, no traceback (and one of ``codes`` when given)."""
    problems = sane(result)
    if result.rc == 0:
        problems.append("exit 0 on a bad input: " + result.out.strip()[-200:])
    elif codes and not any(code in result.out for code in codes):
        problems.append(f"expected {'/'.join(codes)}, got: {result.out.strip()[-240:]!r}")
    return problems


def guarded(tmp: Path, inputs: list[Path], act: Callable[[], list[str]], outputs: list[Path]) -> list[str]:
    """``act``'s problems, plus any input byte changed and any stray file left in or beside the outputs."""
    before = snapshot(*inputs)
    problems = act()
    problems += [f"input changed: {p}" for p in changed(before, snapshot(*inputs))]
    problems += [f"stray: {p}" for p in strays(*{o.parent for o in outputs}, *inputs)]
    return problems


def copy_sources(tmp: Path, name: str = "sources") -> Path:
    target = tmp / name
    shutil.copytree(WORLD.sources, target)
    return target


def copy_build(tmp: Path, name: str = "build") -> Path:
    target = tmp / name
    shutil.copytree(WORLD.build, target)
    return target


def predictions(tmp: Path) -> Path:
    target = tmp / "preds" / "predictions.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy2(WORLD.run1 / "predictions.jsonl", target)
    return target


# ----------------------------------------------------------------------------------------- the cases


def overlap_cases() -> list[Case]:
    cases: list[Case] = []

    def place(relation: str, other: Path) -> Path:
        return {"is": other, "holds": other.parent, "inside": other / "out"}[relation]

    for relation in ("is", "holds", "inside"):

        def build(tmp: Path, relation: str = relation) -> list[str]:
            src = copy_sources(tmp / "w")
            out = place(relation, src)
            return guarded(tmp, [src], lambda: refused(jb("build", "-s", src, "--out", out)), [src])

        def score(tmp: Path, relation: str = relation) -> list[str]:
            preds = predictions(tmp)
            out = place(relation, preds)
            return guarded(
                tmp, [preds.parent], lambda: refused(jb("score", preds, "--out", out, "--overwrite")), []
            )

        def score_dataset(tmp: Path, relation: str = relation) -> list[str]:
            preds, build = predictions(tmp), copy_build(tmp)
            out = place(relation, build)
            act = lambda: refused(jb("score", preds, "--dataset", build, "--out", out, "--overwrite"))  # noqa: E731
            return guarded(tmp, [preds.parent, build], act, [])

        def evaluate(tmp: Path, relation: str = relation) -> list[str]:
            build = copy_build(tmp)
            out = place(relation, build)
            return guarded(tmp, [build], lambda: refused(jb(*WORLD.eval_args(build, out, "--overwrite"))), [])

        def compare(tmp: Path, relation: str = relation) -> list[str]:
            a, b = tmp / "runs" / "a", tmp / "runs2" / "b"
            shutil.copytree(WORLD.run1, a)
            shutil.copytree(WORLD.run2, b)
            out = place(relation, a)
            return guarded(tmp, [a, b], lambda: refused(jb("compare", a, b, "--out", out)), [])

        for name in ("build", "score", "score_dataset", "evaluate", "compare"):
            cases.append(Case("overlap", f"{name} --out {relation} input", locals()[name]))

        for importer in ("bbq-jsonl", "bbq-templates", "sobaco-json", "jubaku-jsonl"):

            def imp(tmp: Path, importer: str = importer, relation: str = relation) -> list[str]:
                args, source = WORLD.imports(tmp)[importer]
                out = place(relation, source)
                return guarded(tmp, [source], lambda: refused(jb(*args, "--out", out)), [])

            cases.append(Case("overlap", f"import {importer} --out {relation} input", imp))

    for importer in ("bbq-jsonl", "sobaco-json", "jubaku-jsonl"):

        def report(tmp: Path, importer: str = importer) -> list[str]:
            args, source = WORLD.imports(tmp)[importer]
            act = lambda: refused(jb(*args, "--out", tmp / "o", "--report", source))  # noqa: E731
            return guarded(tmp, [source], act, [tmp / "o"]) + (
                ["--out left behind"] if (tmp / "o").exists() else []
            )

        cases.append(Case("overlap", f"import {importer} --report is its input", report))

    def report_is_out(tmp: Path) -> list[str]:
        args, source = WORLD.imports(tmp)["jubaku-jsonl"]
        return guarded(
            tmp, [source], lambda: refused(jb(*args, "--out", tmp / "o", "--report", tmp / "o")), []
        )

    def build_through_link(tmp: Path) -> list[str]:
        src = copy_sources(tmp / "w")
        (tmp / "link").symlink_to(src)
        return guarded(tmp, [src], lambda: refused(jb("build", "-s", src, "--out", tmp / "link")), [])

    def init_over_sources(tmp: Path) -> list[str]:
        src = copy_sources(tmp / "w")
        return guarded(tmp, [src], lambda: refused(jb("init", src.parent)), [])

    cases += [
        Case("overlap", "import --report is its --out", report_is_out),
        Case("overlap", "build --out a link to the sources", build_through_link),
        Case("overlap", "init into an existing benchmark", init_over_sources),
    ]
    return cases


def concurrent_cases() -> list[Case]:
    def two(
        tmp: Path, first: list[Any], second: list[Any], out: Path, inputs: list[Path], rule: str
    ) -> list[str]:
        before = snapshot(*inputs)
        a, b = start(*first), start(*second)
        outs = [p.communicate(timeout=180)[0] for p in (a, b)]
        results = [Outcome(p.returncode, o) for p, o in zip((a, b), outs, strict=True)]
        problems = [p for r in results for p in sane(r)]
        codes = [r.rc for r in results]
        if rule == "one wins" and sorted(codes)[0] != 0:
            problems.append(f"neither succeeded: {codes}")
        if rule == "one wins" and codes.count(0) == 2:
            problems.append("both exit 0: one result silently replaced the other")
        if rule == "both" and codes != [0, 0]:
            problems.append(f"exit codes {codes}")
        problems += [f"input changed: {p}" for p in changed(before, snapshot(*inputs))]
        problems += [f"stray: {p}" for p in strays(out.parent)]
        return problems

    def scores(tmp: Path) -> list[str]:
        p1 = predictions(tmp)
        p2 = tmp / "other" / "predictions.jsonl"
        p2.parent.mkdir()
        lines = p1.read_text(encoding="utf-8").splitlines()
        p2.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")
        out = tmp / "out"
        return two(tmp, ["score", p1, "--out", out], ["score", p2, "--out", out], out, [p1, p2], "one wins")

    def evals(tmp: Path) -> list[str]:
        out = tmp / "out"
        first = WORLD.eval_args(WORLD.build, out)
        second = WORLD.eval_args(WORLD.build, out, "--seed", "7", "--bootstrap", "50")
        return two(tmp, first, second, out, [WORLD.build], "one wins")

    def imports(tmp: Path) -> list[str]:
        copies = WORLD.imports(tmp)
        (a, sa), (b, sb) = copies["jubaku-jsonl"], copies["sobaco-json"]
        out = tmp / "out"
        return two(tmp, [*a, "--out", out], [*b, "--out", out], out, [sa, sb], "one wins")

    def builds(tmp: Path) -> list[str]:
        src = copy_sources(tmp)
        out = tmp / "out"
        problems = two(
            tmp, ["build", "-s", src, "--out", out], ["build", "-s", src, "--out", out], out, [src], "both"
        )
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        return problems + ([] if manifest else ["no manifest"])

    def fixes(tmp: Path) -> list[str]:
        src = fixable_sources(tmp)
        a, b = start("check", "--fix", "-s", src), start("check", "--fix", "-s", src)
        results = [Outcome(p.wait(timeout=180), p.communicate()[0]) for p in (a, b)]
        problems = [p for r in results for p in sane(r)]
        problems += [f"stray: {p}" for p in strays(src)]
        again = jb("check", "-s", src)
        return problems + (["the fix was not whole"] if "JA" in again.out and "fixable" in again.out else [])

    def compares(tmp: Path) -> list[str]:
        out = tmp / "out"
        a = ["compare", WORLD.run1, WORLD.run2, "--out", out]
        b = ["compare", WORLD.run2, WORLD.run1, "--out", out]
        return two(tmp, a, b, out, [WORLD.run1, WORLD.run2], "both")

    return [
        Case("concurrent", "two scores of different files into one --out", scores),
        Case("concurrent", "two evals with different settings into one --out", evals),
        Case("concurrent", "two imports into one --out", imports),
        Case("concurrent", "two builds into one --out", builds),
        Case("concurrent", "two check --fix on one sources folder", fixes),
        Case("concurrent", "two compares into one --out", compares),
    ]


def fixable_sources(tmp: Path) -> Path:
    """Sources with something ``check --fix`` rewrites in many files (full-width digits, trailing spaces)."""
    src = copy_sources(tmp)
    for path in src.rglob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("      - ", "      -  ", 2).replace("ja: ", "ja: 　", 2), encoding="utf-8"
        )
    return src


def kill_cases(rng: random.Random) -> list[Case]:
    cases: list[Case] = []

    def killed(tmp: Path, args: list[Any], inputs: list[Path], outs: list[Path], delay: float) -> list[str]:
        before = snapshot(*inputs)
        process = start(*args)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.communicate()
        rerun = jb(*args)
        problems = sane(rerun)
        if rerun.rc not in (0, 1):
            problems.append(f"rerun exit {rerun.rc}: {rerun.out.strip()[-240:]}")
        problems += [f"input changed: {p}" for p in changed(before, snapshot(*inputs))]
        problems += [f"stray after rerun: {p}" for p in strays(*{o.parent for o in outs}, *inputs)]
        return problems

    commands: dict[str, Callable[[Path], tuple[list[Any], list[Path], list[Path]]]] = {
        "build": lambda t: (lambda s: (["build", "-s", s, "--out", t / "out"], [s], [t / "out"]))(
            copy_sources(t)
        ),
        "check --fix": lambda t: (lambda s: (["check", "--fix", "-s", s], [], [s / "x"]))(fixable_sources(t)),
        "score": lambda t: (lambda p: (["score", p, "--out", t / "out"], [p], [t / "out"]))(predictions(t)),
        "score --dataset": lambda t: (
            lambda p: (
                ["score", p, "--dataset", WORLD.build, "--out", t / "out"],
                [p, WORLD.build],
                [t / "out"],
            )
        )(predictions(t)),
        "eval": lambda t: (WORLD.eval_args(WORLD.build, t / "out"), [WORLD.build], [t / "out"]),
        "compare": lambda t: (
            ["compare", WORLD.run1, WORLD.run2, "--out", t / "out"],
            [WORLD.runs],
            [t / "out"],
        ),
        "import jubaku-jsonl": lambda t: (
            lambda c: ([*c[0], "--out", t / "out", "--report", t / "r.json"], [c[1]], [t / "out"])
        )(WORLD.imports(t)["jubaku-jsonl"]),
        "import bbq-jsonl": lambda t: (lambda c: ([*c[0], "--out", t / "out"], [c[1]], [t / "out"]))(
            WORLD.imports(t)["bbq-jsonl"]
        ),
        "init": lambda t: (["init", t / "new"], [], [t / "new" / "x"]),
    }
    for name, make in commands.items():
        for _ in range(2):
            delay = rng.uniform(0.6, 3.5)

            def run(tmp: Path, make: Any = make, delay: float = delay) -> list[str]:
                args, inputs, outs = make(tmp)
                return killed(tmp, args, inputs, outs, delay)

            cases.append(Case("kill", f"{name} killed after {delay:.2f}s, rerun", run))
    return cases


def read_only(folder: Path) -> bool:
    """Make ``folder`` read-only: a read-only bind mount where this process may mount (root, whom
    permissions do not stop), else ``chmod``. True when it is a mount (to unmount)."""
    done = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if done.returncode == 0:
        done = subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True)
        if done.returncode == 0:
            return True
        subprocess.run(["umount", str(folder)], capture_output=True)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return False


def readonly_cases() -> list[Case]:
    cases: list[Case] = []

    def locked(tmp: Path) -> Path:
        folder = tmp / "ro"
        folder.mkdir()
        return folder

    def attempt(
        tmp: Path, make: Callable[[Path, Path], tuple[list[Any], list[Path]]], must_fail: bool
    ) -> list[str]:
        tmp.chmod(0o755)
        ro = locked(tmp)
        args, inputs = make(tmp, ro)
        for path in [tmp, *tmp.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        mounted = read_only(ro)
        try:
            before = snapshot(*inputs, ro)
            result = jb(*args)
            problems = refused(result) if must_fail else sane(result)
            problems += [f"changed: {p}" for p in changed(before, snapshot(*inputs, ro))]
            problems += [f"stray: {p}" for p in strays(tmp)]
        finally:
            if mounted:
                subprocess.run(["umount", str(ro)], capture_output=True)
            ro.chmod(0o755)
        return problems

    def mk(kind: str) -> Callable[[Path, Path], tuple[list[Any], list[Path]]]:
        def make(tmp: Path, ro: Path) -> tuple[list[Any], list[Path]]:
            if kind == "build":
                return ["build", "-s", copy_sources(tmp), "--out", ro / "out"], []
            if kind == "build over a read-only build":
                shutil.copytree(WORLD.build, ro / "out")
                return ["build", "-s", copy_sources(tmp), "--out", ro / "out"], []
            if kind == "score":
                return ["score", predictions(tmp), "--out", ro / "out"], []
            if kind == "eval":
                return WORLD.eval_args(copy_build(tmp), ro / "out"), []
            if kind == "compare":
                a, b = copy_build(tmp, "a"), None
                del a, b
                shutil.copytree(WORLD.run1, tmp / "r1")
                shutil.copytree(WORLD.run2, tmp / "r2")
                return ["compare", tmp / "r1", tmp / "r2", "--out", ro / "out"], []
            if kind == "import":
                args, _ = WORLD.imports(tmp)["jubaku-jsonl"]
                return [*args, "--out", ro / "out"], []
            if kind == "init":
                return ["init", ro / "new"], []
            if kind == "check --fix":
                src = fixable_sources(ro)
                return ["check", "--fix", "-s", src], []
            if kind == "check (read-only sources)":
                return ["check", "-s", copy_sources(ro)], []
            if kind == "build from read-only sources":
                return ["build", "-s", copy_sources(ro), "--out", tmp / "out"], []
            if kind == "eval on a read-only build":
                build = ro / "build"
                shutil.copytree(WORLD.build, build)
                return WORLD.eval_args(build, tmp / "out"), []
            raise AssertionError(kind)

        return make

    for kind, must_fail in (
        ("build", True),
        ("build over a read-only build", True),
        ("score", True),
        ("eval", True),
        ("compare", True),
        ("import", True),
        ("init", True),
        ("check --fix", True),
        ("check (read-only sources)", False),
        ("build from read-only sources", False),
        ("eval on a read-only build", False),
    ):
        cases.append(Case("read-only", kind, lambda tmp, k=kind, m=must_fail: attempt(tmp, mk(k), m)))
    return cases


class TinyDisk:
    """A folder with little room: a tmpfs when this process may mount one, else a file size limit."""

    def __init__(self, where: Path, size_kib: int):
        self.where = where
        self.size = size_kib
        where.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(where)], capture_output=True
        )
        self.mounted = done.returncode == 0

    def preexec(self) -> Callable[[], None] | None:
        if self.mounted:
            return None
        limit = self.size * 1024
        return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.where)], capture_output=True)


def disk_cases() -> list[Case]:
    cases: list[Case] = []

    def full(tmp: Path, make: Callable[[Path, Path], tuple[list[Any], list[Path]]], size: int) -> list[str]:
        disk = TinyDisk(tmp / "disk", size)
        try:
            args, inputs = make(tmp, disk.where)
            reference = tmp / "reference"
            reference.mkdir()
            whole = jb(*[str(a).replace(str(disk.where), str(reference)) for a in args])
            expected = {p.relative_to(reference) for p in reference.rglob("*")}
            before = snapshot(*inputs)
            result = jb(*args, preexec=disk.preexec())
            problems = sane(result)
            if result.rc == 0:  # it fitted: then all of it must be there
                got = {p.relative_to(disk.where) for p in disk.where.rglob("*")}
                problems += (
                    [f"exit 0 without {p}" for p in sorted(expected - got)[:3]] if whole.rc == 0 else []
                )
            if "nothing was written" in result.out.lower():
                written = [p for p in disk.where.rglob("*") if p.is_file()]
                problems += [f"says nothing was written, but kept {p.name}" for p in written]
            problems += [f"input changed: {p}" for p in changed(before, snapshot(*inputs))]
            problems += [f"stray: {p}" for p in strays(disk.where, *inputs)]
            out = disk.where / "out"
            if out.exists() and result.rc != 0 and not any(out.iterdir()):
                problems.append("an empty --out left behind")
            return problems
        finally:
            disk.close()

    makers: dict[str, Callable[[Path, Path], tuple[list[Any], list[Path]]]] = {
        "build": lambda t, d: (["build", "-s", WORLD.sources, "--out", d / "out"], [WORLD.sources]),
        "score": lambda t, d: (["score", WORLD.run1 / "predictions.jsonl", "--out", d / "out"], [WORLD.run1]),
        "eval": lambda t, d: (WORLD.eval_args(WORLD.build, d / "out"), [WORLD.build]),
        "compare": lambda t, d: (["compare", WORLD.run1, WORLD.run2, "--out", d / "out"], [WORLD.runs]),
        "import jubaku-jsonl": lambda t, d: ([*WORLD.imports(t)["jubaku-jsonl"][0], "--out", d / "out"], []),
        "import bbq-jsonl": lambda t, d: ([*WORLD.imports(t)["bbq-jsonl"][0], "--out", d / "out"], []),
        "init": lambda t, d: (["init", d / "new"], []),
    }
    for name, make in makers.items():
        for size in (16, 96):
            cases.append(
                Case("full disk", f"{name} into {size} KiB", lambda t, m=make, s=size: full(t, m, s))
            )

    def fix_full(tmp: Path) -> list[str]:
        disk = TinyDisk(tmp / "disk", 1024)
        try:
            src = fixable_sources(disk.where)
            filler = disk.where / "filler"
            # leave about 40 KiB free: the staged copy of the sources does not fit
            with filler.open("wb") as handle, contextlib.suppress(OSError):
                handle.write(b"\0" * (1024 * 1024 - 40 * 1024 - du(src)))
            before = snapshot(src)
            result = jb("check", "--fix", "-s", src, preexec=disk.preexec())
            problems = sane(result)
            after = snapshot(src)
            if result.rc != 0 and changed(before, after):
                problems.append(f"a failed --fix changed {len(changed(before, after))} files")
            problems += [f"stray: {p}" for p in strays(src)]
            return problems
        finally:
            disk.close()

    cases.append(Case("full disk", "check --fix on a nearly full disk", fix_full))
    return cases


def du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def special_cases() -> list[Case]:
    cases: list[Case] = []

    def fifo(tmp: Path, name: str = "fifo") -> Path:
        path = tmp / name
        os.mkfifo(path)
        return path

    def loop(tmp: Path, name: str = "loop") -> Path:
        path = tmp / name
        path.symlink_to(path)
        return path

    def folder(tmp: Path, name: str = "dir.jsonl") -> Path:
        path = tmp / name
        path.mkdir()
        return path

    specials: dict[str, Callable[[Path], Path]] = {
        "a FIFO": fifo,
        "/dev/zero": lambda t: Path("/dev/zero"),
        "a symlink loop": loop,
        "a folder": folder,
    }
    for what, make in specials.items():
        for name, line in (
            ("import bbq-jsonl", lambda p, t: ["import", "bbq-jsonl", p, "--out", t / "o"]),
            ("import sobaco-json", lambda p, t: ["import", "sobaco-json", p, "--out", t / "o"]),
            ("import jubaku-jsonl", lambda p, t: ["import", "jubaku-jsonl", p, "--out", t / "o"]),
            ("import bbq-templates --names-from", lambda p, t: [
                "import", "bbq-templates", WORLD.bbq_csvs, "--out", t / "o", "--names-from", p]),
            ("score", lambda p, t: ["score", p, "--out", t / "o"]),
            ("eval --prompt-file", lambda p, t: [*WORLD.eval_args(WORLD.build, t / "o"), "--prompt-file", p]),
            ("diff", lambda p, t: ["diff", WORLD.build, p]),
        ):  # fmt: skip

            def run(tmp: Path, make: Any = make, line: Any = line) -> list[str]:
                path = make(tmp)
                result = jb(*line(path, tmp), timeout=30)
                problems = refused(result)
                problems += ["--out left behind"] if (tmp / "o").exists() else []
                return problems

            cases.append(Case("special files", f"{name} given {what}", run))

    def in_sources(tmp: Path, kind: str, command: list[str]) -> list[str]:
        src = copy_sources(tmp)
        target = next((src / "vocab").glob("*.yaml"))
        target.unlink()
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "loop":
            target.symlink_to(target)
        elif kind == "dev":
            target.symlink_to("/dev/zero")
        else:
            target.mkdir()
        before = snapshot(src)
        result = jb(*command, "-s", src, *(["--out", tmp / "o"] if command == ["build"] else []), timeout=30)
        problems = refused(result)
        problems += [f"changed {p}" for p in changed(before, snapshot(src))]
        return problems + (["--out left behind"] if (tmp / "o").exists() else [])

    for kind in ("fifo", "loop", "dev", "dir"):
        for command in (
            ["build"],
            ["check"],
            ["check", "--fix"],
            ["stats"],
            ["audit"],
            ["translate", "--dry-run"],
        ):
            cases.append(
                Case(
                    "special files",
                    f"{' '.join(command)} with a vocab file that is {kind}",
                    lambda t, k=kind, c=command: in_sources(t, k, c),
                )
            )

    def cards_dev_zero(tmp: Path) -> list[str]:
        cards = tmp / "cards"
        cards.mkdir()
        (cards / "README.md.j2").symlink_to("/dev/zero")
        result = jb("build", "-s", WORLD.sources, "--cards", cards, "--out", tmp / "o", timeout=30)
        return refused(result) + (["--out left behind"] if (tmp / "o").exists() else [])

    def data_file_fifo(tmp: Path) -> list[str]:
        build = copy_build(tmp)
        data = next((build / "data" / "lite").glob("*.parquet"))
        data.unlink()
        os.mkfifo(data)
        return refused(jb(*WORLD.eval_args(build, tmp / "o"), timeout=30))

    cases += [
        Case("special files", "build --cards with a template that is /dev/zero", cards_dev_zero),
        Case("special files", "eval of a build whose data file is a FIFO", data_file_fifo),
    ]
    return cases


def yaml_cases() -> list[Case]:
    """Traps in the YAML sources, through build, check and stats."""
    traps: dict[str, tuple[Callable[[str], str], str]] = {
        # name: (how the vocab text is spoilt, "refuse" | "either" | "warn")
        "NUL in a filler": (lambda t: t.replace("- 七十代の男性", '- "七十代の\\0男性"', 1), "lint"),
        "a literal NUL byte": (lambda t: _in_first_value(t, "\x00"), "refuse"),
        "a bidi override": (lambda t: _in_first_value(t, "\u202e"), "lint"),
        "a bidi isolate": (lambda t: _in_first_value(t, "\u2066"), "lint"),
        "a zero-width space": (lambda t: _in_first_value(t, "\u200b"), "warn"),
        "a zero-width joiner": (lambda t: _in_first_value(t, "\u200d"), "warn"),
        "a BOM at the start": (lambda t: "\ufeff" + t, "either"),
        "a BOM inside a value": (lambda t: _in_first_value(t, "\ufeff"), "warn"),
        "duplicate keys": (lambda t: t + "\n" + t.split("\n", 1)[0] + "\n", "refuse"),
        "an alias bomb": (lambda t: t + "\n" + _BOMB, "refuse"),
        "a huge int": (lambda t: t + "\nhuge: " + "9" * 5000 + "\n", "refuse"),
        "tabs for indentation": (lambda t: t.replace("\n  ", "\n\t", 3), "refuse"),
        "invalid UTF-8": (lambda t: t + "\n# \udcff\n", "refuse"),
        "a 10 MB value": (lambda t: t + "\nbig: " + "あ" * 3_500_000 + "\n", "refuse"),
        "CRLF line ends": (lambda t: t.replace("\n", "\r\n"), "either"),
        "deep nesting": (lambda t: t + "\ndeep: " + "[" * 200 + "]" * 200 + "\n", "refuse"),
    }
    cases: list[Case] = []
    for trap, (spoil, expect) in traps.items():
        for command in (["build"], ["check"], ["stats"]):

            def run(
                tmp: Path, spoil: Any = spoil, expect: str = expect, command: list[str] = command
            ) -> list[str]:
                src = copy_sources(tmp)
                target = src / "vocab" / "Age.yaml"
                text = target.read_text(encoding="utf-8")
                data = spoil(text).encode("utf-8", errors="surrogateescape")
                target.write_bytes(data)
                before = snapshot(src)
                out = ["--out", tmp / "o"] if command == ["build"] else []
                result = jb(*command, "-s", src, *out, timeout=60)
                if expect == "refuse" or (expect == "lint" and command != ["stats"]):
                    problems = refused(result)  # stats counts the rows, and says what check says
                elif expect in ("lint", "warn") and command != ["build"]:
                    code = "JA120" if expect == "lint" else "JA121"
                    problems = sane(result) + ([] if code in result.out else [f"no {code} for the character"])
                    problems += ["printed the character itself"] if _UNSEEN.search(result.out) else []
                else:
                    problems = sane(result)
                problems += [f"changed {p}" for p in changed(before, snapshot(src))]
                if result.rc != 0 and (tmp / "o").exists():
                    problems.append("--out left behind")
                return problems

            cases.append(Case("unicode/yaml", f"{' '.join(command)}: {trap}", run))
    return cases


_BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 12)]
)


_UNSEEN = re.compile("[\u200b\u200d\u202a-\u202e\u2066-\u2069]")  # what the CLI writes out as <U+…>


def _in_first_value(text: str, char: str) -> str:
    """``char`` inside the first Japanese value of a vocab file."""
    index = text.index("      - ") + 8
    return text[: index + 1] + char + text[index + 1 :]


def json_cases() -> list[Case]:
    """Traps in every JSON the tool reads: predictions, releases, run records."""
    cases: list[Case] = []
    line_traps: dict[str, tuple[Callable[[str], str], str]] = {
        "a duplicate key": (
            lambda line: line[:-1] + ', "pred": ' + ("1" if '"pred": 0' in line else "0") + "}",
            "refuse",
        ),
        "a BOM before the first line": (lambda line: "\ufeff" + line, "either"),
        "a NUL byte": (lambda line: line.replace('"', '"\x00', 1), "refuse"),
        "a huge int prediction": (
            lambda line: re.sub(r'"pred": -?\d+', '"pred": ' + "9" * 400, line),
            "refuse",
        ),
        "a float 1e400": (lambda line: re.sub(r'"pred": -?\d+', '"pred": 1e400', line), "refuse"),
        "NaN": (lambda line: re.sub(r'"pred": -?\d+', '"pred": NaN', line), "refuse"),
        "a prediction of true": (lambda line: re.sub(r'"pred": -?\d+', '"pred": true', line), "refuse"),
        "deep nesting": (lambda line: line[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "refuse"),
        "invalid UTF-8": (lambda line: line.replace("}", ', "x": "\udcff"}', 1), "refuse"),
        "a line cut short": (lambda line: line[: len(line) // 2], "refuse"),
    }
    for trap, (spoil, expect) in line_traps.items():

        def score(tmp: Path, spoil: Any = spoil, expect: str = expect) -> list[str]:
            preds = predictions(tmp)
            lines = preds.read_text(encoding="utf-8").splitlines()
            lines[0] = spoil(lines[0])
            preds.write_bytes(("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape"))

            def act() -> list[str]:
                judge = refused if expect == "refuse" else sane
                return judge(jb("score", preds, "--dataset", WORLD.build, "--out", tmp / "o"))

            problems = guarded(tmp, [preds], act, [tmp / "o"])
            if expect == "refuse" and (tmp / "o").exists():
                problems.append("--out left behind")
            return problems

        cases.append(Case("json traps", f"score: predictions with {trap}", score))

    for importer in ("jubaku-jsonl", "bbq-jsonl"):
        for trap in ("a duplicate key", "a NUL byte", "deep nesting", "invalid UTF-8"):

            def imp(tmp: Path, importer: str = importer, trap: str = trap) -> list[str]:
                args, source = WORLD.imports(tmp)[importer]
                lines = source.read_text(encoding="utf-8").splitlines()
                first = json.loads(lines[0])
                key = next(iter(first))
                if trap == "a duplicate key":
                    lines[0] = lines[0][:-1] + f", {json.dumps(key)}: {json.dumps(first[key])}" + "}"
                else:
                    lines[0] = line_traps[trap][0](lines[0])
                source.write_bytes(("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape"))
                return guarded(tmp, [source], lambda: refused(jb(*args, "--out", tmp / "o")), [tmp / "o"])

            cases.append(Case("json traps", f"import {importer}: {trap}", imp))

    def sobaco_duplicate(tmp: Path) -> list[str]:
        args, source = WORLD.imports(tmp)["sobaco-json"]
        text = source.read_text(encoding="utf-8")
        source.write_text(
            text.replace("{", '{"id": 1, ', 1).replace('{"id": 1, ', '{"id": 1, "id": 2, ', 1),
            encoding="utf-8",
        )
        return guarded(tmp, [source], lambda: refused(jb(*args, "--out", tmp / "o")), [tmp / "o"])

    def run_json_duplicate(tmp: Path) -> list[str]:
        a = tmp / "a"
        shutil.copytree(WORLD.run1, a)
        path = a / "results.json"
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("{", '{"schema_version": 0, ', 1), encoding="utf-8")
        return guarded(
            tmp, [a], lambda: refused(jb("compare", a, WORLD.run2, "--out", tmp / "o")), [tmp / "o"]
        )

    def manifest_duplicate(tmp: Path) -> list[str]:
        build = copy_build(tmp)
        path = build / "manifest.json"
        text = path.read_text(encoding="utf-8")
        key = next(iter(json.loads(text)))
        path.write_text(text.replace("{", "{" + json.dumps(key) + ": null, ", 1), encoding="utf-8")
        return guarded(tmp, [build], lambda: refused(jb(*WORLD.eval_args(build, tmp / "o"))), [tmp / "o"])

    cases += [
        Case("json traps", "import sobaco-json: a duplicate key", sobaco_duplicate),
        Case("json traps", "compare: results.json with a duplicate key", run_json_duplicate),
        Case("json traps", "eval: manifest.json with a duplicate key", manifest_duplicate),
    ]
    return cases


def altered_cases() -> list[Case]:
    import pyarrow.parquet as pq

    def alter(build: Path, how: str) -> None:
        data = next((build / "data" / "lite").glob("*.parquet"))
        table = pq.read_table(data)
        if how == "rotate":
            labels = table.column("label").to_pylist()
            table = table.set_column(
                table.schema.get_field_index("label"), "label", [[(x + 1) % 3 for x in labels]]
            )
        else:
            table = table.slice(1)
        pq.write_table(table, data)

    cases: list[Case] = []
    for how in ("rotate", "remove"):
        what = "labels rotated" if how == "rotate" else "a row removed"
        commands: dict[str, Callable[[Path, Path], list[Any]]] = {
            "eval": lambda b, t: WORLD.eval_args(b, t / "o"),
            "score --dataset": lambda b, t: [
                "score", WORLD.run1 / "predictions.jsonl", "--dataset", b, "--config", "lite",
                "--out", t / "o"],
            "audit BUILD": lambda b, t: ["audit", b],
            "publish --dry-run": lambda b, t: ["publish", "--dry-run", "-s", WORLD.sources, "--build", b],
        }  # fmt: skip
        for name, line in commands.items():

            def run(tmp: Path, how: str = how, line: Any = line) -> list[str]:
                build = copy_build(tmp)
                alter(build, how)
                problems = refused(jb(*line(build, tmp)))
                return problems + (["--out left behind"] if (tmp / "o").exists() else [])

            cases.append(Case("altered builds", f"{name}: {what}", run))

    def swapped_manifests(tmp: Path) -> list[str]:
        a, b = copy_build(tmp, "a"), tmp / "b"
        shutil.copytree(WORLD.other_build, b)
        shutil.copy2(b / "manifest.json", a / "manifest.json")
        return refused(jb(*WORLD.eval_args(a, tmp / "o")))

    def same_name_second_folder(tmp: Path) -> list[str]:
        place = tmp / "build"
        shutil.copytree(WORLD.build, place)
        first = jb(*WORLD.eval_args(place, tmp / "r1"))
        shutil.rmtree(place)
        shutil.copytree(WORLD.other_build, place)
        second = jb(*WORLD.eval_args(place, tmp / "r2"))
        problems = sane(first) + sane(second)
        if second.rc != 0:
            return problems + [f"second eval exit {second.rc}"]
        import pyarrow.parquet as pq

        golds = {
            r["example_id"]: r
            for r in pq.read_table(next((place / "data" / "lite").glob("*.parquet"))).to_pylist()
        }
        rows = [
            json.loads(line)
            for line in (tmp / "r2" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        wrong = [
            r
            for r in rows
            if r.get("example_id") in golds
            and r.get("context") not in (None, golds[r["example_id"]].get("context"))
        ]
        return problems + ([f"{len(wrong)} rows of the earlier folder"] if wrong else [])

    def diff_altered(tmp: Path, how: str, side: int) -> list[str]:
        """An alteration after the build is refused, as eval refuses it — never shown as a change."""
        build = copy_build(tmp)
        alter(build, how)
        sides = [WORLD.build, build] if side else [build, WORLD.build]
        return refused(jb("diff", *sides, "--format", "json"), "P005", "P016")

    cases += [
        Case("altered builds", "eval: manifests swapped between two builds", swapped_manifests),
        Case("altered builds", "eval: a second folder with the same name and card", same_name_second_folder),
    ]
    for how in ("rotate", "remove"):
        for side, name in enumerate(("old", "new")):
            check = lambda t, h=how, s=side: diff_altered(t, h, s)  # noqa: E731
            cases.append(Case("altered builds", f"diff: {how} in the {name} build", check))
    return cases


def server_cases() -> list[Case]:
    from tests.eval.fake_api import FakeAPI, FakeState

    cases: list[Case] = []

    def faulty(tmp: Path, fault: str, url_user: bool = False, extra: tuple[str, ...] = ()) -> list[str]:
        state = FakeState(sticky=fault, slow_seconds=6.0)
        if fault in ("null_message", "no_content", "content_int"):
            extra = (*extra, "--chat")
        with FakeAPI(state) as api:
            url = api.url
            if url_user:
                url = url.replace("http://", f"http://{USER}:{PASSWORD}@")
            result = jb(*WORLD.eval_args(WORLD.build, tmp / "o", *extra, url=url), timeout=90)
        problems = refused(result)
        problems += leaked(result.out, tmp / "o")
        predictions_file = tmp / "o" / "predictions.jsonl"
        if predictions_file.exists() and predictions_file.read_text(encoding="utf-8").strip():
            problems.append("a faulty reply was scored")
        return problems

    for fault in (
        "empty_choices", "no_choices", "null_message", "no_content", "content_int", "usage_string",
        "usage_not_object", "error_in_200", "not_json", "truncated", "json_null", "drop_mid_body",
        "server_error", "drop", "slow", "auth", "echo_headers", "quota",
    ):  # fmt: skip
        cases.append(Case("servers", f"eval: every reply is {fault}", lambda t, f=fault: faulty(t, f)))
    for fault in ("auth", "echo_headers", "echo_in_reply"):

        def with_userinfo(tmp: Path, fault: str = fault) -> list[str]:
            problems = faulty(tmp, fault, url_user=True)
            if fault == "echo_in_reply":  # a 200 answer: may succeed, but must not keep the secrets
                problems = [p for p in problems if "exit 0" not in p and "scored" not in p]
            return problems

        cases.append(Case("servers", f"eval: {fault} with user:password in the base URL", with_userinfo))

    def one_bad_reply(tmp: Path) -> list[str]:
        state = FakeState(faults=["empty_choices", "usage_string", "not_json"])
        with FakeAPI(state) as api:
            result = jb(*WORLD.eval_args(WORLD.build, tmp / "o", url=api.url))
        problems = sane(result)
        if result.rc != 0:
            return problems + [f"three faults among retries ended the run: {result.out.strip()[-200:]}"]
        rows = (tmp / "o" / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
        want = len((WORLD.run1 / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
        return problems + ([] if len(rows) == want else [f"{len(rows)} predictions of {want}"])

    def anthropic(tmp: Path, fault: str) -> list[str]:
        state = FakeState(sticky=fault)
        with FakeAPI(state) as api:
            args = WORLD.eval_args(WORLD.build, tmp / "o", url=api.url)
            args[args.index("openai")] = "anthropic"
            args[args.index(api.url + "/v1")] = api.url
            result = jb(*args, extra_env={"ANTHROPIC_API_KEY": KEY})
        return refused(result) + leaked(result.out, tmp / "o")

    cases.append(Case("servers", "eval: a few faults among good replies are retried", one_bad_reply))
    for fault in ("anthropic_no_content", "anthropic_content_string", "anthropic_error_type", "auth"):
        cases.append(
            Case("servers", f"eval --backend anthropic: {fault}", lambda t, f=fault: anthropic(t, f))
        )

    def verify_offline(tmp: Path) -> list[str]:
        return refused(jb("verify", "--repo", "someone/else", "--revision", "v1.0.0", "-s", WORLD.sources))

    def translate_no_server(tmp: Path) -> list[str]:
        src = copy_sources(tmp)
        before = snapshot(src)
        url = f"http://{USER}:{PASSWORD}@127.0.0.1:9/"
        result = jb(
            "translate", "-s", src, "--server-url", url, timeout=60, extra_env={"DEEPL_AUTH_KEY": KEY}
        )
        problems = sane(result) + leaked(result.out)
        return problems + [f"changed {p}" for p in changed(before, snapshot(src))]

    cases += [
        Case("servers", "verify with no Hub", verify_offline),
        Case("servers", "translate against a server that is not there", translate_no_server),
    ]
    return cases


# ------------------------------------------------------------------------------------ export (issue 23)

HARNESSES = ("lm-eval", "inspect")
MARKER = "jbcompile-export.json"


def export_args(harness: str, build: Path, out: Path, *extra: Any) -> list[Any]:
    return ["export", harness, build, "--out", out, *(extra or ("--local",))]


def whole_export(out: Path, harness: str) -> list[str]:
    """An export that exit 0 left: its marker names the harness, every file is what the harness
    reads (task YAML that parses, Python that compiles to the expected tasks), nothing of the tool's own."""
    import ast

    import yaml

    marker = out / MARKER
    if not marker.is_file():
        return [f"exit 0 without {MARKER}"]
    record = json.loads(marker.read_text(encoding="utf-8"))
    problems = [] if record.get("harness") == harness else [f"marker says {record.get('harness')}"]
    problems += [f"stray: {p}" for p in strays(out)]

    class Tagged(yaml.SafeLoader):
        pass

    Tagged.add_multi_constructor("!", lambda loader, suffix, node: suffix)
    files = [p for p in out.rglob("*") if p.is_file()]
    if harness == "lm-eval":
        tasks = [p for p in files if p.suffix == ".yaml"]
        for path in tasks:
            document = yaml.load(path.read_text(encoding="utf-8"), Loader=Tagged)  # noqa: S506
            if not isinstance(document, dict) or not ({"task", "group"} & set(document)):
                problems.append(f"{path.name} is not a task")
        problems += [] if tasks else ["no task file"]
    modules = [p for p in files if p.suffix == ".py"]
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [n for n in tree.body if isinstance(n, ast.Expr) and not isinstance(n.value, ast.Constant)]
        problems += [f"{path.name} runs a statement at import: {ast.unparse(calls[0])[:80]}"] if calls else []
    if harness == "inspect" and not modules:
        problems.append("no task module")
    return problems


def exported(result: Outcome, out: Path, harness: str) -> list[str]:
    problems = sane(result)
    if result.rc != 0:
        return problems + [f"exit {result.rc}: {result.out.strip()[-200:]}"]
    return problems + whole_export(out, harness)


def export_cases() -> list[Case]:
    import pyarrow.parquet as pq

    cases: list[Case] = []

    def refuses(
        tmp: Path, harness: str, build: Path, out: Path, inputs: list[Path], *codes: str
    ) -> list[str]:
        existed = out.exists() or out.is_symlink()
        act = lambda: refused(jb(*export_args(harness, build, out), cwd=tmp), *codes)  # noqa: E731
        beside = out if out != tmp else tmp / "out"  # strays are looked for beside --out, never above tmp
        problems = guarded(tmp, [*inputs, *([out] if existed else [])], act, [beside])
        return problems + (
            ["--out left behind"] if not existed and (out.exists() or out.is_symlink()) else []
        )

    def manifest(build: Path, change: Callable[[dict[str, Any]], Any]) -> None:
        path = build / "manifest.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data), encoding="utf-8")

    # where --out lies: the build, around it, in it, a file, a link, a special file, someone's folder
    def outs(tmp: Path, build: Path) -> dict[str, Path]:
        made = {
            "is the build": build,
            "holds the build": build.parent,
            "lies inside the build": build / "tasks",
            "lies in the build's data": build / "data" / "lite" / "tasks",
        }
        file = tmp / "file.txt"
        file.write_text("mine\n", encoding="utf-8")
        made["is a file"] = file
        (tmp / "link-to-file").symlink_to(file)
        made["is a link to a file"] = tmp / "link-to-file"
        (tmp / "link-to-build").symlink_to(build)
        made["is a link to the build"] = tmp / "link-to-build"
        (tmp / "loop").symlink_to(tmp / "loop")
        made["is a symlink loop"] = tmp / "loop"
        os.mkfifo(tmp / "fifo")
        made["is a FIFO"] = tmp / "fifo"
        made["is /dev/null"] = Path("/dev/null")
        theirs = tmp / "theirs"
        theirs.mkdir()
        (theirs / "notes.txt").write_text("mine\n", encoding="utf-8")
        made["is a non-empty folder of someone's"] = theirs
        made["is the working folder"] = tmp
        return made

    for relation in (
        "is the build", "holds the build", "lies inside the build", "lies in the build's data", "is a file",
        "is a link to a file", "is a link to the build", "is a symlink loop", "is a FIFO", "is /dev/null",
        "is a non-empty folder of someone's", "is the working folder",
    ):  # fmt: skip
        for harness in HARNESSES:

            def run(tmp: Path, relation: str = relation, harness: str = harness) -> list[str]:
                build = copy_build(tmp / "w")
                out = outs(tmp, build)[relation]
                inputs = [build] if out != Path("/dev/null") else [build]
                return refuses(tmp, harness, build, out, inputs, "EX003", "CL002", "F002")

            cls = (
                "special files"
                if relation in ("is a symlink loop", "is a FIFO", "is /dev/null")
                else "overlap"
            )
            cases.append(Case(cls, f"export {harness} --out {relation}", run))

    def over_earlier(tmp: Path) -> list[str]:
        out = tmp / "tasks"
        first = jb(*export_args("inspect", WORLD.build, out))
        second = jb(*export_args("lm-eval", WORLD.build, out))
        return (
            sane(first)
            + exported(second, out, "lm-eval")
            + ([f"an inspect file kept: {p.name}" for p in out.glob("*.py")])
        )

    cases.append(
        Case("overlap", "export lm-eval --out an earlier inspect export (replaced whole)", over_earlier)
    )

    # the build: missing, a file, special files in its place or in it, huge or hostile files
    def bad_build(tmp: Path, how: str, harness: str) -> list[str]:
        build = copy_build(tmp / "w")
        extra: tuple[str, ...] = ()
        if how == "missing":
            shutil.rmtree(build)
        elif how == "a file":
            shutil.rmtree(build)
            build.write_text("not a build\n", encoding="utf-8")
        elif how == "a FIFO":
            shutil.rmtree(build)
            os.mkfifo(build)
        elif how == "/dev/zero":
            shutil.rmtree(build)
            build = Path("/dev/zero")
        elif how == "a symlink loop":
            shutil.rmtree(build)
            build.symlink_to(build)
        elif how == "manifest.json a FIFO":
            (build / "manifest.json").unlink()
            os.mkfifo(build / "manifest.json")
        elif how == "manifest.json /dev/zero":
            (build / "manifest.json").unlink()
            (build / "manifest.json").symlink_to("/dev/zero")
        elif how == "manifest.json a folder":
            (build / "manifest.json").unlink()
            (build / "manifest.json").mkdir()
        elif how == "manifest.json a line over 64 MiB":
            manifest(build, lambda m: m.update(padding="x" * (65 << 20)))
        elif how == "manifest.json with a duplicate key":
            path = build / "manifest.json"
            path.write_text(path.read_text(encoding="utf-8").replace("{", '{"version": "9.9.9", ', 1))
        elif how == "manifest.json not an object":
            (build / "manifest.json").write_text("[1, 2]\n", encoding="utf-8")
        elif how == "manifest.json cut short":
            path = build / "manifest.json"
            path.write_bytes(path.read_bytes()[:40])
        elif how == "a data file a FIFO":
            data = next((build / "data" / "lite").glob("*.parquet"))
            data.unlink()
            os.mkfifo(data)
        elif how == "a data file /dev/zero":
            data = next((build / "data" / "lite").glob("*.parquet"))
            data.unlink()
            data.symlink_to("/dev/zero")
        elif how == "croissant.json /dev/zero (Hub form)":
            (build / "croissant.json").unlink()
            (build / "croissant.json").symlink_to("/dev/zero")
            extra = ("--revision", "v1.0.0")
        elif how == "a dataset name that closes a docstring":
            manifest(build, lambda m: m.update(dataset='x"""\nimport os; os.system("touch PWNED")\n"""'))
        elif how == "a version with a line break":
            manifest(build, lambda m: m.update(version="1.0.0\nimport os"))
        elif how == "a bidi override in the dataset name":
            manifest(build, lambda m: m.update(dataset="eval\u202efixture"))
        elif how == "a config of an unknown design":
            manifest(build, lambda m: m["configs"]["lite"].update(kind="nope"))
        elif how == "a config name with ../":
            manifest(build, lambda m: m["configs"].update({"../../x": m["configs"]["lite"]}))
        elif how == "configs not a table":
            manifest(build, lambda m: m.update(configs=[1]))
        elif how == "rows of a config a string":
            manifest(build, lambda m: m["configs"]["lite"].update(rows="many"))
        out = tmp / "out"
        inputs = [build] if build.exists() and build != Path("/dev/zero") and not build.is_symlink() else []
        before = snapshot(*inputs)
        result = jb(*export_args(harness, build, out, *extra), cwd=tmp, timeout=60)
        problems = refused(result)
        problems += [f"input changed: {p}" for p in changed(before, snapshot(*inputs))]
        problems += ["--out left behind"] if out.exists() else []
        problems += ["wrote PWNED"] if (tmp / "PWNED").exists() else []
        return problems

    special = (
        "missing", "a file", "a FIFO", "/dev/zero", "a symlink loop", "manifest.json a FIFO",
        "manifest.json /dev/zero", "manifest.json a folder", "a data file a FIFO", "a data file /dev/zero",
        "croissant.json /dev/zero (Hub form)",
    )  # fmt: skip
    traps = (
        "manifest.json a line over 64 MiB", "manifest.json with a duplicate key",
        "manifest.json not an object", "manifest.json cut short", "a dataset name that closes a docstring",
        "a version with a line break", "a config of an unknown design", "a config name with ../",
        "configs not a table", "rows of a config a string",
    )  # fmt: skip
    for how in (*special, *traps, "a bidi override in the dataset name"):
        cls = "special files" if how in special else "json traps" if how in traps else "unicode/yaml"
        for harness in HARNESSES:
            cases.append(
                Case(
                    cls, f"export {harness}: the build {how}", lambda t, h=how, x=harness: bad_build(t, h, x)
                )
            )

    # altered after the build
    def altered(tmp: Path, how: str, harness: str, form: tuple[str, ...]) -> list[str]:
        build = copy_build(tmp)
        data = next((build / "data" / "lite").glob("*.parquet"))
        table = pq.read_table(data)
        if how == "labels rotated":
            labels = [(x + 1) % 3 for x in table.column("label").to_pylist()]
            table = table.set_column(table.schema.get_field_index("label"), "label", [labels])
        else:
            table = table.slice(1)
        pq.write_table(table, data)
        out = tmp / "out"
        result = jb(*export_args(harness, build, out, *form))
        return refused(result, "P005", "P016") + (["--out left behind"] if out.exists() else [])

    for how in ("labels rotated", "a row removed"):
        for harness in HARNESSES:
            for form in (("--local",), ("--repo", "my-lab/x")):
                cases.append(
                    Case(
                        "altered builds",
                        f"export {harness} {form[0]}: {how}",
                        lambda t, h=how, x=harness, f=form: altered(t, h, x, f),
                    )
                )

    # read-only, full disk, kill, two at once
    def read_only_out(tmp: Path, harness: str) -> list[str]:
        ro = tmp / "ro"
        ro.mkdir()
        mounted = read_only(ro)
        try:
            result = jb(*export_args(harness, WORLD.build, ro / "out"))
            return refused(result) + [f"stray: {p}" for p in strays(tmp)]
        finally:
            if mounted:
                subprocess.run(["umount", str(ro)], capture_output=True)
            ro.chmod(0o755)

    def read_only_build(tmp: Path, harness: str) -> list[str]:
        ro = tmp / "ro"
        ro.mkdir()
        shutil.copytree(WORLD.build, ro / "build")
        mounted = read_only(ro)
        try:
            return exported(jb(*export_args(harness, ro / "build", tmp / "out")), tmp / "out", harness)
        finally:
            if mounted:
                subprocess.run(["umount", str(ro)], capture_output=True)
            for path in [ro, *ro.rglob("*")]:
                path.chmod(0o755)

    def full_disk(tmp: Path, harness: str, size: int) -> list[str]:
        disk = TinyDisk(tmp / "disk", size)
        try:
            out = disk.where / "out"
            result = jb(*export_args(harness, WORLD.build, out), preexec=disk.preexec())
            if result.rc == 0:
                return sane(result) + whole_export(out, harness)
            problems = refused(result)
            problems += ["--out left behind"] if out.exists() else []
            return problems + [f"stray: {p}" for p in strays(disk.where)]
        finally:
            disk.close()

    def killed(tmp: Path, harness: str, delay: float) -> list[str]:
        out = tmp / "out"
        args = export_args(harness, WORLD.build, out)
        process = start(*args)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.communicate()
        partial = out.exists() and not (out / MARKER).is_file()
        rerun = jb(*args)
        problems = exported(rerun, out, harness)
        return problems + (["a partial --out after the kill"] if partial else [])

    def two_at_once(tmp: Path) -> list[str]:
        out = tmp / "out"
        a = start(*export_args("lm-eval", WORLD.build, out))
        b = start(*export_args("inspect", WORLD.build, out))
        results = [Outcome(p.wait(timeout=120), p.communicate()[0]) for p in (a, b)]
        problems = [p for r in results for p in sane(r)]
        if not any(r.rc == 0 for r in results):
            return problems + [f"neither succeeded: {[r.rc for r in results]}"]
        record = json.loads((out / MARKER).read_text(encoding="utf-8"))
        problems += whole_export(out, record["harness"])
        other = "inspect" if record["harness"] == "lm-eval" else "lm-eval"
        mixed = (
            any(out.glob("*.py")) if other == "inspect" else any(out.rglob("*.yaml"))
        )  # lm-eval: */utils.py
        return problems + (["files of both exports in one folder"] if mixed else [])

    rng = random.Random(2300)
    for harness in HARNESSES:
        cases += [
            Case(
                "read-only",
                f"export {harness} into a read-only folder",
                lambda t, h=harness: read_only_out(t, h),
            ),
            Case(
                "read-only",
                f"export {harness} of a read-only build",
                lambda t, h=harness: read_only_build(t, h),
            ),
        ]
        for size in (16, 96):
            cases.append(
                Case(
                    "full disk",
                    f"export {harness} into {size} KiB",
                    lambda t, h=harness, s=size: full_disk(t, h, s),
                )
            )
        for _ in range(2):
            delay = rng.uniform(0.5, 3.0)
            cases.append(
                Case(
                    "kill",
                    f"export {harness} killed after {delay:.2f}s, rerun",
                    lambda t, h=harness, d=delay: killed(t, h, d),
                )
            )
    cases.append(Case("concurrent", "export lm-eval and inspect into one --out at once", two_at_once))
    return cases


def all_cases(seed: int) -> list[Case]:
    rng = random.Random(seed)
    return [
        *overlap_cases(),
        *concurrent_cases(),
        *kill_cases(rng),
        *readonly_cases(),
        *disk_cases(),
        *special_cases(),
        *yaml_cases(),
        *json_cases(),
        *altered_cases(),
        *server_cases(),
        *export_cases(),
    ]


def run_case(case: Case, root: Path, index: int) -> Case:
    tmp = root / f"case-{index:03d}"
    tmp.mkdir(parents=True)
    try:
        case.problems = case.run(tmp)
    except Exception as error:  # noqa: BLE001 - a broken case is reported, not fatal
        case.problems = [f"the case itself failed: {type(error).__name__}: {error}"]
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", action="append", help="run only this class (repeatable), or a case name part"
    )
    parser.add_argument("--jobs", type=int, default=3, help="cases run at once (default 3)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--root", type=Path, default=Path("/tmp/jbcompile-adversarial"))
    args = parser.parse_args(argv)
    global WORLD
    root: Path = args.root
    if root.exists():
        subprocess.run(["chmod", "-R", "u+w", str(root)], capture_output=True)
        shutil.rmtree(root)
    root.mkdir(parents=True)
    root.chmod(0o755)
    started = time.monotonic()
    WORLD = World(root)
    try:
        cases = all_cases(args.seed)
        if args.only:
            cases = [c for c in cases if c.cls in args.only or any(o in c.name for o in args.only)]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            done = list(pool.map(lambda ic: run_case(ic[1], root, ic[0]), enumerate(cases)))
    finally:
        WORLD.close()
    failed = [c for c in done if c.problems]
    for case in failed:
        print(f"FAIL [{case.cls}] {case.name}")
        for problem in case.problems[:4]:
            print(f"     {problem}")
    print()
    print(f"{'class':<16} {'tried':>6} {'failed':>7}")
    for cls in CLASSES:
        tried = [c for c in done if c.cls == cls]
        if tried:
            print(f"{cls:<16} {len(tried):>6} {sum(1 for c in tried if c.problems):>7}")
    print(f"{'total':<16} {len(done):>6} {len(failed):>7}   ({time.monotonic() - started:.0f} s)")
    if not args.keep:
        subprocess.run(["chmod", "-R", "u+w", str(root)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
