"""What every doctor check works with: findings, the contexts checks read, and the registry.

A check is a plain function from a context to findings, registered with :func:`check` under a
stable id. Its *scope* says which context it gets and when it runs:

- ``settings``: once, over the loaded settings;
- ``entry``: for every enabled server, valid entry or not;
- ``config``: for every enabled server whose entry is valid;
- ``connect``: for every server a connection was attempted to;
- ``server`` / ``tool``: for every connected server / each of its tools;
- ``registry``: for every enabled server, once the connections are done and the registries
  of installed servers have answered (``--offline``: they are not asked);
- ``totals``: once, over every server.

Adding a check is adding one decorated function; ids are part of the JSON and JUnit output,
so never rename one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.config.settings import Settings

if TYPE_CHECKING:
    import mcp_types as types

    from codebot_mcp.core.registry.newversions import UpdateCheck
    from codebot_mcp.mcpbridge.connection.mcp_client import Client
    from codebot_mcp.mcpbridge.connection.tool import MCPTool

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
Scope = Literal["settings", "entry", "config", "connect", "server", "tool", "registry", "totals"]
SCOPES: tuple[Scope, ...] = (
    "settings",
    "entry",
    "config",
    "connect",
    "server",
    "tool",
    "registry",
    "totals",
)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem (or fact) a check found: what is wrong, and how to fix it."""

    check: str
    """The stable id of the check, e.g. ``tool.schema``."""
    severity: Severity
    message: str
    """What is wrong, naming the server (and tool, and settings key)."""
    hint: str | None = None
    """How to fix it, naming the file to edit when there is one."""
    server: str | None = None
    tool: str | None = None
    """The tool's own name on its server."""
    file: Path | None = None
    """The settings file the finding is about."""
    key: str | None = None
    """The settings key the finding is about, e.g. ``env.API_TOKEN`` or ``command``."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool as the model sees it, with its estimated token cost."""

    tool: MCPTool
    tokens: int


@dataclass(slots=True)
class ServerContext:
    """Everything known about one server while its checks run."""

    config: ServerConfig
    settings: Settings = field(repr=False)  # its servers: a repr per server is quadratic
    environ: Mapping[str, str] = field(repr=False)
    trusted: bool = True
    """False for a project server whose project is not trusted (it is never started)."""
    trust_state: str = "not trusted (or its servers changed since)"
    """How the untrusted project is described: ``not trusted``, or ``changed since it was
    trusted (changed: tools/server.py)`` (``core.config.trust.TrustCheck.state``)."""
    client: Client | None = None
    """Set once a connection was attempted."""
    listed: list[types.Tool] | None = None
    """Every tool the server listed, before include/exclude; None when unknown."""
    tools: list[ToolEntry] = field(default_factory=list[ToolEntry])
    """The tools the model sees, after include/exclude, with their visible names."""
    update: UpdateCheck | None = None
    """What the entry's registry says of newer versions (entries ``mcp install`` wrote;
    None offline, or for other entries)."""

    @property
    def name(self) -> str:
        """The server's name in settings."""
        return self.config.name

    @property
    def where(self) -> str:
        """``server 'x' in /path/settings.json``, for hints."""
        return f"server '{self.config.name}' in {self.config.source}"

    def finding(
        self,
        check_id: str,
        severity: Severity,
        message: str,
        hint: str | None = None,
        *,
        key: str | None = None,
        tool: str | None = None,
    ) -> Finding:
        """A finding about this server (the settings file is filled in)."""
        return Finding(check_id, severity, message, hint, self.name, tool, self.config.source, key)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """One tool of a connected server."""

    server: ServerContext
    entry: ToolEntry

    @property
    def tool(self) -> MCPTool:
        """The adapted tool."""
        return self.entry.tool

    def finding(
        self, check_id: str, severity: Severity, message: str, hint: str | None = None
    ) -> Finding:
        """A finding about this tool."""
        return self.server.finding(
            check_id, severity, message, hint, tool=self.entry.tool.original_name
        )


@dataclass(frozen=True, slots=True)
class TotalsContext:
    """Every checked server at once (``settings`` and ``totals`` scopes)."""

    settings: Settings = field(repr=False)  # its servers: a repr per server is quadratic
    servers: list[ServerContext]
    selected: bool = False
    """True when ``--server`` narrowed the set."""
    withheld: Sequence[str] = ()
    """Project settings that wait for trust (left out of ``settings``): their keys."""


CheckFunction = Callable[[Any], Iterable[Finding]]


@dataclass(frozen=True, slots=True)
class Check:
    """A registered check."""

    id: str
    scope: Scope
    severity: Severity
    """The most severe finding it can report (documentation; findings carry their own)."""
    summary: str
    """What it catches, one line (``--list-checks`` and the table in docs/doctor.md)."""
    run: CheckFunction


CHECKS: list[Check] = []
"""Every check, in the order they run: scope by scope, registration order within one."""


def check(
    check_id: str, scope: Scope, severity: Severity, summary: str
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as the check ``check_id``.

    The function takes the context of its scope (:class:`ServerContext` for entry, config,
    connect and server; :class:`ToolContext` for tool; :class:`TotalsContext` for settings
    and totals) and returns or yields findings.
    """

    def register(func: CheckFunction) -> CheckFunction:
        if any(c.id == check_id for c in CHECKS):
            raise ValueError(f"check id '{check_id}' is registered twice")
        CHECKS.append(Check(check_id, scope, severity, summary, func))
        # Keep the list in run order (scope by scope) whatever order modules import in.
        CHECKS.sort(key=lambda c: SCOPES.index(c.scope))
        return func

    return register


def checks_in(scope: Scope) -> list[Check]:
    """The registered checks of one scope, in registration order."""
    return [c for c in CHECKS if c.scope == scope]
