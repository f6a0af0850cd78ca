"""Raw JSON-RPC stdio server (no SDK) for the conformance defects codebot once had.

Handshake era only. Tools:

- ``headers(region, verbose?)``: answers the arguments it received, as JSON. ``verbose`` is an
  optional boolean, so ``verbose: null`` (SEP-2243: a parameter whose header is omitted) is a
  valid call that a client's own schema check must not refuse;
- ``malformed()``: answers with a result that breaks the MCP schema (a text block without
  ``text``), which the SDK rejects;
- ``off_schema()``: declares an ``outputSchema`` and answers structured content that breaks it.

Run: ``python -m tests.servers.odd_results``
"""

from __future__ import annotations

import json
from typing import Any

from tests.servers._raw import RpcError, initialize_result, serve, text_result

TOOLS = [
    {
        "name": "headers",
        "description": "Echo the arguments received.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string"}, "verbose": {"type": "boolean"}},
            "required": ["region"],
        },
    },
    {
        "name": "malformed",
        "description": "Answer with a result that breaks the MCP schema.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "off_schema",
        "description": "Answer structured content that breaks the declared outputSchema.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    },
]


def _call_tool(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if name == "headers":
        return text_result(json.dumps(params.get("arguments") or {}, sort_keys=True))
    if name == "malformed":
        return {"content": [{"type": "text"}], "isError": False}
    if name == "off_schema":
        return {
            "content": [{"type": "text", "text": '{"count": "many"}'}],
            "structuredContent": {"count": "many"},
            "isError": False,
        }
    raise RpcError(-32602, f"Unknown tool: {name}")


def main() -> None:
    serve(
        {
            "initialize": lambda params: initialize_result(params, name="odd-results"),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": TOOLS},
            "tools/call": _call_tool,
        }
    )


if __name__ == "__main__":
    main()
