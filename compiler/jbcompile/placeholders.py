"""Placeholders: what `jbcompile import` and `jbcompile init` write into dataset.yaml where only the
maintainers can say what belongs (the license, the description, the terms of use). They load and build,
so a new benchmark can be tried at once; `jbcompile publish` refuses to release them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .schema import DatasetConfig

LICENSE = "other"  # not a license the card can name: pick one (cc-by-4.0, cc-by-sa-4.0 …)
DESCRIBE = "describe the dataset here"  # a description that holds these words is the placeholder
SET_TERMS = "Set the terms of use"  # likewise for terms_of_use

IMPORTED_DESCRIPTION = f"Imported with `jbcompile import`; {DESCRIBE}."
IMPORTED_TERMS = f"{SET_TERMS} of the imported data before publishing it."
STARTER_DESCRIPTION = f"TODO: {DESCRIBE} (what it measures, for whom, and how its items were written)."
STARTER_TERMS = f"TODO: {SET_TERMS} of the data before publishing it (the Hub shows them before access)."


def placeholder_fields(dataset: DatasetConfig) -> list[tuple[str, str]]:
    """The fields of dataset.yaml that still hold a placeholder: (field, what to write instead)."""
    found = []
    if dataset.license.strip().lower() == LICENSE:
        found.append(("license", "the license of the data as an SPDX-style id the Hub knows, e.g. cc-by-4.0"))
    if DESCRIBE.lower() in dataset.description.lower():
        found.append(("description", "a paragraph for the card: what the dataset measures, and how"))
    if SET_TERMS.lower() in dataset.terms_of_use.lower():
        found.append(("terms_of_use", "the terms users accept before access (the Hub's gate shows them)"))
    return found
