"""Versioned, immutable releases on the Hugging Face Hub: publish a build, verify a release, diff builds.

Modules, in the order a release goes through them:

- ``buildfolder``: read a build folder (manifest, file hashes, rows)
- ``changelog``: the version's section of ``sources/CHANGELOG.md``
- ``release``: local checks → plan → read-only Hub inspection → commit + tag
- ``verify``: a Hub revision against a fresh build of the sources
- ``diff``: rows added / removed / changed between two builds
- ``hub``: the only module that calls ``huggingface_hub``
"""

from ..changelog import changelog_section
from .buildfolder import BuildFolder, open_build
from .diff import BuildDiff, diff_builds
from .release import ReleasePlan, execute_release, inspect_remote, prepare_release, release_tag
from .verify import VerifyReport, compare_builds, verify_release

__all__ = [
    "BuildDiff",
    "BuildFolder",
    "ReleasePlan",
    "VerifyReport",
    "changelog_section",
    "compare_builds",
    "diff_builds",
    "execute_release",
    "inspect_remote",
    "open_build",
    "prepare_release",
    "release_tag",
    "verify_release",
]
