"""The MCP extension identifiers codebot knows, in one SDK-free place (the hot path reads them
too): which it declares, and which it deliberately does not."""

from __future__ import annotations

TASKS = "io.modelcontextprotocol/tasks"
"""Tasks (SEP-2663): declared on 2026-07-28 requests (``mcpbridge.connection.tasks``)."""
UI = "io.modelcontextprotocol/ui"
"""MCP Apps (SEP-1865): never declared; app-only tools are kept from the model instead
(``mcpbridge.tools.apps``)."""
