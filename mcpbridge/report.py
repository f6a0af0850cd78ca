"""Plain-data views of servers and tools, for ``mcp list`` (text and JSON) and ``/mcp``.

Secrets never enter these views: env and header values are masked, URLs lose credentials.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.redact import redact_url, redact_values
from core.servers import ServerConfig

if TYPE_CHECKING:  # no SDK import at run time: the hot path (mcpbridge.lite) uses these views
    from mcpbridge.manager import Manager, ServerStatus
    from mcpbridge.tool import MCPTool


def config_view(config: ServerConfig) -> dict[str, Any]:
    """The entry as configured, secrets masked."""
    view: dict[str, Any] = {
        "transport": config.type,
        "source": str(config.source),
        "overrides": str(config.overrides) if config.overrides else None,
        "enabled": config.enabled,
    }
    if config.type == "http":
        view["url"] = redact_url(config.url or "")
        view["headers"] = redact_values(config.headers)
    else:
        view["command"] = config.command
        view["args"] = [redact_url(a) for a in config.args]
        view["env"] = redact_values(config.env)
        view["cwd"] = str(config.cwd) if config.cwd else None
    return view


def tool_view(tool: MCPTool, *, schema: bool = False) -> dict[str, Any]:
    """One tool: visible and original name, capability with its reason, description."""
    permission = tool.permission()
    view: dict[str, Any] = {
        "name": tool.name,
        "original_name": tool.original_name,
        "name_adjusted": tool.name_reason,
        "capability": permission.capability.value,
        "capability_reason": permission.reason,
        "description": tool.description,
    }
    if schema:
        view["input_schema"] = tool.schema()
    return view


def server_view(status: ServerStatus, manager: Manager, *, schemas: bool = False) -> dict[str, Any]:
    """One server with its status, handshake facts, failure and tools."""
    client = manager.clients.get(status.name)
    info = client.info if client else None
    view: dict[str, Any] = {
        "name": status.name,
        "status": status.status,
        **config_view(status.config),
        "protocol_version": status.protocol_version,
        "server_info": {"name": info.name, "version": info.version} if info else None,
        "handshake_ms": round(info.handshake_ms, 1) if info else None,
        "tool_count": status.tool_count,
        "error": None,
        "tools": [tool_view(t, schema=schemas) for t in manager.tools() if t.server == status.name],
    }
    if status.failure is not None:
        f = status.failure
        view["error"] = {
            "stage": f.stage,
            "message": f.message,
            "hint": f.hint,
            "stderr_tail": f.stderr_tail,
            "log_file": str(f.log_file) if f.log_file else None,
        }
    elif status.error:
        view["error"] = {"stage": "list", "message": status.error, "hint": None}
    return view
