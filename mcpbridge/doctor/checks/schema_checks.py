"""JSON Schema helpers for the tool checks: validity (``jsonschema``) and OpenAI strict mode."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from jsonschema import validators  # type: ignore[import-untyped]

DEFAULT_VALIDATOR: Any = validators.Draft202012Validator
"""MCP says an input schema without ``$schema`` is JSON Schema 2020-12."""
MAX_SCHEMA_ERRORS = 3
"""More than a few errors in one schema is noise: fixing the first ones shows the rest."""

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""The string formats OpenAI strict mode accepts."""
STRICT_UNSUPPORTED = ("allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas")
"""Keywords OpenAI strict mode rejects (composition and conditionals)."""

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUES = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def validator_class(schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The validator for the schema's declared draft, and the ``$schema`` when it is unknown."""
    declared = schema.get("$schema")
    if declared is None:
        return DEFAULT_VALIDATOR, None
    if not isinstance(declared, str):  # the metaschema check reports it
        return DEFAULT_VALIDATOR, None
    found = validators.validator_for(schema, default=None)
    if found is None:  # an unknown $schema: validate as the default draft, and say so
        return DEFAULT_VALIDATOR, str(declared)
    return found, None


def schema_errors(schema: Mapping[str, Any]) -> list[str]:
    """Why ``schema`` is not a valid JSON Schema (``path: message``), at most a few; [] if valid."""
    cls, _ = validator_class(schema)
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    errors = sorted(meta.iter_errors(dict(schema)), key=lambda e: list(map(str, e.path)))
    return [f"{pointer(e.path)}: {e.message}" for e in errors[:MAX_SCHEMA_ERRORS]]


def pointer(path: Any) -> str:
    """A JSON pointer (``/properties/x``) for a path of keys and indices."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "/"


def subschemas(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every (sub)schema object in ``schema`` with its pointer, the root first."""
    if not isinstance(schema, dict):
        return
    node = cast(dict[str, Any], schema)
    yield pointer(path), node
    for key in _SCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, dict):
            for name, child in cast(dict[str, Any], children).items():
                yield from subschemas(child, (*path, key, name))
    for key in _SCHEMA_VALUES:
        yield from subschemas(node.get(key), (*path, key))
    for key in _SCHEMA_LISTS:
        children = node.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                yield from subschemas(child, (*path, key, str(i)))


def strict_mode_breakers(schema: Mapping[str, Any]) -> list[str]:
    """Features of ``schema`` that OpenAI strict mode rejects, each with where it is."""
    found: list[str] = []
    for where, node in subschemas(schema):
        found.extend(f"{key} at {where}" for key in STRICT_UNSUPPORTED if key in node)
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            found.append(f"format '{fmt}' at {where}")
        kind = node.get("type")
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
        if is_object and "properties" not in node:
            found.append(f"object without 'properties' at {where}")
    return found
