"""What an MCP request is about, for its span: the server, its transport, the tool.

``mcpbridge`` sets :data:`MCP_SCOPE` around its requests (a connection's lifecycle task, each
tool call); :mod:`.otel` reads it when the MCP SDK starts its client span and adds the
attributes there. Plain ``contextvars``: nothing of OpenTelemetry is imported, and setting it
costs the same whether telemetry is on or off.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

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
