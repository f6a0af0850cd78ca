"""The checks of ``codebot mcp doctor``, one module per family; importing registers them all."""

from codebot_mcp.mcpbridge.doctor.checks import (
    connection,
    entries,
    pinning,
    policy,
    registry,
    tools,
    totals,
)
from codebot_mcp.mcpbridge.doctor.checks.base import (
    CHECKS,
    SEVERITIES,
    Check,
    Finding,
    ServerContext,
    Severity,
    ToolContext,
    ToolEntry,
    TotalsContext,
    check,
    checks_in,
)

__all__ = [
    "CHECKS",
    "SEVERITIES",
    "Check",
    "Finding",
    "ServerContext",
    "Severity",
    "ToolContext",
    "ToolEntry",
    "TotalsContext",
    "check",
    "checks_in",
    "connection",
    "entries",
    "pinning",
    "policy",
    "registry",
    "tools",
    "totals",
]
