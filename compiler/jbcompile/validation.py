"""Turn pydantic validation errors into positioned diagnostics.

pydantic reports locations as key paths; the loader knows where each key path stands in the file, so every
schema error names ``file:line:col`` (dbt's weak spot: schema errors without a line).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .diagnostics import Diagnostic, DiagnosticError
from .loader import KeyPath, LoadedDocument

M = TypeVar("M", bound=BaseModel)

_CODES = {
    "missing": ("S001", "missing field {field}", "add the field"),
    "extra_forbidden": ("S003", "unknown field {field}", "remove it or check its spelling"),
}


def _data_path(data: Any, loc: tuple) -> KeyPath:
    """Keep the parts of pydantic's location that are real keys; drop union-member and type tags."""
    path: list[str | int] = []
    for part in loc:
        in_mapping = isinstance(data, dict) and isinstance(part, str)
        in_list = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if (in_mapping and part in data) or in_list:
            path.append(part)
            data = data[part]
        elif in_mapping:  # a missing or unknown key: name it, but it has no position of its own
            path.append(part)
            break
    return tuple(path)


def schema_diagnostics(error: ValidationError, doc: LoadedDocument, prefix: KeyPath = ()) -> list[Diagnostic]:
    data = doc.data
    for key in prefix:
        data = data[key]
    seen: set[tuple] = set()
    out: list[Diagnostic] = []
    for item in error.errors(include_url=False):
        path = prefix + _data_path(data, tuple(item["loc"]))
        kind = item["type"]
        if (path, kind in _CODES) in seen:  # a union reports one error per member: keep the first
            continue
        seen.add((path, kind in _CODES))
        field = ".".join(str(p) for p in path) or "<document>"
        if kind in _CODES:
            code, template, hint = _CODES[kind]
            message = template.format(field=repr(str(path[-1]) if path else field))
            if kind == "missing" and len(path) > 1:
                message += f" in {'.'.join(str(p) for p in path[:-1])}"
            position_path = path[:-1] if kind == "missing" else path
            pos = doc.key_position(path) if kind == "extra_forbidden" else doc.position(position_path)
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
        raise DiagnosticError(schema_diagnostics(exc, doc, prefix)) from None
