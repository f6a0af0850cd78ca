"""A server whose tools break the rules ``codebot mcp doctor`` lints for (raw JSON-RPC, no SDK).

No SDK import, so it boots in tens of milliseconds, and the tool definitions go out exactly
as written here (an SDK server would refuse or rewrite some of them). Server name
``lint_target``. Tools:

- ``ping``: healthy (description, object schema, ``readOnlyHint``);
- ``LONG_NAME`` (70 characters): too long for a model-visible name;
- ``long_description``: a description of ``LONG_DESCRIPTION_LENGTH`` (1500) characters;
- ``no_description``: no description at all;
- ``bad_schema``: ``minimum`` is a string, so the schema is not valid JSON Schema;
- ``strict_breaker``: valid, but uses ``allOf``, ``not``, ``if``/``then``, ``format: uri``
  and an object without ``properties`` (all outside OpenAI strict mode);
- ``dotted.name``: a character that is not allowed in model-visible names;
- ``contradiction``: annotated both ``readOnlyHint`` and ``destructiveHint``.

Options: ``--only NAME[,NAME...]`` lists only those tools (``--only ping`` is a healthy
server); ``--broken-listing`` adds ``array_input``, whose input schema is an array schema:
the SDK rejects the whole ``tools/list`` result over it. Every tool answers ``ok``.

Run: ``python -m tests.servers.lint_target [--only ping]``
"""

from __future__ import annotations

import argparse
from typing import Any

from tests.servers._raw import initialize_result, serve, text_result

LONG_NAME = ("generate_the_quarterly_revenue_report_for_every_region_and_product_" + "x" * 70)[:70]
LONG_DESCRIPTION_LENGTH = 1500

_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "ping",
        "description": "Answer pong.",
        "inputSchema": _OBJECT,
        "annotations": {"readOnlyHint": True},
    },
    {"name": LONG_NAME, "description": "Build a report.", "inputSchema": _OBJECT},
    {
        "name": "long_description",
        "description": ("Looks up a record. " * 100)[:LONG_DESCRIPTION_LENGTH],
        "inputSchema": _OBJECT,
    },
    {"name": "no_description", "inputSchema": _OBJECT},
    {
        "name": "bad_schema",
        "description": "Count things.",
        "inputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": "zero"}},
        },
    },
    {
        "name": "strict_breaker",
        "description": "Search records.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "link": {"type": "string", "format": "uri"},
                "filter": {"allOf": [{"type": "object", "properties": {}}]},
                "mode": {"not": {"const": "legacy"}},
                "options": {"type": "object"},
            },
            "if": {"required": ["mode"]},
            "then": {"required": ["filter"]},
        },
    },
    {"name": "dotted.name", "description": "Show a dotted thing.", "inputSchema": _OBJECT},
    {
        "name": "contradiction",
        "description": "Tidy the records.",
        "inputSchema": _OBJECT,
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
    },
]


ARRAY_INPUT: dict[str, Any] = {
    "name": "array_input",
    "description": "Sum numbers.",
    "inputSchema": {"type": "array"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="comma-separated tool names to list")
    parser.add_argument("--broken-listing", action="store_true", help="add array_input")
    args = parser.parse_args()
    wanted = {n for n in args.only.split(",") if n}
    tools = [t for t in TOOLS if not wanted or t["name"] in wanted]
    if args.broken_listing:
        tools.append(ARRAY_INPUT)
    serve(
        {
            "initialize": lambda params: initialize_result(params, name="lint_target"),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": tools},
            "tools/call": lambda params: text_result("ok"),
        }
    )


if __name__ == "__main__":
    main()
