"""A server whose tool list changes at runtime (low-level SDK ``Server``).

Initial tools: ``add_tool(name)``, ``remove_tool(name)``, ``ping_tool()``
(returns ``pong``). ``add_tool`` registers a new tool ``name`` (calling it
returns ``<name> called``) and answers ``added <name>``; ``remove_tool``
removes one and answers ``removed <name>``. Both tell the client that the
tool list changed, in whichever protocol era the connection speaks:

- handshake era (``initialize``, <= 2025-11-25; ``Client(mode="legacy")``):
  ``ctx.session.send_tool_list_changed()`` sends
  ``notifications/tools/list_changed`` on the connection's standalone channel
  (the client's ``message_handler`` receives a ``ToolListChangedNotification``).
  The ``tools.listChanged`` capability is advertised by passing
  ``NotificationOptions(tools_changed=True)`` to
  ``create_initialization_options``.
- 2026-07-28 (``Client(mode="auto")`` against this v2 server): change
  notifications only travel on ``subscriptions/listen`` streams, so the tool
  publishes ``ToolsListChanged()`` on a ``SubscriptionBus``; the
  ``ListenHandler(bus)`` registered as ``on_subscriptions_listen`` delivers it
  to ``client.listen(tools_list_changed=True)``. (On a 2026 connection the SDK
  drops a bare ``send_tool_list_changed()`` with a debug log.)

``drop_listen(abrupt)`` ends every open listen stream (2026-07-28): gracefully (the handler's
``close``, the stream's final result) or, with ``abrupt: true``, with an error answer to the
listen request (the client sees the subscription lost). A client that reopens its stream hears
the next change; one that does not never does. It answers ``dropped N`` (streams open then);
``listeners()`` answers how many are open.

Run: ``python -m tests.servers.mutating``
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import MCPError
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.types import (
    INTERNAL_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Tool name"}},
    "required": ["name"],
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

TOOLS: dict[str, Tool] = {
    "add_tool": Tool(
        name="add_tool", description="Register a new tool at runtime.", input_schema=NAME_SCHEMA
    ),
    "remove_tool": Tool(
        name="remove_tool", description="Unregister a tool at runtime.", input_schema=NAME_SCHEMA
    ),
    "ping_tool": Tool(name="ping_tool", description="Answer pong.", input_schema=EMPTY_SCHEMA),
    "listeners": Tool(
        name="listeners",
        description="How many listen streams are open.",
        input_schema=EMPTY_SCHEMA,
    ),
    "drop_listen": Tool(
        name="drop_listen",
        description="End every open listen stream (abrupt: with an error).",
        input_schema={"type": "object", "properties": {"abrupt": {"type": "boolean"}}},
    ),
}

bus = InMemorySubscriptionBus()
listen_handler = ListenHandler(bus)
open_streams: list[anyio.Event] = []
"""One event per open listen stream: set it to end that stream with an error."""


async def on_listen(ctx: ServerRequestContext[Any], params: Any) -> Any:
    """``ListenHandler``, plus a way to drop the stream abruptly (an error answer)."""
    dropped = anyio.Event()
    open_streams.append(dropped)
    result: Any = None
    try:
        async with anyio.create_task_group() as tg:

            async def serve() -> None:
                nonlocal result
                result = await listen_handler(ctx, params)
                tg.cancel_scope.cancel()

            tg.start_soon(serve)
            await dropped.wait()
            tg.cancel_scope.cancel()
    finally:
        open_streams.remove(dropped)
    if dropped.is_set():
        raise MCPError(INTERNAL_ERROR, "the listen stream dropped (test server)")
    return result


def _text(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=is_error)


async def notify_tools_changed(ctx: ServerRequestContext[Any]) -> None:
    """Tell the client the tool list changed, the way its protocol era expects."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await bus.publish(ToolsListChanged())  # reaches subscriptions/listen streams
    else:
        await ctx.session.send_tool_list_changed()  # notifications/tools/list_changed


async def list_tools(
    ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
) -> ListToolsResult:
    return ListToolsResult(tools=list(TOOLS.values()))


async def call_tool(
    ctx: ServerRequestContext[Any], params: CallToolRequestParams
) -> CallToolResult:
    arguments = params.arguments or {}
    if params.name not in TOOLS:
        return _text(f"Unknown tool: {params.name}", is_error=True)
    if params.name == "ping_tool":
        return _text("pong")
    if params.name == "listeners":
        return _text(str(len(open_streams)))
    if params.name == "drop_listen":
        count = len(open_streams)
        if arguments.get("abrupt"):
            for dropped in list(open_streams):
                dropped.set()
        else:
            listen_handler.close()
        return _text(f"dropped {count}")
    if params.name in ("add_tool", "remove_tool"):
        name = arguments.get("name")
        if not isinstance(name, str) or not name:
            return _text("argument 'name' (non-empty string) is required", is_error=True)
        if params.name == "add_tool":
            if name in TOOLS:
                return _text(f"tool {name} already exists", is_error=True)
            TOOLS[name] = Tool(
                name=name, description=f"Dynamically added tool {name}.", input_schema=EMPTY_SCHEMA
            )
            await notify_tools_changed(ctx)
            return _text(f"added {name}")
        if name not in TOOLS:
            return _text(f"no tool named {name}", is_error=True)
        del TOOLS[name]
        await notify_tools_changed(ctx)
        return _text(f"removed {name}")
    return _text(f"{params.name} called")


server: Server[Any] = Server(
    "mutating",
    version="0.1.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_subscriptions_listen=on_listen,
)


async def amain() -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


def main() -> None:
    anyio.run(amain)


if __name__ == "__main__":
    main()
