"""``croissant.json``: the build described in Croissant (MLCommons' JSON-LD metadata for ML datasets),
with its Responsible-AI fields (the RAI vocabulary) filled from dataset.yaml.

The Hub generates a Croissant file for every dataset, but without the RAI fields, which only the
maintainers can write; this one carries them (how the data was collected, reviewed, its biases and
limitations, its personal data, its uses), one record set per config with every column typed from the
design's Arrow schema, and each data file with its sha256. It is deterministic like the rest of the build
(no dates), listed in the manifest, and tests validate it with ``mlcroissant``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..jsonl import dumps
from .data import data_path

if TYPE_CHECKING:
    import pyarrow as pa

    from ..compiled import Compiled

CROISSANT = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
PARQUET = "application/x-parquet"

# The JSON-LD context of Croissant 1.1 (as the specification and mlcroissant write it).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _data_type(arrow_type: pa.DataType) -> str:
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return "sc:Boolean"
    if pa.types.is_integer(arrow_type):
        return "sc:Integer"
    if pa.types.is_floating(arrow_type):
        return "sc:Float"
    return "sc:Text"


def _field(record_set: str, path: tuple[str, ...], arrow_type: pa.DataType, file_id: str) -> dict[str, Any]:
    """One column (``path`` of length 1) or one member of a struct column, with where its values are."""
    import pyarrow as pa

    field_id = "/".join((record_set, *path))
    entry: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": field_id}
    is_array = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    inner = arrow_type.value_type if is_array else arrow_type
    source: dict[str, Any] = {"fileObject": {"@id": file_id}, "extract": {"column": path[0]}}
    if len(path) > 1:
        source["transform"] = {"jsonPath": ".".join(path[1:])}
    if pa.types.is_struct(inner):
        entry["subField"] = [
            _field(record_set, (*path, member.name), member.type, file_id) for member in inner
        ]
    else:
        entry["dataType"] = _data_type(inner)
    entry["source"] = source
    if is_array:
        entry |= {"isArray": True, "arrayShape": "-1"}
    return entry


def _rai(compiled: Compiled) -> dict[str, Any]:
    """The Responsible-AI fields, from the card's sections in dataset.yaml (a field left empty there is
    left out here), the review records, and the uses."""
    from .card import review_summary

    dataset = compiled.project.dataset
    card = dataset.card
    reviews = review_summary(compiled)
    review_counts = (
        f"{reviews['reviewed']} of {reviews['total']} templates are recorded as reviewed"
        + (f" (latest review {reviews['latest']})" if reviews["latest"] else "")
        + "; every row is compiled from the reviewed templates by jbcompile."
    )

    def text(*parts: str | None) -> str | None:
        joined = "\n\n".join(part.strip() for part in parts if part and part.strip())
        return joined or None

    fields = {
        "rai:dataCollection": text(card.creation),
        "rai:dataCollectionType": ["Manual Human Curation"] if card.creation else None,
        "rai:dataAnnotationProtocol": text(card.review, review_counts),
        "rai:dataBiases": text(card.risks),
        "rai:dataLimitations": text(card.risks, card.out_of_scope),
        "rai:personalSensitiveInformation": text(card.personal_data),
        "rai:dataUseCases": text(card.uses),
        "rai:dataSocialImpact": text(card.recommendations),
    }
    return {key: value for key, value in fields.items() if value}


def croissant(compiled: Compiled, folder: Path, digests: dict[str, str]) -> dict[str, Any]:
    """The Croissant document of a build folder whose data files are written (``digests``: their sha256)."""
    from .. import __version__

    project = compiled.project
    dataset = project.dataset
    distribution = []
    record_sets = []
    for name, config in compiled.configs.items():
        path = data_path(name, "parquet")
        file_id = f"{name}-parquet"
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": file_id,
                "name": file_id,
                "description": f"The rows of config {name} (split test).",
                "contentUrl": path,
                "encodingFormat": PARQUET,
                "contentSize": f"{(folder / path).stat().st_size} B",
                "sha256": digests[path],
            }
        )
        record_sets.append(
            {
                "@type": "cr:RecordSet",
                "@id": name,
                "name": name,
                "description": f"{config.spec.description} ({config.count} rows, design {config.kind}).",
                "field": [
                    _field(name, (column.name,), column.type, file_id) for column in config.spec.schema
                ],
            }
        )
    url = f"https://huggingface.co/datasets/{dataset.hub_repo}" if dataset.hub_repo else dataset.homepage
    document: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": dataset.name,
        "alternateName": dataset.pretty_name,
        "description": dataset.description.strip(),
        "license": dataset.license,
        "version": dataset.version,
        "inLanguage": [project.lang] if project.lang != "ja" else list(dataset.language),
        "keywords": ["social bias", "bias evaluation", "Japanese", "question answering"],
        "isLiveDataset": False,
        "url": url,
        "citeAs": dataset.citation.strip() if dataset.citation else None,
        "usageInfo": dataset.terms_of_use.strip(),
        "sdVersion": __version__,  # the compiler that wrote this file
        **_rai(compiled),
        "distribution": distribution,
        "recordSet": record_sets,
    }
    return {key: value for key, value in document.items() if value is not None}


def write_croissant(document: dict[str, Any], path: Path) -> None:
    path.write_text(dumps(document, indent=2) + "\n", encoding="utf-8")
