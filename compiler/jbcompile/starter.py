"""`jbcompile init`: a new benchmark that builds and checks clean, to start from.

The core writes ``sources/dataset.yaml`` (every required field, commented, with the placeholders that
`publish` refuses) and ``sources/CHANGELOG.md``; the design writes the rest — one template and the
vocabulary it needs (:meth:`jbcompile.designs.spec.Design.starter`). Nothing existing is overwritten:
when any of the files is there already, nothing is written at all.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import placeholders
from .changelog import CHANGELOG, FIRST_VERSION, first_changelog
from .diagnostics import Diagnostic, DiagnosticError
from .paths import DATASET_FILE, SOURCES_FOLDER

# One wording per line of dataset.yaml, so that a maintainer can edit the list as it stands.
_DATASET = """\
# What the dataset is and how it is published: one sources folder is one dataset and one Hub repository.
# Every field: README.md ("The source format"), docs/publish.md (releases); `jbcompile schema dataset`
# gives editors validation and completion. `jbcompile init` wrote the TODO placeholders: the benchmark
# builds with them, `jbcompile publish` refuses them.
name: {name}                  # short machine name (letters, digits, _ . -): the Hub repository's name
pretty_name: {pretty_name}    # the title of the dataset card
version: {version}                 # semantic version of the rows; a published version is never overwritten
license: {license}                # TODO: the data's license id as the Hub knows it, e.g. cc-by-4.0
language: [ja]
description: >-
  {description}
terms_of_use: >-
  {terms}
citation: null                # BibTeX of the paper or the dataset, once there is one (the card shows it)
homepage: null
# hub_repo: ORG/NAME          # where `jbcompile publish` releases it (or pass --repo)
seed: {seed}                     # every random choice of the build is keyed by it and by stable ids
card:                         # the card's prose; publish warns while uses, risks or citation are missing
  uses: null                  # what the dataset is for
  out_of_scope: null          # uses it is not fit for
  creation: null              # who wrote the items, from what, and how
  review: null                # how the items are reviewed
  risks: null                 # bias, risks and limitations
  recommendations: null       # what users should do about them
# The wordings of the "cannot be determined" option (at least 8; each row picks one by a seeded hash).
unknown_options:
{unknown_options}
# The categories the templates and vocab files may use.
categories: [{categories}]
"""


def benchmark_name(folder: Path) -> str:
    """A dataset name from the folder's name (``My Bench`` → ``My-Bench``); ``my-benchmark`` for none."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(folder).resolve().name).strip("-._")
    return cleaned or "my-benchmark"


def starter_files(design_name: str, name: str) -> dict[str, str]:
    """Every file of a new benchmark of the design ``design_name``, by path under its folder."""
    from .designs import get_design
    from .importers.draft import DEFAULT_UNKNOWN

    starter = get_design(design_name).starter()
    if starter is None:
        raise ValueError(f"the design {design_name!r} has no starter")
    dataset = _DATASET.format(
        name=name,
        pretty_name=name,
        version=FIRST_VERSION,
        license=placeholders.LICENSE,
        description=placeholders.STARTER_DESCRIPTION,
        terms=placeholders.STARTER_TERMS,
        seed=1,
        unknown_options="\n".join(f"  - {wording}" for wording in DEFAULT_UNKNOWN["ja"]),
        categories=", ".join(starter.categories),
    )
    files = {
        f"{SOURCES_FOLDER}/{DATASET_FILE}": dataset,
        f"{SOURCES_FOLDER}/{CHANGELOG}": first_changelog(
            f"started with `jbcompile init --kind {design_name}`"
        ),
    }
    files.update({f"{SOURCES_FOLDER}/{path}": text for path, text in starter.files.items()})
    return files


def starter_designs() -> list[str]:
    """The designs `init --kind` offers: those with a starter."""
    from .designs import all_designs

    return [design.name for design in all_designs() if design.starter() is not None]


def init_benchmark(folder: Path, design_name: str) -> list[Path]:
    """Write a new benchmark into ``folder`` (its sources in ``folder/sources``); return the files.

    The sources folder is claimed first (:func:`jbcompile.outputs.claim`: a second ``init`` into it
    waits, then finds the first one's files); any of the files there already refuses the whole (CL007),
    writing nothing; the files are then written in one commit, all of them or none.
    """
    from .outputs import claim

    folder = Path(folder)
    files = {folder / path: text for path, text in starter_files(design_name, benchmark_name(folder)).items()}
    with claim(folder / SOURCES_FOLDER, "init") as place:
        # a file of the new benchmark, or a file where one of its folders must go
        places = {
            path for target in files for path in (target, *target.parents) if path.is_relative_to(folder)
        }
        taken = sorted(
            str(path)
            for path in places
            if (path in files and (path.exists() or path.is_symlink()))
            or (path not in files and path.exists() and not path.is_dir())
        )
        if taken:
            shown = ", ".join(taken[:5]) + (f" and {len(taken) - 5} more" if len(taken) > 5 else "")
            raise DiagnosticError(
                [
                    Diagnostic(
                        code="CL007",
                        message=f"init would overwrite {shown}; nothing was written",
                        path=str(folder),
                        hint="choose a new or empty folder: jbcompile init NEW_FOLDER",
                    )
                ]
            )
        place.commit(dict(files))
    return sorted(files)
