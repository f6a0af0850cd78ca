"""Argument checks shared by the built-in tools; a bad argument is an error result, not a crash."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class BadArgumentError(Exception):
    """An argument is missing or has the wrong type; the message is for the model."""


def string(arguments: Mapping[str, Any], key: str, *, allow_empty: bool = False) -> str:
    """A required string argument."""
    value = arguments.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise BadArgumentError(f"'{key}' is required and must be a non-empty string")
    return value


def integer(arguments: Mapping[str, Any], key: str, default: int, *, minimum: int = 1) -> int:
    """An optional integer argument (a float with no fraction is accepted)."""
    value = arguments.get(key, default)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BadArgumentError(f"'{key}' must be an integer >= {minimum}, got {value!r}")
    return value
