"""Elicitation forms as plain data: parsing a schema, SEP-1034 defaults, typed answers."""

from __future__ import annotations

import pytest

from codebot_mcp.core.tools.useragent import (
    ElicitRequest,
    Policy,
    SamplingRequest,
    coerce,
    defaults_answer,
)
from codebot_mcp.mcpbridge.connection.requests import form_fields

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
        "pet": {"type": "string", "oneOf": [{"const": "cat", "title": "Cat"}, {"const": "dog"}]},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "default": ["a"]},
        "two": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 1, "maxItems": 2},
        "mail": {"type": "string", "format": "email", "minLength": 6, "maxLength": 40},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
    },
    "required": ["name"],
}


def test_form_fields_read_every_primitive_kind() -> None:
    fields = {f.name: f for f in form_fields(SCHEMA) or []}
    assert fields["name"].required and not fields["name"].has_default
    assert fields["age"].type == "integer" and fields["age"].maximum == 150
    assert fields["size"].choices == ("s", "m", "l")
    assert fields["pet"].choices == ("cat", "dog") and fields["pet"].choice_titles == ("Cat", "dog")
    assert fields["tags"].multiple and fields["tags"].choices == ("a", "b")


def test_nested_or_huge_schemas_are_refused() -> None:
    nested = {"type": "object", "properties": {"x": {"type": "object", "properties": {}}}}
    assert form_fields(nested) is None
    huge = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(51)}}
    assert form_fields(huge) is None


def test_defaults_accept_only_when_every_required_field_has_one() -> None:
    fields = tuple(form_fields(SCHEMA) or [])
    assert defaults_answer(ElicitRequest("s", "m", fields=fields)).action == "decline"
    optional = tuple(f for f in fields if f.name != "name")
    answer = defaults_answer(ElicitRequest("s", "m", fields=optional))
    assert answer.action == "accept"
    assert answer.content == {"age": 30, "ok": True, "size": "m", "tags": ["a"]}  # the rest: none
    assert defaults_answer(ElicitRequest("s", "m", mode="url", url="https://x")).action == "decline"


def test_coerce_checks_types_ranges_and_choices() -> None:
    fields = {f.name: f for f in form_fields(SCHEMA) or []}
    assert coerce(fields["age"], "42") == 42
    assert coerce(fields["ok"], "no") is False
    assert coerce(fields["tags"], "a, b, a") == ["a", "b"]
    assert coerce(fields["two"], "z") == ["z"]
    assert coerce(fields["mail"], "ada@example.com") == "ada@example.com"
    assert coerce(fields["site"], "https://ada.dev") == "https://ada.dev"
    assert coerce(fields["day"], "1815-12-10") == "1815-12-10"
    assert coerce(fields["when"], "2026-12-01T09:30:00+00:00") == "2026-12-01T09:30:00+00:00"
    for name, text, reason in [
        ("age", "x", "not an integer"),
        ("age", "200", "maximum"),
        ("size", "xl", "not one of"),
        ("ok", "maybe", "yes or no"),
        ("tags", "c", "not one of"),
        ("two", "", "at least 1"),
        ("two", "x,y,z", "at most 2"),
        ("mail", "a@b.c", "at least 6 characters"),
        ("mail", "ada.example.com", "not an email address"),
        ("mail", "a" * 35 + "@b.com", "at most 40 characters"),
        ("site", "example.com", "not a URI"),
        ("day", "10/12/1815", "not a date"),
        ("when", "yesterday", "not a date-time"),
    ]:
        with pytest.raises(ValueError, match=reason):
            coerce(fields[name], text)


@pytest.mark.anyio
async def test_policy_answers_by_flag() -> None:
    request = ElicitRequest("s", "m")
    assert (await Policy("cancel").elicit(request)).action == "cancel"
    assert (await Policy().elicit(request)).action == "decline"
    sampling = SamplingRequest("s", (("user", "hi"),), None, 10)
    assert not await Policy().approve_sampling(sampling)
    assert await Policy(allow_sampling=frozenset({"s"})).approve_sampling(sampling)
