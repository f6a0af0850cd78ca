"""The ``Tool`` protocol every tool implements, local or remote, and the ``ToolSource`` protocol.

The agent kernel sees only these types: an MCP tool (``mcpbridge.MCPTool``) and a built-in
tool (``core.builtin``) are indistinguishable to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from codebot_mcp.core.media.images import Image

MCP_PREFIX = "mcp__"
"""Every tool of an MCP server is named ``mcp__<server>__<tool>`` for the model."""


class Capability(StrEnum):
    """What a tool may do to the world; the permission gate decides on it."""

    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"
    NETWORK = "network"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Permission:
    """A tool's capability and the reason it was classified so (shown when asking)."""

    capability: Capability
    reason: str


@dataclass(slots=True)
class ToolResult:
    """What a tool returns: text for the model, and whether it is an error.

    Attributes:
        text: The text the model sees.
        is_error: True when the tool failed; the model is told so.
        data: Extra machine-readable payload (for ``--json`` output), never sent to the model.
        images: Images for the model (``core.media.images``); ``text`` describes each, and is
            what the model reads where images cannot go (an endpoint without them).
        scrubbed: Every known secret is already out of ``text`` and ``data``: scrubbed where
            the result entered codebot (an MCP result, at the bridge), so the loop does not
            scrub it a second time. Any other result is scrubbed by the loop.
    """

    text: str
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict[str, Any])
    images: tuple[Image, ...] = ()
    scrubbed: bool = False


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call."""

    @property
    def name(self) -> str:
        """The model-visible name: ``^[A-Za-z0-9_-]{1,64}$``."""
        ...

    @property
    def description(self) -> str:
        """What the tool does, for the model."""
        ...

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments (an object schema)."""
        ...

    def permission(self) -> Permission:
        """Capability and the reason for it."""
        ...

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the tool. Failures come back as ``ToolResult(is_error=True)``, not exceptions."""
        ...


def normalize_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"type": "object", "properties": {}}`` at least; the given schema otherwise."""
    out: dict[str, Any] = dict(schema or {})
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def is_mcp_tool(tool: Tool) -> bool:
    """True when the tool belongs to the replaceable MCP layer."""
    return tool.name.startswith(MCP_PREFIX)


class ToolSource(Protocol):
    """Where remote tools come from; ``mcpbridge.Manager`` is one.

    :class:`core.sources.ServerSource` extends it with resources and prompts.
    """

    async def refresh_if_dirty(self) -> Sequence[Tool] | None:
        """The new full remote tool set if it changed since the last call, else None (no I/O)."""
        ...

    def tools(self) -> Sequence[Tool]:
        """The current remote tool set, sorted by server then tool."""
        ...

    def instructions(self) -> str:
        """The servers' instructions as ``## <server>`` sections in server order."""
        ...
