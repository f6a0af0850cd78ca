"""The checks of ``codebot mcp doctor``, one module per family; importing registers them all."""

from codebot_mcp.mcpbridge.doctor.checks import (
    connection_checks,
    entry_checks,
    pin_checks,
    policy_checks,
    registry_checks,
    tool_checks,
    totals_checks,
)
from codebot_mcp.mcpbridge.doctor.checks.check_base import (
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
    "connection_checks",
    "entry_checks",
    "pin_checks",
    "policy_checks",
    "registry_checks",
    "tool_checks",
    "totals_checks",
]
