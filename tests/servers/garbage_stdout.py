"""Raw JSON-RPC stdio server that first writes non-JSON garbage to stdout.

No SDK import. Before reading stdin it prints a few lines a careless server
might log to stdout (plain text, broken JSON, valid JSON that is not
JSON-RPC). Then it serves like a well-behaved 2025-era server:

- ``initialize`` (echoes a known handshake version, else 2025-11-25;
  ``serverInfo.name`` is ``"garbage"``), ``ping``;
- ``tools/list``: one tool ``echo(text: str)``; ``tools/call`` echoes ``text``;
- unknown requests (including ``server/discover``) get ``-32601 Method not
  found``, so ``mode="auto"`` falls back to ``initialize`` at once.

``--interleave`` also writes a garbage line before every response.

Run: ``python -m tests.servers.garbage_stdout [--interleave]``
"""

from __future__ import annotations

import argparse
from typing import Any

from tests.servers._raw import RpcError, initialize_result, serve, text_result, write_line

GARBAGE_LINES = (
    "Starting garbage server v0.1 ...",
    "{not json at all",
    "[1, 2, 3]",
    '{"jsonrpc": "2.0", "method": 42}',
    "WARNING: this server writes logs to stdout",
)

ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def _call_tool(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("name") != "echo":
        raise RpcError(-32602, f"Unknown tool: {params.get('name')}")
    arguments = params.get("arguments") or {}
    return text_result(str(arguments.get("text", "")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--interleave", action="store_true", help="garbage before every response")
    args = parser.parse_args()

    for line in GARBAGE_LINES:
        write_line(line)

    def garbage_before_response() -> None:
        write_line("garbage between messages")

    serve(
        {
            "initialize": lambda params: initialize_result(params, name="garbage"),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": [ECHO_TOOL]},
            "tools/call": _call_tool,
        },
        unknown="error",
        before_response=garbage_before_response if args.interleave else None,
    )


if __name__ == "__main__":
    main()
