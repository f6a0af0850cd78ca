"""What ``mcp list`` and ``mcp call`` read of one server's connection, whichever transport
carries it: the SDK's (:class:`~.mcp_client.Client` and its :class:`~.tool.MCPTool`) or the
hot path's (:mod:`mcpbridge.calls.lite`: ``LiteServer`` and ``LiteTool``).

The handshake's facts are one record (:class:`ServerInfo`), a listed tool and a reached server
one protocol each (:class:`ListedTool`, :class:`Reached`), and a failure the one
:class:`~.failures.Failure` record, so :mod:`.report` renders both transports from the same
types, and a tool is found by name the same way on both (:func:`find_tool`).

One Client API per command, two transports each: ``mcp call`` drives a :class:`ToolClient`
(one server: start, tools, call; :func:`call_on`), ``mcp list`` a :class:`ServersClient`
(several servers started together: start, listing, each server one :class:`ListedServer`).
Free of SDK imports: the hot path uses it without loading the SDK.
"""

from __future__ import annotations

__all__ = [
    "ListedServer",
    "ListedTool",
    "Reached",
    "ServerInfo",
    "ServersClient",
    "ToolClient",
    "call_on",
    "find_tool",
]

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.tools.base import ToolInfo, ToolResult
from codebot_mcp.mcpbridge.connection.failures import Failure, unknown_tool
from codebot_mcp.mcpbridge.tools.call_arguments import checked_arguments


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the handshake told us."""

    protocol_version: str
    name: str | None
    version: str | None
    capabilities: dict[str, Any]
    instructions: str | None
    handshake_ms: float


class ListedTool(Protocol):
    """A tool as a server listed it, named for codebot (``mcp__server__tool`` rules)."""

    @property
    def name(self) -> str:
        """The name codebot shows and the model calls."""
        ...

    @property
    def original_name(self) -> str:
        """The name on the wire."""
        ...

    @property
    def name_reason(self) -> str | None:
        """Why :attr:`name` differs from the plain one (a collision, its length), if it does."""
        ...

    @property
    def description(self) -> str: ...

    @property
    def info(self) -> ToolInfo:
        """Origin, server, original name and capability (with its reason)."""
        ...

    def schema(self) -> dict[str, Any]:
        """The input schema, normalized."""
        ...

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """The first way ``arguments`` break the input schema; None when they fit."""
        ...


T = TypeVar("T", bound=ListedTool)


class ToolClient(Protocol[T]):
    """One server's connection as ``mcp call`` drives it, on either transport: the SDK's
    (``calls.call.ManagedClient``, a ``Client`` in a ``Manager``) or the hot path's
    (``calls.lite.LiteClient``). Leaving the context that made it stops it."""

    @property
    def failure(self) -> Failure | None:
        """Why the server is not usable, the one record (None: it is)."""
        ...

    async def start(self) -> None:
        """Launch the server (or take its process), make the handshake and list the tools;
        a failure is recorded in :attr:`failure`, never raised."""
        ...

    def tools(self) -> Sequence[T]:
        """The listed tools, the offered ones then the app-only ones."""
        ...

    async def call(self, tool: T, arguments: dict[str, Any]) -> ToolResult:
        """Call ``tool`` once.

        Raises:
            ServerError: the call failed (``CallFailure.error()``: stage, kind, message, hint).
        """
        ...


async def call_on(
    client: ToolClient[T], server: str, tool_name: str, arguments: dict[str, Any]
) -> ToolResult:
    """One call on a started ``client``, the same steps on both transports: its failure, the
    tool found by name, the arguments checked against its schema, the call.

    Raises:
        UsageError: the tool is unknown, or the arguments do not match its input schema.
        ServerError: the server cannot be reached, or dies or times out during the call.
    """
    if client.failure is not None:
        raise client.failure.error()
    tool = find_tool(client.tools(), server, tool_name)
    return await client.call(tool, checked_arguments(tool, arguments, server))


def find_tool(tools: Sequence[T], server: str, name: str) -> T:
    """A tool by its own name or its model-visible name, on either transport; a usage error
    names close matches (:func:`.failures.unknown_tool`)."""
    for tool in tools:
        if name in (tool.original_name, tool.name):
            return tool
    raise unknown_tool(server, name, [t.original_name for t in tools])


class Reached(Protocol):
    """A server whose handshake answered."""

    @property
    def info(self) -> ServerInfo | None:
        """The handshake's facts (None: it never answered)."""
        ...

    @property
    def dpop_state(self) -> str | None:
        """How its tokens are bound (HTTP with OAuth: ``bound``, ``bearer``); None unknown."""
        ...


@dataclass(frozen=True, slots=True)
class ListedServer:
    """One server as ``mcp list`` shows it, whichever transport reached it
    (:func:`.report.listed_view` renders it)."""

    name: str
    status: str
    """``connected``, ``failed``, ``needs login``, ``disabled`` or ``pending``."""
    config: ServerConfig
    reached: Reached | None = None
    """Its handshake's facts, when it answered (a server the lock holds back has them)."""
    tools: Sequence[ListedTool] = ()
    """What the model is offered, named across every server listed."""
    app_tools: Sequence[ListedTool] = ()
    """The app-only tools (MCP Apps), named alike."""
    failure: Failure | None = None
    stale: str | None = None
    """Connected, but its re-list failed: why (the tools are the last good listing)."""


class ServersClient(Protocol):
    """Several servers' connections as ``mcp list`` drives them, on either transport: the
    SDK's (``calls.call.ManagedServers``, a ``Manager``) or the hot path's
    (``calls.lite.LiteServers``). Leaving the context that made it stops them."""

    async def start(self) -> None:
        """Launch the servers (or take their processes), make the handshakes and list the
        tools, all at once; a server's failure is recorded in its listing, never raised."""
        ...

    def listing(self) -> list[ListedServer]:
        """Every server started, its status, facts, tools (named across all) and failure."""
        ...
