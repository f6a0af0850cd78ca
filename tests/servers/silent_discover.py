"""Raw JSON-RPC stdio server that behaves like an old server ignoring unknown methods.

No SDK import, so it boots in tens of milliseconds. It answers:

- ``initialize``: echoes the client's ``protocolVersion`` when it is one of
  2024-11-05 / 2025-03-26 / 2025-06-18 / 2025-11-25, else 2025-11-25;
  ``serverInfo.name`` is ``"silent"``, capabilities ``{"tools": {}}``;
- ``ping``: ``{}``;
- ``tools/list``: one tool ``hello`` with an empty object input schema;
- ``tools/call``: ``hello`` returns the text ``hello from silent``.

Notifications are ignored, and any OTHER request (including the 2026-07-28
``server/discover`` probe) gets no answer at all. A ``Client(..., mode="auto")``
therefore waits for the SDK's discover timeout (10 s) before falling back to
``initialize``; ``mode="legacy"`` connects immediately.

Run: ``python -m tests.servers.silent_discover``
"""

from __future__ import annotations

from typing import Any

from tests.servers._raw import RpcError, initialize_result, serve, text_result

HELLO_TOOL = {
    "name": "hello",
    "description": "Say hello.",
    "inputSchema": {"type": "object", "properties": {}},
}


def _call_tool(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("name") != "hello":
        raise RpcError(-32602, f"Unknown tool: {params.get('name')}")
    return text_result("hello from silent")


def main() -> None:
    serve(
        {
            "initialize": lambda params: initialize_result(params, name="silent"),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": [HELLO_TOOL]},
            "tools/call": _call_tool,
        },
        unknown="ignore",
    )


if __name__ == "__main__":
    main()
