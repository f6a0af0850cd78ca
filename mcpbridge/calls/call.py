"""One tool call from the shell: start one server, validate, call, stop; and the SDK transports
of the Client API (:mod:`mcpbridge.connection.contract`): :class:`ManagedClient` (a
``ToolClient``, ``mcp call``) and :class:`ManagedServers` (a ``ServersClient``, ``mcp list``)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config.servers import ServerConfig, require_usable
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError
from codebot_mcp.core.secrets.redact import Redactor
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.mcpbridge.connection.contract import ListedServer, call_on
from codebot_mcp.mcpbridge.connection.failures import Failure
from codebot_mcp.mcpbridge.connection.manager import Manager
from codebot_mcp.mcpbridge.connection.report import managed_listing
from codebot_mcp.mcpbridge.connection.tool import MCPTool, to_tool_result


class ManagedClient:
    """The SDK transport of :class:`~mcpbridge.connection.contract.ToolClient`: one server of
    a :class:`Manager` (which stops it)."""

    def __init__(self, manager: Manager, config: ServerConfig) -> None:
        self.manager = manager
        self.config = config

    @property
    def failure(self) -> Failure | None:
        return self.manager.failures.get(self.config.name)

    async def start(self) -> None:
        await self.manager.start_all([self.config.name])
        running = self.manager.clients.get(self.config.name)
        if running is not None:  # it crashed on an earlier call (--batch, the warm holder)
            await running.restart_if_crashed()

    def tools(self) -> list[MCPTool]:
        # An app-only tool (MCP Apps) is never offered to the model, but the user may call it.
        return [*self.manager.tools(), *self.manager.app_tools()]

    async def call(self, tool: MCPTool, arguments: dict[str, Any]) -> ToolResult:
        client = self.manager.clients[self.config.name]
        try:
            result = await client.call_tool(tool.original_name, arguments)
        except CodebotError:
            raise
        except Exception as exc:  # boundary: whatever the SDK raises is this call's failure
            raise client.call_failure(exc, tool.original_name, tool.name).error() from None
        return to_tool_result(result)


class ManagedServers:
    """The SDK transport of :class:`~mcpbridge.connection.contract.ServersClient`: every
    server of a :class:`Manager` (which stops them), started together."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager

    async def start(self) -> None:
        await self.manager.start_all()

    def listing(self) -> list[ListedServer]:
        return managed_listing(self.manager)


async def call_once(
    manager: Manager, config: ServerConfig, tool_name: str, arguments: dict[str, Any]
) -> ToolResult:
    """Start ``config``'s server in ``manager``, call ``tool_name`` and return its result
    (:func:`~mcpbridge.connection.contract.call_on`, the steps the hot path takes too).

    Raises:
        UsageError: the tool is unknown, or the arguments do not match its input schema.
        ServerError: the server cannot be reached, or dies or times out during the call.
    """
    client = ManagedClient(manager, config)
    await client.start()
    return await call_on(client, config.name, tool_name, arguments)


BatchReader = Callable[[], Awaitable[str]]
"""Returns the next request line, or "" at the end of the input."""


async def call_batch(
    manager: Manager,
    servers: Mapping[str, ServerConfig],
    read_line: BatchReader,
    emit: Callable[[dict[str, Any]], None],
) -> bool:
    """Answer one JSON request per line: ``{"server", "tool", "arguments"}``.

    Servers start on first use and stay connected for the following lines. Each answer is one
    JSON object: the result (``content``, ``structuredContent``, ``isError``) or an ``error``
    with its message, hint and the exit code a single call would have had.

    Returns:
        True when every line succeeded.
    """
    ok = True
    number = 0
    while line := await read_line():
        number += 1
        if not line.strip():
            continue
        answer: dict[str, Any] = {"line": number}
        try:
            server, tool, arguments = _parse_request(line)
            answer.update(server=server, tool=tool)
            if server not in servers:
                known = ", ".join(servers) or "none"
                raise UsageError(f"unknown server '{server}' (configured: {known})")
            require_usable(servers[server])
            result = await call_once(manager, servers[server], tool, arguments)
            answer.update(result.data)
            ok = ok and not result.is_error
        except CodebotError as exc:
            ok = False
            answer["error"] = {
                "message": exc.message,
                "hint": exc.hint,
                "exit_code": int(exc.exit_code),
            }
        except Exception as exc:  # boundary: one bad line never ends the batch
            ok = False
            secrets = [v for c in servers.values() for v in (*c.headers.values(), *c.env.values())]
            answer["error"] = {
                "message": Redactor(secrets)(f"unexpected error: {type(exc).__name__}: {exc}"),
                "hint": "Re-run with --debug for details.",
                "exit_code": int(ExitCode.TOOL_ERROR),
            }
        emit(answer)
    return ok


_REQUEST_KEYS = ("server", "tool", "arguments")


def _parse_request(line: str) -> tuple[str, str, dict[str, Any]]:
    try:
        request = jsonutil.loads(line)
    except json.JSONDecodeError as exc:
        raise UsageError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(request, dict):
        raise UsageError("a request must be a JSON object")
    unknown = [k for k in request if k not in _REQUEST_KEYS]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), _REQUEST_KEYS, n=1)
        suggestion = f" (did you mean '{close[0]}'?)" if close else ""
        raise UsageError(
            f"unknown key '{unknown[0]}' in the request{suggestion}",
            hint='A request holds "server", "tool" and "arguments" (an object), nothing else.',
        )
    server, tool = request.get("server"), request.get("tool")
    arguments = request.get("arguments", {})
    if not isinstance(server, str) or not isinstance(tool, str):
        raise UsageError('a request needs "server" and "tool" strings')
    if not isinstance(arguments, dict):
        raise UsageError('"arguments" must be a JSON object')
    return server, tool, arguments
