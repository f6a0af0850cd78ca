"""The ``Tool`` protocol every tool implements, local or remote, and the ``ToolSource`` protocol.

The agent kernel sees only these types: an MCP tool (``mcpbridge.MCPTool``) and a built-in
tool (``core.builtin``) are indistinguishable to it. What the approval gate and the prompt
need to know about a tool beyond its name, description and schema is one typed record every
tool carries, :class:`ToolInfo` (``tool.info``): never probed for with ``getattr``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
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


class Origin(StrEnum):
    """Where a tool comes from (``ToolInfo.origin``)."""

    BUILTIN = "builtin"
    """One of codebot's own tools (files, bash and its jobs, todos, resources, tool search)."""
    MCP = "mcp"
    """A tool of an MCP server (``mcp__<server>__<tool>``)."""
    SKILL = "skill"
    """The loader of skills (``skill``)."""
    SUBAGENT = "subagent"
    """A tool that runs a whole agent session (``task``; ``ask`` of ``mcp serve``)."""


class Reach(Protocol):
    """Where a call's path argument leads (``core.security.boundary.Reach`` is one)."""

    @property
    def asks(self) -> bool:
        """Whether the gate asks whatever the rules say: outside the root, or hidden."""
        ...

    @property
    def hidden(self) -> Path | None:
        """The path hidden from the sandbox (credentials) that it leads into, or None."""
        ...

    def describe(self) -> str:
        """The resolved path and where it lies, for approvals and denials."""
        ...

    def asks_because(self) -> str:
        """Why the gate asks (when :attr:`asks`), in short."""
        ...

    def why(self) -> str:
        """Why the gate asks (when :attr:`asks`), with the resolved path."""
        ...


@dataclass(frozen=True, slots=True)
class ToolSandbox:
    """How a tool confines its calls (``bash``): the gate allows a confined call."""

    mode: Callable[[Mapping[str, Any]], str | None]
    """The sandbox mode a call runs under when it runs confined, else None."""
    note: Callable[[Mapping[str, Any]], str]
    """Which sandbox a call runs under, in words (approvals, transcripts)."""


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """What the approval gate and the prompt know about a tool, as typed facts.

    Every tool carries one (``Tool.info``); a field a tool has no use for stays None, and the
    gate treats None as "does not apply", never as a misspelling.
    """

    origin: Origin
    permission: Permission
    """The capability and the reason it was classified so (shown when asking)."""
    server: str | None = None
    """The MCP server the tool belongs to; None for a tool of no server."""
    original_name: str | None = None
    """The tool's own name on its server; None: the model-visible name."""
    reach: Callable[[Mapping[str, Any]], Reach | None] | None = None
    """Where a call's path leads (the file tools): outside the root, the gate asks."""
    fingerprint: Callable[[], str] | None = None
    """A hash of what the model is told about the tool (pins and "always" answers)."""
    sandbox: ToolSandbox | None = None
    """How calls run confined; None: the tool runs no commands."""
    preview: Callable[[Mapping[str, Any]], str | None] | None = None
    """What a call would change (a unified diff), for the approval question."""


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

    @property
    def info(self) -> ToolInfo:
        """What the gate and the prompt know about the tool: origin, server, capability, ..."""
        ...

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments (an object schema)."""
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


def tool_schema(tool: Tool) -> dict[str, Any]:
    """The Chat Completions ``tools`` entry for a tool (what a request carries, and what
    ``mcp doctor`` counts)."""
    parameters = normalize_schema(tool.schema())
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


def is_mcp_tool(tool: Tool) -> bool:
    """True when the tool belongs to the replaceable MCP layer (its record says so)."""
    return tool.info.origin is Origin.MCP


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
