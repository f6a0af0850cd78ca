"""The checks of ``codebot mcp doctor``, one module per family; importing registers them all.

:mod:`.check_base` is what every check works with (findings, contexts, the registry). The
families: :mod:`.entry_checks` (settings files and entries), :mod:`.connection_checks`
(launch, handshake, listing), :mod:`.tool_checks` (each tool, with the JSON Schema helpers of
:mod:`.schema_checks`), :mod:`.pin_checks` (rug pulls, poisoning), :mod:`.totals_checks`
(every server at once), :mod:`.policy_checks` (the managed settings), :mod:`.registry_checks`
(entries from the MCP Registry).
"""

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
