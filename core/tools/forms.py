"""An elicitation form's fields, read from the schema a server sent (``requestedSchema``).

SDK-free: the SDK path (``mcpbridge.connection.requests``) and the hot path
(``mcpbridge.calls.lite_wire``) both check a form with :func:`form_fields`, so a form codebot
cannot ask for is refused in the same words on both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.tools.useragent import ElicitField

MAX_FIELDS = 50
"""A form with more fields than this is declined: no one answers 500 questions."""
MAX_TEXT = 10_000
"""Characters of a server's message or a log line kept (a hostile server may send megabytes)."""
NOT_A_FORM = (
    "codebot cannot ask for this form: its schema is not a flat object "
    f"of at most {MAX_FIELDS} primitive fields"
)
"""Why a form :func:`form_fields` cannot read is refused (``-32602``), on both paths."""


def form_fields(schema: Mapping[str, Any] | Any) -> list[ElicitField] | None:
    """The fields of a form-mode schema; None when it is not a flat object of primitives."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, Mapping) or len(properties) > MAX_FIELDS:
        return None
    needed = set(required) if isinstance(required, list) else set()
    fields: list[ElicitField] = []
    for name, prop in properties.items():
        if not isinstance(name, str) or not isinstance(prop, Mapping):
            return None
        field_ = _field(name, prop, name in needed)
        if field_ is None:
            return None
        fields.append(field_)
    return fields


def _choices(prop: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``enum`` (with legacy ``enumNames``), or ``oneOf``/``anyOf`` of ``const`` + ``title``."""
    if isinstance(prop.get("enum"), list):
        values = tuple(str(v) for v in prop["enum"])
        names = prop.get("enumNames")
        titles = tuple(str(n) for n in names) if isinstance(names, list) else ()
        return values, titles if len(titles) == len(values) else ()
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list):
            consts = [o for o in options if isinstance(o, Mapping) and "const" in o]
            values = tuple(str(o["const"]) for o in consts)
            titles = tuple(str(o.get("title", o["const"])) for o in consts)
            return values, titles
    return (), ()


def _field(name: str, prop: Mapping[str, Any], required: bool) -> ElicitField | None:
    kind = prop.get("type", "string")
    multiple = False
    choices, titles = _choices(prop)
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            return None
        choices, titles = _choices(items)
        multiple = True
    elif kind not in ("string", "number", "integer", "boolean"):
        return None

    def number(key: str) -> float | None:
        value = prop.get(key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None  # type: ignore[arg-type]

    return ElicitField(
        name=name,
        type=str(kind),
        title=str(prop["title"])[:200] if "title" in prop else None,
        description=str(prop["description"])[:MAX_TEXT] if "description" in prop else None,
        required=required,
        default=prop.get("default"),
        has_default="default" in prop,
        choices=choices,
        choice_titles=titles,
        multiple=multiple,
        format=str(prop["format"]) if "format" in prop else None,
        minimum=number("minimum"),
        maximum=number("maximum"),
        min_length=_count(prop, "minLength"),
        max_length=_count(prop, "maxLength"),
        min_items=_count(prop, "minItems"),
        max_items=_count(prop, "maxItems"),
    )


def _count(prop: Mapping[str, Any], key: str) -> int | None:
    value = prop.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
