"""Raw JSON-RPC stdio server (no SDK, boots fast) with many tools and cursor pagination.

``--count N`` tools named ``tool_00000``…, ``--page-size P`` per ``tools/list`` page. Each tool
echoes its arguments as JSON. Used by the load tests (20 of these start quickly on 2 cores).

Run: ``python -m tests.servers.many_raw --count 250 --page-size 100``
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from tests.servers._raw import RpcError, initialize_result, serve, text_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=50)
    args = parser.parse_args()
    tools = [
        {
            "name": f"tool_{i:05d}",
            "description": f"Echo the arguments back (tool {i}).",
            "inputSchema": {"type": "object", "properties": {"value": {"type": "string"}}},
        }
        for i in range(args.count)
    ]

    def list_tools(params: dict[str, Any]) -> dict[str, Any]:
        start = int(params.get("cursor") or 0)
        page = tools[start : start + args.page_size]
        result: dict[str, Any] = {"tools": page}
        if start + args.page_size < len(tools):
            result["nextCursor"] = str(start + args.page_size)
        return result

    def call_tool(params: dict[str, Any]) -> dict[str, Any]:
        if not str(params.get("name", "")).startswith("tool_"):
            raise RpcError(-32602, f"Unknown tool: {params.get('name')}")
        return text_result(json.dumps(params.get("arguments") or {}))

    serve(
        {
            "initialize": lambda params: initialize_result(params, name="many"),
            "ping": lambda params: {},
            "tools/list": list_tools,
            "tools/call": call_tool,
        }
    )


if __name__ == "__main__":
    main()
