"""Checking a settings value by its model's field, as the generated :mod:`.keytable` holds it.

:func:`refusal` words why a value is not one a field takes (its JSON type, the values of its
enum, its bounds); ``core.config.keys.check`` reads a top-level scalar key with it, and
:func:`check_section` the fields of an object section (``images``, ``checkpoints``,
``telemetry``, ``sandbox``), each error naming the file and the field's path
(``images.max_bytes``) with a hint from the model's example (:func:`part_hint`). A section's
fields that need more than their type (``sandbox.network``'s host patterns) are read by the
section's own small readers, handed in by name. :func:`values` and :func:`fields` are a key's
values and an object's keys, as the models declare them. Plain Python: no pydantic (see
:mod:`.sections`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.keytable import FIELDS, KEYS, Spec
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

__all__ = ["check_section", "fields", "part_hint", "refusal", "values"]


def refusal(spec: Spec, value: Any) -> str | None:
    """Why ``value`` is not one the model's field takes (its JSON type, the values of its
    enum, its bounds), worded to follow its key (``must be true or false, found "no"``); None
    when it is one. A string field with a least length takes no blank string; an object
    field without keys of its own is an object of strings."""
    return None if _takes(spec, value) else _why_not(spec, value)


def _takes(spec: Spec, value: Any) -> bool:
    """Whether the field takes ``value`` (the check on every load: nothing is worded here)."""
    if spec.enum:
        return value in spec.enum or ("boolean" in spec.types and isinstance(value, bool))
    kind = spec.types[0]
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str) and (not spec.min_length or bool(value.strip()))
    if kind == "integer":
        return type(value) is int and value >= (spec.minimum or 0)
    if kind == "number":
        low, high = spec.exclusive_minimum or 0, spec.exclusive_maximum or float("inf")
        return type(value) in (int, float) and low < value < high
    if kind == "object" and spec.keys is None:
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
    return True


def _why_not(spec: Spec, value: Any) -> str:
    """What :func:`refusal` says of a value the field does not take."""
    shown = json.dumps(value)
    kind = spec.types[0]
    if spec.enum:
        options = ", ".join(json.dumps(v) for v in spec.enum)
        if "boolean" in spec.types:  # "auto", true or false
            return f"must be {options}, true or false, found {shown}"
        return f"must be one of {options}, found {shown}"
    if kind == "boolean":
        return f"must be true or false, found {shown}"
    if kind == "string" and spec.min_length:
        return f"must be a non-empty string, found {shown}"
    if kind == "string":
        return f"must be a string, found {json_type(value)}"
    if kind == "integer":
        words = "a positive integer" if (spec.minimum or 0) >= 1 else "an integer >= 0"
        return f"must be {words}, found {shown}"
    if kind == "number":  # every number codebot reads is a duration
        return f"must be a positive number of seconds, found {shown}"
    found = "an object with a non-string value" if isinstance(value, dict) else json_type(value)
    return f"must be an object of strings, found {found}"


def part_hint(spec: Spec) -> str:
    """How to write a field of an object section (``images.max_bytes``): with its model's
    example, else its default, else its first value."""
    section, name = spec.name.split(".", 1)
    value = spec.example
    if value is None:
        value = spec.default if spec.default is not None else next(iter(spec.enum), "...")
    shown = json.dumps({name: value}, ensure_ascii=False)
    others = [json.dumps(v) for v in spec.enum if v != value]
    return f'Write it as "{section}": {shown}' + (f" (or {', '.join(others)})." if others else ".")


def check_section(
    path: Path,
    key: str,
    value: Any,
    *,
    own: Mapping[str, Callable[[Path, str, Any], Any]] | None = None,
    strict: bool = False,
    nulls: bool = False,
    hints: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The fields an object section's value sets (``images``, ``checkpoints``...), each
    checked by its model's field as :data:`.keytable.FIELDS` holds it (:func:`refusal`), a
    string stripped of blanks.

    ``own``: fields the section reads itself (``reader(path, "sandbox.network", value)``,
    raising its own error); ``strict``: an unknown field is an error (else it warns, through
    the row's ``keys``); ``nulls``: ``null`` reads as left out (but for a boolean);
    ``hints``: a field's hint where its example is not enough.

    Raises:
        SettingsError: not an object, or a field's value is not one its model takes (naming
            the file and the field's path: ``images.max_bytes``).
    """
    if not isinstance(value, dict):
        raise SettingsError(
            f"'{key}' in {path} must be an object, found {json_type(value)}",
            hint=f"Write it as {json.dumps({key: KEYS[key].example}, ensure_ascii=False)[1:-1]}.",
        )
    out: dict[str, Any] = {}
    for name, item in value.items():
        spec = FIELDS.get(f"{key}.{name}")
        if spec is None:
            if strict:
                known = ", ".join(KEYS[key].keys or ())
                raise SettingsError(
                    f"'{key}.{name}' in {path} is not a setting", hint=f"Known fields: {known}."
                )
            continue
        if item is None and nulls and not isinstance(spec.default, bool):
            continue
        if own is not None and name in own:
            out[name] = own[name](path, spec.name, item)
            continue
        if not _takes(spec, item):
            hint = (hints or {}).get(name) or part_hint(spec)
            raise SettingsError(f"'{spec.name}' in {path} {_why_not(spec, item)}", hint=hint)
        out[name] = item.strip() if type(item) is str else item
    return out


def values(name: str) -> tuple[Any, ...]:
    """The values a key (or a section's field: ``sandbox.mode``) takes, as its model lists
    them (none while :mod:`.keytable` is being written again: a field it does not hold yet)."""
    spec = KEYS.get(name) or FIELDS.get(name)
    return () if spec is None else spec.enum


def fields(name: str) -> tuple[str, ...]:
    """The keys of an object as its model declares them, by the object's path (``sandbox``,
    ``hooks.*[].hooks[]``); none while :mod:`.keytable` is being written again."""
    prefix = f"{name}."
    out = (k[len(prefix) :] for k in FIELDS if k.startswith(prefix))
    return tuple(k for k in out if not any(c in k for c in ".[*"))
