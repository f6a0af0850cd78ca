"""MCP Apps (SEP-1865), degraded for a terminal: what is app-only, what is a ``ui://`` page.

codebot renders no HTML and does not advertise ``io.modelcontextprotocol/ui``. A server may
still list tools bound to a ``ui://`` page; such a tool works as a plain tool (the spec asks
servers to return text for clients without Apps), *except* one whose ``_meta.ui.visibility``
leaves out ``"model"``: the spec says the host MUST NOT put it in the agent's tool list. So
those tools never reach the model, and ``mcp list`` hides them unless ``--all``.

The app-only filter itself is the wire's (:func:`.transport.wire.app_only`, with
:func:`~.transport.wire.visibility`): both paths split a listing with it, the hot path reading
raw JSON, the SDK path the ``meta`` of ``mcp_types.Tool``.
"""

from __future__ import annotations

from codebot_mcp.core.tools.sources import UI_SCHEME, is_app_page
from codebot_mcp.mcpbridge.transport.wire import UI as UI_EXTENSION
from codebot_mcp.mcpbridge.transport.wire import app_only, visibility

__all__ = ["UI_EXTENSION", "UI_SCHEME", "app_only", "is_app_page", "visibility"]
