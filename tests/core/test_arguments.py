"""Typed ``key=value`` arguments: the tool's schema decides, not the look of the value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.tools.arguments import Pairs, parse, typed

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "maybe": {"type": ["string", "null"]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
        "mode": {"enum": ["1", "2"]},
    },
}


def pairs(*args: str) -> dict[str, Any]:
    return parse(list(args), cwd=Path("."))


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("message=123", "123"),
        ("message=true", "true"),
        ('message={"a": 1}', '{"a": 1}'),
        ("message=", ""),
        ("message=a=b", "a=b"),
        ("maybe=null", "null"),
        ("mode=1", "1"),
        ("count=42", 42),
        ("ratio=0.5", 0.5),
        ("flag=false", False),
        ('tags=["a", "b"]', ["a", "b"]),
        ('options={"x": [1]}', {"x": [1]}),
        ("either=7", 7),
        ("count=many", "many"),  # not JSON: left as text for the schema check to name
        ("unknown=12", 12),  # not in the schema: JSON when it parses
        ("unknown=hello", "hello"),
    ],
)
def test_values_follow_the_schema(arg: str, expected: Any) -> None:
    key = arg.split("=", 1)[0]
    assert typed(pairs(arg), SCHEMA) == {key: expected}


def test_json_objects_are_taken_as_they_are() -> None:
    given = parse(['{"message": 123}'], cwd=Path("."))
    assert not isinstance(given, Pairs)
    assert typed(given, SCHEMA) == {"message": 123}


def test_no_schema_falls_back_to_json_when_it_parses() -> None:
    assert typed(pairs("a=1", "b=x"), {}) == {"a": 1, "b": "x"}
    assert typed(pairs("a=1"), None) == {"a": 1}


def test_not_key_value_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="is not key=value"):
        pairs("novalue")
