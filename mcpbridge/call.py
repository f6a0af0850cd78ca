"""One tool call from the shell: start one server, validate, call, stop."""

from __future__ import annotations

import difflib
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError

from core.errors import ServerError, UsageError
from core.settings import ServerConfig
from core.tools import ToolResult
from mcpbridge.manager import Manager
from mcpbridge.tool import MCPTool, to_tool_result


async def call_once(
    manager: Manager, config: ServerConfig, tool_name: str, arguments: dict[str, Any]
) -> ToolResult:
    """Start ``config``'s server in ``manager``, call ``tool_name`` and return its result.

    Raises:
        UsageError: the tool is unknown, or the arguments do not match its input schema.
        ServerError: the server cannot be reached, or dies or times out during the call.
    """
    await manager.start_all([config.name])
    failure = manager.failures.get(config.name)
    if failure is not None:
        raise ServerError(f"server '{config.name}': {failure.describe()}", hint=failure.hint)
    tool = find_tool(manager.tools(), config.name, tool_name)
    problem = validation_error(tool.schema(), arguments)
    if problem:
        raise UsageError(
            f"arguments for '{tool.original_name}' do not match its schema: {problem}",
            hint=f"See the schema with: codebot mcp list --server {config.name} --schemas",
        )
    client = manager.clients[config.name]
    try:
        result = await client.call_tool(tool.original_name, arguments)
    except MCPError as exc:
        raise _call_error(exc, config, tool.original_name) from None
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError) as exc:
        raise ServerError(
            f"server '{config.name}' went away during the call: {exc or type(exc).__name__}"
        ) from None
    return to_tool_result(result)


def _call_error(exc: MCPError, config: ServerConfig, tool: str) -> ServerError:
    if exc.code == types.REQUEST_TIMEOUT:
        return ServerError(
            f"'{tool}' on server '{config.name}' gave no answer within {config.tool_timeout:g} s",
            hint="Pass a larger --timeout, or set 'tool_timeout' for the server.",
        )
    if exc.code == types.CONNECTION_CLOSED:
        return ServerError(
            f"server '{config.name}' closed the connection during '{tool}' (it exited or crashed)",
            hint=f"Its stderr is logged; run `codebot mcp list --server {config.name}` to see it.",
        )
    return ServerError(
        f"server '{config.name}' rejected the call to '{tool}': {exc.message} "
        f"(MCP error {exc.code})"
    )


def find_tool(tools: list[MCPTool], server: str, name: str) -> MCPTool:
    """A tool by its own name or its model-visible name; a usage error names close matches."""
    for tool in tools:
        if name in (tool.original_name, tool.name):
            return tool
    names = [t.original_name for t in tools]
    close = difflib.get_close_matches(name, names, n=3)
    hint = (
        f"Did you mean {', '.join(close)}?"
        if close
        else f"List them with: codebot mcp list --server {server}"
    )
    raise UsageError(f"server '{server}' has no tool '{name}' ({len(names)} tools)", hint=hint)


def validation_error(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """The first way ``arguments`` break ``schema``, or None (a broken schema is not checked)."""
    import jsonschema

    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    errors = sorted(validator_cls(schema).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path)
    return f"{where + ': ' if where else ''}{first.message}"
