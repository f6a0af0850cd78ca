"""What an MCP request is about, for its span: the server, its transport, the tool.

``mcpbridge`` sets :data:`MCP_SCOPE` around its requests (a connection's lifecycle task, each
tool call); :mod:`.otel` reads it when the MCP SDK starts its client span and adds the
attributes there. Plain ``contextvars``: nothing of OpenTelemetry is imported, and setting it
costs the same whether telemetry is on or off.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig

MCP_SCOPE: ContextVar[Mapping[str, Any] | None] = ContextVar("mcp_scope", default=None)
"""The attributes of the MCP requests sent from this context (None: none known)."""

SERVER_NAME = "codebot.mcp.server.name"
"""The server's name in settings (the MCP conventions have no attribute for it)."""


def server_attributes(name: str, url: str | None) -> dict[str, Any]:
    """A server's attributes: its name, and how it is reached (``network.transport`` is
    ``pipe`` for stdio, ``tcp`` and ``server.address``/``server.port`` for HTTP)."""
    if url is None:
        return {SERVER_NAME: name, "network.transport": "pipe"}
    parts = urlsplit(url)
    out: dict[str, Any] = {SERVER_NAME: name, "network.transport": "tcp"}
    if parts.hostname:
        out["server.address"] = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return out
    out["server.port"] = port
    return out


def server_scope(
    config: ServerConfig,
    protocol_version: str | None = None,
    tool: str | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """The attributes of a server's requests (a tool call's with ``gen_ai.tool.name``;
    ``mcp.session.id`` for a handshake-era HTTP server that gave one)."""
    out = server_attributes(config.name, config.url if config.type == "http" else None)
    if protocol_version:
        out["mcp.protocol.version"] = protocol_version
    if tool:
        out["gen_ai.tool.name"] = tool
    if session_id:
        out["mcp.session.id"] = session_id
    return out


@contextmanager
def tool_call(
    config: ServerConfig, protocol_version: str | None, tool: str, session_id: str | None = None
) -> Iterator[None]:
    """:data:`MCP_SCOPE` for one tool call of a server, put back after it."""
    token = MCP_SCOPE.set(server_scope(config, protocol_version, tool, session_id))
    try:
        yield
    finally:
        MCP_SCOPE.reset(token)
