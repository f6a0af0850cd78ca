"""Writing :mod:`.keytable`: the settings models' fields as plain Python, for the run time.

Reading settings must not import pydantic (:mod:`.sections` says why), so what the loader needs
of each model, a key's JSON types, the values of its enum, its bounds, its default and the keys
of an object, is read here from the models' JSON Schema and written out as a module of
:class:`~.keytable.Spec` rows: every top-level key (``KEYS``), every field of an object-valued
one (``FIELDS``: ``images.max_bytes``, ``sandbox.mode``...) and every field of an MCP server
entry (``SERVER_FIELDS``, stdio's and http's together). An object section's row and its fields
carry the model's example, for the hints of the errors that name them. ``python -m
codebot_mcp.core.config.tablegen`` prints it (``make docs`` writes it);
``tests/core/test_config_sections.py`` fails when the checked-in copy is older than the models.
This module builds the models: docs and tests only, never a command's path.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, get_args, get_origin

from codebot_mcp.core.config.keytable import Spec
from codebot_mcp.core.config.sections import sections

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

__all__ = ["section_fields", "server_fields", "table_text", "top_level"]

_BOUNDS = {
    "minimum": "minimum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "minLength": "min_length",
}
"""JSON Schema's bounds, by the :class:`Spec` field that holds each."""


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _spec(
    name: str, prop: dict[str, Any], defs: dict[str, Any], default: Any, example: Any = None
) -> Spec:
    """A field's :class:`Spec` from its JSON Schema (each alternative of an ``anyOf``)."""
    types: list[str] = []
    enum: list[Any] = []
    keys: tuple[str, ...] | None = None
    bounds: dict[str, Any] = {}
    for alternative in prop.get("anyOf", [prop]):
        schema = _resolve(alternative, defs)
        kind = schema.get("type")
        if kind is not None and kind not in types:
            types.append(kind)
        if "const" in schema:
            enum.append(schema["const"])
        enum.extend(schema.get("enum", ()))
        if "properties" in schema:
            keys = tuple(schema["properties"])
        bounds.update((_BOUNDS[k], v) for k, v in schema.items() if k in _BOUNDS)
    return Spec(name, tuple(types), default, tuple(enum), keys=keys, example=example, **bounds)


def _default(field: FieldInfo) -> Any:
    """A field's default as JSON (None when it is required)."""
    from pydantic import BaseModel

    if field.is_required():
        return None
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def _inner(field: FieldInfo) -> type[BaseModel] | None:
    """The model of an object-valued field of fixed keys (None: any other field)."""
    from pydantic import BaseModel

    kind = field.annotation
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def _specs(model: type[BaseModel], prefix: str = "") -> dict[str, Spec]:
    """The fields of ``model`` by name (``prefix`` before each: a section's ``images.``); an
    object section (its fields are in :func:`section_fields`), or a field inside one, carries
    its example."""
    schema = model.model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    out: dict[str, Spec] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        shown = prefix or _inner(field) is not None
        example = (field.examples or [None])[0] if shown else None
        out[prefix + key] = _spec(
            prefix + key, schema["properties"][key], defs, _default(field), example
        )
    return out


def top_level() -> dict[str, Spec]:
    """Every top-level key, in the docs' order."""
    return {k: v for section in sections() for k, v in _specs(section.model()).items()}


