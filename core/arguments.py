"""Tool arguments from the command line: a JSON object, ``@file``, ``-`` or ``key=value`` pairs."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import UsageError

_HINT = (
    "Pass one JSON object ('{\"text\": \"hi\"}'), @FILE with a JSON object, '-' to read one "
    "from stdin, or key=value pairs (values that parse as JSON are taken as JSON)."
)


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
    out: dict[str, Any] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise UsageError(f"argument '{arg}' is not key=value", hint=_HINT)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _object(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"invalid JSON arguments from {where}: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}",
            hint=_HINT,
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"the arguments from {where} must be a JSON object", hint=_HINT)
    return value  # pyright: ignore[reportUnknownVariableType]
