"""Turn pydantic validation errors into positioned diagnostics.

pydantic reports locations as key paths; the loader knows where each key path stands in the file, so every
schema error names ``file:line:col`` (dbt's weak spot: schema errors without a line).
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from .diagnostics import Diagnostic, DiagnosticError
from .loader import KeyPath, LoadedDocument
from .schema.common import PATTERN_WORDS
from .text import did_you_mean, shown

M = TypeVar("M", bound=BaseModel)

_CODES = {
    "missing": ("S001", "missing field {field}", "add the field"),
    "extra_forbidden": ("S003", "unknown field {field}", "remove it or check its spelling"),
}


def _data_path(data: Any, loc: tuple, names_a_key: bool) -> KeyPath:
    """Keep the parts of pydantic's location that are real keys; drop union-member and type tags.

    ``names_a_key``: the error is about a missing or unknown key, so the last part is a key even though
    it is not in the data; any other part that is not in the data is a tag such as ``str`` or
    ``function-after[…, LocalizedText]``.
    """
    path: list[str | int] = []
    for index, part in enumerate(loc):
        in_mapping = isinstance(data, dict) and isinstance(part, str)
        in_list = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if (in_mapping and part in data) or in_list:
            path.append(part)
            data = data[part]
        elif in_mapping and names_a_key and index == len(loc) - 1:
            path.append(part)
    return tuple(path)


@cache
def _json_schema(model: type[BaseModel]) -> dict:
    return model.model_json_schema()


def _members(node: Any, defs: dict) -> list[dict]:
    """A JSON Schema node as the object schemas it may be: references followed, unions flattened."""
    if not isinstance(node, dict):
        return []
    if "$ref" in node:
        return _members(defs.get(node["$ref"].rsplit("/", 1)[-1]), defs)
    found = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for member in node.get(key, ()):
            found += _members(member, defs)
    return found


def known_keys(model: type[BaseModel], key_path: KeyPath) -> list[str]:
    """The keys the source format allows in the mapping at ``key_path`` of a ``model`` document (every
    member's keys, where a union allows several shapes): what an unknown key was probably meant to be."""
    try:
        schema = _json_schema(model)
    except Exception:  # a type without a JSON Schema: no suggestion, never a crash
        return []
    defs = schema.get("$defs", {})
    nodes = _members(schema, defs)
    for part in key_path:
        children = []
        for node in nodes:
            if isinstance(part, int):
                children += _members(node.get("items"), defs)
            elif part in node.get("properties", {}):
                children += _members(node["properties"][part], defs)
            else:
                children += _members(node.get("additionalProperties"), defs)
        nodes = children
    return sorted({key for node in nodes for key in node.get("properties", {})})


def schema_diagnostics(
    error: ValidationError,
    doc: LoadedDocument,
    prefix: KeyPath = (),
    model: type[BaseModel] | None = None,
) -> list[Diagnostic]:
    data = doc.data
    for key in prefix:
        data = data[key]
    located: list[tuple[KeyPath, ErrorDetails]] = []
    for item in error.errors(include_url=False):
        located.append((prefix + _data_path(data, tuple(item["loc"]), item["type"] in _CODES), item))
    # A union reports one error per member. When one member got further into the value (an unknown key
    # inside {ja, en, status}), its error is the useful one; the other members' "not a string" is noise.
    paths = {path for path, _ in located}

    def has_deeper(path: KeyPath) -> bool:
        return any(len(other) > len(path) and other[: len(path)] == path for other in paths)

    seen: set[tuple] = set()
    out: list[Diagnostic] = []
    for path, item in located:
        kind = item["type"]
        if kind not in _CODES and has_deeper(path):
            continue
        if (path, kind in _CODES) in seen:  # keep the first error of each place
            continue
        seen.add((path, kind in _CODES))
        field = ".".join(str(p) for p in path) or "<document>"
        if kind in _CODES:
            code, template, hint = _CODES[kind]
            message = template.format(field=repr(str(path[-1]) if path else field))
            if kind == "missing" and len(path) > 1:
                message += f" in {'.'.join(str(p) for p in path[:-1])}"
            if kind == "extra_forbidden" and model is not None and path:
                hint = did_you_mean(str(path[-1]), known_keys(model, path[len(prefix) : -1])) + hint
            position_path = path[:-1] if kind == "missing" else path
            pos = doc.key_position(path) if kind == "extra_forbidden" else doc.position(position_path)
        elif kind == "string_pattern_mismatch" and item.get("ctx", {}).get("pattern") in PATTERN_WORDS:
            words, hint = PATTERN_WORDS[item["ctx"]["pattern"]]
            code, message = "S002", f"{field}: {shown(str(item['input']))!r} is not {words}"
            pos = doc.position(path)
        elif kind == "finite_number":
            code, message = (
                "S002",
                f"{field}: {item['input']!r} is not a number this field takes (NaN and ±infinity are not)",
            )
            hint = "give a finite number (not .nan, .inf or -.inf); see its range in `jbcompile schema`"
            pos = doc.position(path)
        else:
            code, hint = "S002", "fix the value to match the source format (see `jbcompile schema`)"
            message = f"{field}: {item['msg']}"
            pos = doc.position(path)
        out.append(
            Diagnostic(
                code=code,
                message=message,
                path=doc.path,
                line=pos.line if pos else None,
                col=pos.col if pos else None,
                hint=hint,
                key_path=path,
            )
        )
    return out


def validate_document(model: type[M], doc: LoadedDocument, prefix: KeyPath = ()) -> M:
    data = doc.data
    for key in prefix:
        data = data[key]
    if not isinstance(data, dict):
        raise DiagnosticError(
            [doc.diagnostic(prefix, "S004", "expected a mapping of fields", hint="see `jbcompile schema`")]
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DiagnosticError(schema_diagnostics(exc, doc, prefix, model)) from None
