"""Attribute markers of a person's wording (``rules/attributes.yaml``): what a wording says about a
person's gender, age … besides the group a template tests, and whether two persons differ in it.

Used by the ``attribute-confound`` probe of the audit and by the confounded-pair rule of ``check``
(JA119), so that both read the same words the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..schema.rules import AttributesFile


class AttributeReader:
    """Reads the attribute values a wording carries; a wording with markers of two values of one
    attribute (男女のカップル) carries none of it, and a word of ``not_markers`` (母国) none at all."""

    def __init__(self, file: AttributesFile) -> None:
        self._attributes = []
        for name, attribute in file.attributes.items():
            values: dict[str, str | None] = {word.casefold(): None for word in attribute.not_markers}
            values |= {
                marker.casefold(): value for value, markers in attribute.values.items() for marker in markers
            }
            # the longest first: 祖父 before 父, and 母国 (no value) before 母
            markers = sorted(values, key=lambda m: (-len(m), m))
            pattern = re.compile("|".join(_marker_pattern(m) for m in markers), re.IGNORECASE)
            self._attributes.append((name, frozenset(attribute.tested_by), pattern, values))
        self.values = lru_cache(maxsize=65_536)(self._values)

    def _values(self, text: str) -> tuple[tuple[str, str], ...]:
        """(attribute, value) for each attribute the wording marks with one value."""
        found: list[tuple[str, str]] = []
        for name, _, pattern, values in self._attributes:
            seen = {value for match in pattern.finditer(text) if (value := values[match.group(0).casefold()])}
            if len(seen) == 1:
                found.append((name, seen.pop()))
        return tuple(found)

    def differences(self, first: str, second: str, category: str) -> list[tuple[str, str, str]]:
        """(attribute, first's value, second's value) for each attribute both wordings mark with different
        values, leaving out the attributes ``category`` tests."""
        tested = {name for name, categories, _, _ in self._attributes if category in categories}
        other = dict(self.values(second))
        return [
            (name, value, other[name])
            for name, value in self.values(first)
            if name in other and other[name] != value and name not in tested
        ]


def _marker_pattern(marker: str) -> str:
    """A Latin-letter marker matches a whole word; a Japanese one anywhere."""
    escaped = re.escape(marker)
    return rf"(?<![a-z]){escaped}(?![a-z])" if marker.isascii() else escaped
