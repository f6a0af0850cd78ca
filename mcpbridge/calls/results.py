"""Call errors and results, shared by the SDK path and the hot path (argument checks:
:mod:`mcpbridge.arguments`).

Free of ``mcp`` imports on purpose: :mod:`mcpbridge.lite` uses them without loading the SDK.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.errors import CodebotError, ServerError
from codebot_mcp.core.secrets.redact import SECRETS, scrub
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.mcpbridge.transport.limits import default_tool_timeout
from codebot_mcp.mcpbridge.transport.rpcerror import bare_message, rpc_error_text
from codebot_mcp.mcpbridge.transport.wire import CONNECTION_CLOSED, REQUEST_TIMEOUT, USER_REJECTED

BREAKS = "The server breaks the protocol; report it to its authors."


class Fallback(Exception):
    """This case is not for the hot path: run the SDK path instead (nothing was called yet)."""


def call_error(
    code: int, message: str, config: ServerConfig, tool: str, *, restarts: bool = True
) -> CodebotError:
    """The error of a protocol-level call failure, as ``mcp call`` words it (both paths).

    ``restarts``: a server that closed the connection will be started again by the next call
    (always for a new ``mcp call``; once per session in ``--batch`` and the warm holder)."""
    if code == REQUEST_TIMEOUT:
        limit = config.tool_timeout or default_tool_timeout()
        return ServerError(
            f"'{tool}' on server '{config.name}' gave no answer within {limit:g} s",
            hint="Pass a larger --timeout, or set 'tool_timeout' for the server.",
        )
    if code == CONNECTION_CLOSED:
        see = f"its stderr is logged (`codebot mcp list --server {config.name}` shows it)"
        return ServerError(
            f"server '{config.name}' closed the connection during '{tool}' (it exited or crashed)",
            hint=f"The next call restarts it; {see}."
            if restarts
            else f"{see[0].upper()}{see[1:]}.",
        )
    if code == USER_REJECTED:  # our own refusal of a request inside the call (SEP-2322)
        return CodebotError(  # exit 1, as when the tool reports an error
            f"'{tool}' on server '{config.name}' could not finish: {bare_message(message)}",
            hint="Pass --allow-sampling SERVER, or --elicit, to answer the server's requests.",
        )
    return ServerError(
        f"server '{config.name}' rejected the call to '{tool}': {rpc_error_text(code, message)}"
    )


def plain_result(result: Mapping[str, Any]) -> ToolResult | None:
    """A ``tools/call`` result of text blocks only, as ``to_tool_result`` renders it; None for
    anything else (the caller then reads it through the SDK's model).
    """
    if not set(result) <= {"content", "structuredContent", "isError", "_meta", "resultType"}:
        return None
    content = result.get("content")
    is_error = result.get("isError", False)
    structured = result.get("structuredContent")
    if not isinstance(content, list) or not isinstance(is_error, bool):
        return None
    if structured is not None and not isinstance(structured, dict):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict) or set(block) != {"type", "text"}:
            return None
        if block["type"] != "text" or not isinstance(block["text"], str):
            return None
        texts.append(block["text"])
    data: dict[str, Any] = {"content": [{"type": "text", "text": t} for t in texts]}
    if structured is not None:
        data["structuredContent"] = structured
    data["isError"] = is_error
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    text, data = SECRETS("\n".join(texts)), scrub(data, SECRETS)
    return ToolResult(text, is_error=is_error, data=data, scrubbed=True)


def validate_output(name: str, schema: Any, result: dict[str, Any]) -> None:
    """The SDK's check of structured content against the tool's output schema, same words."""
    if not isinstance(schema, dict) or result.get("isError"):
        return
    from jsonschema import exceptions as jsonschema_exceptions
    from jsonschema import validators

    if result.get("structuredContent") is None and "structuredContent" not in result:
        raise RuntimeError(
            f"Tool {name} has an output schema but did not return structured content"
        )
    validator = validators.validator_for(schema)(schema)
    error = jsonschema_exceptions.best_match(validator.iter_errors(result.get("structuredContent")))
    if error is not None:
        raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}")


def read_by_sdk(result: dict[str, Any], config: ServerConfig, tool: str, *, version: str) -> Any:
    """A ``tools/call`` answer read as the SDK path's session reads it at that protocol
    ``version``: its model, or the error the SDK path reports for it (same words)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import ValidationError

    from codebot_mcp.mcpbridge._sdk import read_call_result
    from codebot_mcp.mcpbridge.connection.tasks import TaskHooks, TasksExtension
    from codebot_mcp.mcpbridge.connection.tool import describe_invalid_result

    modern = version in MODERN_PROTOCOL_VERSIONS
    claims = TasksExtension(TaskHooks(config.name)).claims() if modern else ()
    if modern and "resultType" not in result:  # the spec's default (transport.resulttype)
        result = {**result, "resultType": "complete"}
    try:
        return read_call_result(result, version, claims)
    except ValidationError as exc:
        raise ServerError(
            f"'{tool}' failed: {describe_invalid_result(exc, config.name)}",
            hint=BREAKS,
        ) from None


def through_sdk(
    result: dict[str, Any], config: ServerConfig, tool: str, *, version: str
) -> ToolResult:
    """Anything but plain text: read by :func:`read_by_sdk`, rendered by ``to_tool_result``."""
    import mcp_types as types

    from codebot_mcp.mcpbridge.connection.tool import to_tool_result

    model = read_by_sdk(result, config, tool, version=version)
    if not isinstance(model, types.CallToolResult):  # another shape, read (not seen yet)
        raise ServerError(f"'{tool}' failed: server '{config.name}' sent no result", hint=BREAKS)
    return to_tool_result(model)


def checked_tool(tool: Any) -> dict[str, Any]:
    """A listed tool as the SDK's model would accept it, or ``Fallback`` (the hot path)."""

    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise Fallback
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        raise Fallback
    for key in ("description", "title"):
        if tool.get(key) is not None and not isinstance(tool[key], str):
            raise Fallback
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise Fallback
    for key in ("readOnlyHint", "destructiveHint", "openWorldHint"):
        if annotations and annotations.get(key) is not None:
            if not isinstance(annotations[key], bool):
                raise Fallback
    output = tool.get("outputSchema")
    if output is not None and not isinstance(output, dict):
        raise Fallback
    return tool
