"""The only module of the bridge that imports private parts of the MCP SDK.

Everything else imports from public paths (``mcp``, ``mcp.client``, ``mcp_types``) or from
here. What the SDK path needs and the SDK does not export: the type of a transport's streams.
The hot path (:mod:`mcpbridge.calls.lite`) needs nothing private: it reads the rare answer it
cannot read itself with the SDK's public models (``calls.results.read_call_result``).
``pyproject.toml`` pins ``mcp`` below its next major; when the SDK moves these names, this file
is the one to change.
"""

from __future__ import annotations

from mcp.client import Transport

# private: the (read stream, write stream) pair a Transport yields; the SDK exports the
# Transport protocol but not this alias of its value (mcp 2.3).
from mcp.client._transport import TransportStreams  # noqa: TID251

__all__ = ["Transport", "TransportStreams"]
