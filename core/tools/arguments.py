"""Tool arguments from the command line: a JSON object, ``@file``, ``-`` or ``key=value`` pairs.

``key=value`` values follow the tool's input schema (:func:`typed`), once it is known: a string
property gets the text exactly as typed (``message=123`` is the string ``"123"``); only number,
integer, boolean, array, object and null properties parse the value as JSON. A key the schema
does not describe gets JSON when the value parses as JSON, else the text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.errors import UsageError

_HINT = (
    "Pass one JSON object ('{\"text\": \"hi\"}'), @FILE with a JSON object, '-' to read one "
    "from stdin, or key=value pairs (values follow the tool's schema: text for strings, JSON "
    "for numbers, booleans, arrays and objects)."
)
_JSON_TYPES = frozenset({"number", "integer", "boolean", "array", "object", "null"})


class Pairs(dict[str, str]):
    """``key=value`` arguments as typed: text until :func:`typed` applies the tool's schema."""


if TYPE_CHECKING:
    from codebot_mcp.core.tools.sources import PromptInfo


def parse(args: Sequence[str], *, cwd: Path, stdin_text: str | None = None) -> dict[str, Any]:
    """Tool arguments as a dict.

    Raises:
        UsageError: the arguments are not a JSON object or not ``key=value`` pairs.
    """
    if not args:
        return {}
    if len(args) == 1 and args[0] == "-":
        text = stdin_text if stdin_text is not None else sys.stdin.read()
        return _object(text, "stdin")
    if len(args) == 1 and args[0].startswith("@"):
        path = cwd / args[0][1:]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise UsageError(f"cannot read arguments file {path}: {reason}", hint=_HINT) from None
        return _object(text, str(path))
    if len(args) == 1 and args[0].lstrip().startswith(("{", "[")):
        return _object(args[0], "the command line")
    out = Pairs()
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise UsageError(f"argument '{arg}' is not key=value", hint=_HINT)
        out[key] = value
    return out


def typed(arguments: dict[str, Any], schema: Any) -> dict[str, Any]:
    """``key=value`` pairs typed by the tool's input schema; any other arguments as they are."""
    if not isinstance(arguments, Pairs):
        return arguments
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        properties = {}
    return {key: _value(text, _types(properties.get(key))) for key, text in arguments.items()}


def _types(schema: Any) -> set[str] | None:
    """The JSON types a property allows, or None when the schema does not say."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return {"string"}
        return None
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            branch_types = _types(branch)
            if branch_types is None:
                return None
            found |= branch_types
    return found or None


def _value(text: str, types: set[str] | None) -> Any:
    if types is not None and ("string" in types or not types & _JSON_TYPES):
        return text
    try:
        return jsonutil.loads(text)
    except json.JSONDecodeError:
        return text  # the schema check then names the argument and the type it wants


def _object(text: str, where: str) -> dict[str, Any]:
    try:
        value = jsonutil.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"invalid JSON arguments from {where}: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}",
            hint=_HINT,
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"the arguments from {where} must be a JSON object", hint=_HINT)
    return value


def parse_prompt_args(args: list[str]) -> dict[str, str]:
    """``key=value`` pairs; values stay strings (prompt arguments are strings)."""
    out: dict[str, str] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise UsageError(
                f"argument '{arg}' is not key=value",
                hint="Pass prompt arguments as key=value pairs, e.g. city=Paris.",
            )
        out[key] = value
    return out


def check_prompt_args(prompt: PromptInfo, arguments: dict[str, str]) -> None:
    """Required arguments present, unknown ones named (a usage error either way)."""
    known = {a.name for a in prompt.arguments}
    missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
    unknown = [k for k in arguments if k not in known]
    usage = " ".join(f"{a.name}=…" for a in prompt.arguments) or "(no arguments)"
    if missing:
        raise UsageError(
            f"prompt '{prompt.name}' on server '{prompt.server}' needs "
            + ", ".join(f"'{m}'" for m in missing),
            hint=f"Its arguments: {usage}",
        )
    if unknown:
        raise UsageError(
            f"prompt '{prompt.name}' on server '{prompt.server}' has no argument '{unknown[0]}'",
            hint=f"Its arguments: {usage}",
        )
