"""The card's ``dataset_info``: each config's features (from its design's Arrow schema), split sizes and
byte counts, in the form ``datasets`` reads from a card and the Hub shows.

The features are written by hand (``datasets.Features._to_yaml_list`` gives the same list, and
tests/test_hub_metadata.py holds them together) so that a build does not import ``datasets`` (about 1.5 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .data import SPLIT, data_path

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

    from ..compiled import Compiled

# Arrow's names that ``datasets`` spells otherwise; every other scalar keeps Arrow's own name.
_DTYPES = {"double": "float64", "float": "float32", "halffloat": "float16"}


def dtype(arrow_type: pa.DataType) -> str:
    """The ``datasets`` dtype of an Arrow scalar type (``int64``, ``string``, ``bool``, ``float64`` …)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return dtype(arrow_type.value_type)
    name = str(arrow_type)
    return _DTYPES.get(name, name)


def _feature(arrow_type: pa.DataType) -> dict[str, Any]:
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        return {"struct": [{"name": field.name, **_feature(field.type)} for field in arrow_type]}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        key = "list" if pa.types.is_list(arrow_type) else "large_list"
        inner = _feature(arrow_type.value_type)
        # a list of scalars is `list: string`; a list of structs lists the struct's fields
        return {key: inner.get("dtype") or inner.get("struct") or inner}
    return {"dtype": dtype(arrow_type)}


def features(schema: pa.Schema) -> list[dict[str, Any]]:
    """A config's ``features`` list, as ``datasets`` writes it into a card."""
    return [{"name": field.name, **_feature(field.type)} for field in schema]


def dataset_info(compiled: Compiled, folder: Path, arrow_bytes: dict[str, int]) -> list[dict[str, Any]]:
    """``dataset_info`` of the card: per config, its features, its split's rows and bytes (in memory, as
    Arrow), and its parquet file's size on disk."""
    entries = []
    for name, config in compiled.configs.items():
        size = arrow_bytes.get(name, 0)
        entries.append(
            {
                "config_name": name,
                "features": features(config.spec.schema),
                "splits": [{"name": SPLIT, "num_bytes": size, "num_examples": config.count}],
                "download_size": (folder / data_path(name, "parquet")).stat().st_size,
                "dataset_size": size,
            }
        )
    return entries
