"""A server with many tools and real cursor pagination on ``tools/list`` (low-level ``Server``).

Options:

- ``--count N`` (default 100): tools ``tool_0000`` ... ``tool_{N-1:04d}``;
- ``--page-size P`` (default 50): at most P tools per ``tools/list`` page; the
  cursor is the opaque string ``"offset:<i>"``, and ``nextCursor`` is absent
  on the last page. A malformed cursor is answered with ``-32602``;
- ``--long-names``: every name is padded with ``_x`` to exactly 80 characters
  (valid MCP names, but longer than OpenAI's 64-character limit).

Each tool accepts any arguments and echoes them back as JSON text
(``{"tool": <name>, "arguments": {...}}``).

Run: ``python -m tests.servers.many_tools [--count N] [--page-size P] [--long-names]``
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

LONG_NAME_LENGTH = 80


def tool_name(index: int, *, long_names: bool) -> str:
    name = f"tool_{index:04d}"
    if long_names:
        name = (name + "_" + "x" * LONG_NAME_LENGTH)[:LONG_NAME_LENGTH]
    return name


def build_server(count: int, page_size: int, long_names: bool) -> Server[Any]:
    tools = [
        Tool(
            name=tool_name(i, long_names=long_names),
            description=f"Test tool number {i}; echoes its arguments.",
            input_schema={
                "type": "object",
                "properties": {"value": {"type": "string", "description": "Anything"}},
            },
        )
        for i in range(count)
    ]
    names = {tool.name for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            prefix, _, number = cursor.partition(":")
            if prefix != "offset" or not number.isdigit() or int(number) > len(tools):
                raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
            start = int(number)
        end = start + page_size
        next_cursor = f"offset:{end}" if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name not in names:
            return CallToolResult(
                content=[TextContent(text=f"Unknown tool: {params.name}")], is_error=True
            )
        payload = {"tool": params.name, "arguments": params.arguments or {}}
        return CallToolResult(content=[TextContent(text=json.dumps(payload, sort_keys=True))])

    return Server("many_tools", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def amain(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--long-names", action="store_true")
    args = parser.parse_args()
    if args.count < 0 or args.page_size < 1:
        parser.error("--count must be >= 0 and --page-size >= 1")
    anyio.run(amain, build_server(args.count, args.page_size, args.long_names))


if __name__ == "__main__":
    main()