def _nested(annotation: Any, path: str, out: dict[str, Spec]) -> None:
    """The fields of the models inside ``annotation`` (at ``path``) into ``out``: a model's
    by ``path.field``, an object's values at ``path.*``, a list's items at ``path[]``."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        out.update(_specs(annotation, f"{path}."))
        for name, field in annotation.model_fields.items():
            _nested(field.annotation, f"{path}.{field.alias or name}", out)
        return
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict:
        _nested(args[1], f"{path}.*", out)
    elif origin is list:
        _nested(args[0], f"{path}[]", out)
    else:  # a union, Annotated, or a plain type (which has no args)
        for arg in args:
            _nested(arg, path, out)


def section_fields() -> dict[str, Spec]:
    """Every field of a model inside a top-level key, by its path: ``images.max_bytes``, and
    inside objects and lists, ``hooks.*[].hooks[].timeout`` (any event, any group, any hook)."""
    out: dict[str, Spec] = {}
    for section in sections():
        for name, field in section.model().model_fields.items():
            _nested(field.annotation, field.alias or name, out)
    return out


def server_fields() -> dict[str, Spec]:
    """The fields of a server entry: stdio's, then http's own; a field both declare takes the
    types and values of both (its default only where the two agree)."""
    from codebot_mcp.core.config.mcpsection import server_model

    out: dict[str, Spec] = {}
    for model in get_args(server_model()):
        transport = model.model_fields["type"].default
        for name, spec in _specs(model).items():
            spec = spec._replace(transports=(transport,))
            known = out.get(name)
            if known is not None:
                spec = known._replace(
                    types=tuple(dict.fromkeys(known.types + spec.types)),
                    enum=tuple(dict.fromkeys(known.enum + spec.enum)),
                    default=known.default if known.default == spec.default else None,
                    transports=known.transports + spec.transports,
                )
            out[name] = spec
    return out


def _inline(value: Any) -> str:
    """``value`` as Python source on one line."""
    if isinstance(value, Spec):
        plain = Spec(value.name, value.types)
        shown = [
            f
            for f in Spec._fields
            if f in ("name", "types") or getattr(value, f) != getattr(plain, f)
        ]
        return "Spec(" + ", ".join(_keyword(f) + _inline(getattr(value, f)) for f in shown) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_inline(k)}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple | list):
        inner = ", ".join(_inline(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _keyword(field: str) -> str:
    """How a :class:`Spec` argument opens: ``name`` and ``types`` go by position (every row
    has them: the table stays short), the others by keyword."""
    return "" if field in ("name", "types") else f"{field}="


def _item(prefix: str, value: Any, depth: int) -> str:
    """One item of a collection or a call, with its trailing comma: on one line where it fits
    in ruff's 100 columns, else laid out one part per line (both as ``ruff format`` keeps
    them: the trailing comma holds a laid-out collection open)."""
    inline = f"{prefix}{_inline(value)},"
    if len(inline) <= 100 or not isinstance(value, Spec | dict | tuple | list) or not value:
        return inline + "\n"
    pad, end = "    " * (depth + 1), "    " * depth
    if isinstance(value, Spec):
        plain = Spec(value.name, value.types)
        shown = [
            f
            for f in Spec._fields
            if f in ("name", "types") or getattr(value, f) != getattr(plain, f)
        ]
        parts = "".join(_item(pad + _keyword(f), getattr(value, f), depth + 1) for f in shown)
        return f"{prefix}Spec(\n{parts}{end}),\n"
    if isinstance(value, dict):
        parts = "".join(_item(f"{pad}{_inline(k)}: ", v, depth + 1) for k, v in value.items())
        return f"{prefix}{{\n{parts}{end}}},\n"
    opening, closing = ("(", ")") if isinstance(value, tuple) else ("[", "]")
    parts = "".join(_item(pad, v, depth + 1) for v in value)
    return f"{prefix}{opening}\n{parts}{end}{closing},\n"


def _assignment(name: str, annotation: str, value: dict[str, Any]) -> str:
    """``name: annotation = value``, laid out (a module-level table never fits on one line)."""
    parts = "".join(_item(f"    {_inline(k)}: ", v, 1) for k, v in value.items())
    return f"{name}: {annotation} = {{\n{parts}}}\n"


_HEAD = '''"""The settings models' fields as the run time checks them: generated, do not edit.

Written by ``python -m codebot_mcp.core.config.tablegen > core/config/keytable.py`` (``make
docs``) from the sections' pydantic models (:mod:`.tablegen`), so that reading settings imports
no pydantic; ``tests/core/test_config_sections.py`` fails when it is older than the models. It
imports nothing of codebot: the registry of sections (:mod:`.sections`) reads it.

Size: data, one row per field of every settings model (a row on one line where it fits).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["FIELDS", "KEYS", "SERVER_FIELDS", "Spec"]


class Spec(NamedTuple):
    """One field of a settings model as the run time checks it: generated from the model's
    JSON Schema into :mod:`.keytable` (a value is JSON as a file holds it: never mutate one).
    A named tuple, not a dataclass: it is built on every run, and costs a twentieth."""

    name: str
    """The field's JSON name (its alias)."""
    types: tuple[str, ...]
    """The JSON types it takes (``"string"``, ``"integer"``, ``"number"``, ``"boolean"``,
    ``"array"``, ``"object"``, ``"null"``), in the model's order."""
    default: Any = None
    """Its default as JSON (None: none, or required)."""
    enum: tuple[Any, ...] = ()
    """The only values it takes of its non-object types, when the model lists them."""
    minimum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    min_length: int | None = None
    keys: tuple[str, ...] | None = None
    """An object's own keys, as its model declares them (None: not an object of fixed keys)."""
    example: Any = None
    """A value to show in a hint (an object section's, and its fields' where they give one)."""
    transports: tuple[str, ...] = ()
    """For a field of a server entry: the transports whose entry declares it."""


'''


def table_text() -> str:
    """The source of :mod:`.keytable`."""
    return (
        _HEAD
        + _assignment("KEYS", "dict[str, Spec]", top_level())
        + '"""Every top-level key, in the docs\' order."""\n\n'
        + _assignment("FIELDS", "dict[str, Spec]", section_fields())
        + '"""The fields of the models inside the keys, by path (``images.max_bytes``,\n'
        + '``hooks.*[].hooks[].timeout``)."""\n\n'
        + _assignment("SERVER_FIELDS", "dict[str, Spec]", server_fields())
        + '"""The fields of an MCP server entry (stdio\'s, then http\'s own)."""\n'
    )


if __name__ == "__main__":
    import sys

    sys.stdout.write(table_text())
