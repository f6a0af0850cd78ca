"""Reading JSON a stranger wrote (a model, a server, a repository's file) without crashing.

``json.loads`` recurses once per nesting level, so ``[[[[…]]]]`` 100,000 levels deep raises
``RecursionError`` — not a ``ValueError``, so ``except ValueError`` misses it and the command
dies with a traceback. :func:`loads` turns it into :class:`JSONTooDeepError`, a
``json.JSONDecodeError`` (so a ``ValueError``): every reader that already handles bad JSON
handles this too, with a message that says what is wrong. Real settings,
messages and results nest a few dozen levels; Python's limit is about a thousand.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TOO_DEEP", "JSONTooDeepError", "is_str_list", "json_type", "loads"]

TOO_DEEP = "it is nested too deeply to read (over about 1,000 levels)"


class JSONTooDeepError(json.JSONDecodeError):
    """JSON nested deeper than Python's recursion limit allows to read."""

    def __init__(self) -> None:
        super().__init__(TOO_DEEP, "", 0)


def loads(text: str | bytes | bytearray) -> Any:
    """``json.loads``, with a document too deep to read raised as :class:`JSONTooDeepError`.

    Raises:
        JSONTooDeepError: the document nests too deeply.
        json.JSONDecodeError: it is not JSON.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeepError from None


def json_type(value: Any) -> str:
    """What a JSON value is, in words for an error message ("a string", "an array")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def is_str_list(value: Any) -> bool:
    """A JSON array of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
