"""The wheels `benchmarks/gpu_check.py` needs on a GPU machine that has only torch, transformers and
accelerate, and no network.

    python benchmarks/gpu_wheels.py [--dest .whl] [--python-version 3.12] [--platform TAG ...]

It builds jbcompile's own wheel and downloads, as binary wheels for the GPU machine's Python and platform,
the libraries the check imports that an install of those three is not sure to hold (:data:`CARRIED` and
what they need in turn), each at the version installed here, where the tests ran. It then prints each
wheel's size, their total beside the working tree's (the two travel together, 64 MiB at most), and the
command to run on the GPU machine:

    python3 -m pip install --no-index --no-deps --target /tmp/site DEST/*.whl
    PYTHONPATH=/tmp/site python3 benchmarks/gpu_check.py --out gpu_check.json

DEST must be new or empty (nothing of yours is overwritten); the wheels are gathered in a temporary
folder beside it and moved there only when all of them came. `tests/eval/test_gpu_check.py` runs the
check's CPU path in a fresh process and fails when it imports a library outside what this carries and
what the three bring.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
# What the GPU machine is assumed to have (issue 25 §4), with whatever their installs require.
BASE = ("torch", "transformers", "accelerate")
# jbcompile's own requirements that the check imports and that none of BASE requires directly: an
# install of the three may bring them too (transformers' typer brings pydantic on some versions), but
# nothing says it must.
CARRIED = ("pyarrow", "pydantic")
# Binary wheels of the usual x86-64 Linux GPU machines (pip matches each tag exactly).
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
LIMIT_BYTES = 64 * 2**20  # the working tree and the wheels together


def requirements(name: str) -> set[str]:
    """The distributions ``name`` (installed here) requires on this machine, extras left out."""
    needed: set[str] = set()
    for line in metadata.requires(name) or ():
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            needed.add(canonicalize_name(requirement.name))
    return needed


def closure(names: Iterable[str], stop: Iterable[str] = ()) -> set[str]:
    """``names`` and everything they require, transitively, without entering ``stop``."""
    stopped: set[str] = {canonicalize_name(name) for name in stop}
    found: set[str] = set()
    todo: list[str] = [canonicalize_name(name) for name in names]
    while todo:
        name = todo.pop()
        if name in found or name in stopped:
            continue
        found.add(name)
        todo.extend(requirements(name))
    return found


def provided() -> set[str]:
    """What an install of :data:`BASE` is sure to hold: the three and what they require directly."""
    direct: set[str] = {canonicalize_name(name) for name in BASE}
    for name in BASE:
        direct |= requirements(name)
    return direct


def wheels_to_carry() -> dict[str, str]:
    """Distribution → the version installed here, for :data:`CARRIED` and what they need beyond BASE's."""
    return {name: metadata.version(name) for name in sorted(closure(CARRIED, stop=provided()))}


def tree_bytes() -> int:
    """The size of the files git tracks: the working tree that travels with the wheels."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    return sum(
        (ROOT / name.decode()).stat().st_size for name in listed if name and (ROOT / name.decode()).is_file()
    )


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pip {args[0]} failed:\n{done.stderr.strip()[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=ROOT / ".whl", help="a new or empty folder")
    parser.add_argument(
        "--python-version",
        default=f"{sys.version_info.major}.{sys.version_info.minor}",
        help="the GPU machine's Python, e.g. 3.12 (default: this one's)",
    )
    parser.add_argument(
        "--platform", action="append", help=f"a wheel platform tag (default: {', '.join(PLATFORMS)})"
    )
    args = parser.parse_args(argv)
    dest: Path = args.dest
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        print(f"{dest}: not a new or empty folder; name another with --dest", file=sys.stderr)
        return 2
    carried = wheels_to_carry()
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".wheels-", dir=dest.parent))
    try:
        _pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(scratch), str(ROOT))
        tags = [f"--platform={tag}" for tag in args.platform or PLATFORMS]
        pins = [f"{name}=={version}" for name, version in carried.items()]
        _pip(
            "download", "--quiet", "--no-deps", "--only-binary=:all:", "--implementation=cp",
            f"--python-version={args.python_version}", *tags, "--dest", str(scratch), *pins,
        )  # fmt: skip
        if dest.exists():
            dest.rmdir()  # empty, checked above
        scratch.rename(dest)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    wheels = sorted(dest.glob("*.whl"))
    total = sum(wheel.stat().st_size for wheel in wheels)
    for wheel in wheels:
        print(f"{wheel.stat().st_size / 2**20:8.1f} MiB  {wheel.name}")
    tree = tree_bytes()
    mib = 2**20
    print(
        f"wheels {total / mib:.1f} MiB + working tree {tree / mib:.1f} MiB = {(total + tree) / mib:.1f} MiB"
    )
    if total + tree > LIMIT_BYTES:
        print(f"over the {LIMIT_BYTES // 2**20} MiB that may travel", file=sys.stderr)
        return 1
    print("on the GPU machine, in the working tree's root:")
    shown = dest.resolve().relative_to(ROOT) if dest.resolve().is_relative_to(ROOT) else dest.resolve()
    print(f"  python3 -m pip install --no-index --no-deps --target /tmp/site {shown}/*.whl")
    print("  PYTHONPATH=/tmp/site python3 benchmarks/gpu_check.py --out gpu_check.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
