"""The MCP client's settings section: the servers, the roots offered to them, the warm holder's
idle time and the registries ``mcp search``/``mcp install`` ask.

``mcp_servers`` (or ``mcpServers``, the name other clients use) maps a name to an entry, a
:func:`server_model`: a stdio entry (``command``...) or an http one (``url``...). The entry
is checked at run time by ``servers.parse_server``, driven by these models' fields as the
generated ``core.config.keytable`` holds them (``SERVER_FIELDS``: their types, values and
defaults; ``servers.LOG_LEVELS`` and ``PROTOCOLS`` are read there), and keeps a bad entry as
that server's error instead of failing the file (its messages name file, server and key);
``tests/core/test_config_sections.py`` holds the two to the same verdicts. ``roots``,
``warm_idle_timeout`` and ``registry_url`` are gated: an untrusted project's value waits.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.keys import (
    DEFAULT_REGISTRY_URL,
    DEFAULT_WARM_IDLE_TIMEOUT,
    check,
    roots,
)
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["HTTP_TYPES", "section_model", "server_model"]

HTTP_TYPES = ("http", "streamable-http", "streamableHttp", "streamable_http")
"""The ``type`` values of an http entry (the others are other clients' spellings)."""


@cache
def server_model() -> Any:
    """One server entry as pydantic types: a stdio entry or an http entry (built on demand:
    see :mod:`.sections`). Without ``type``, an entry with ``url`` and no ``command`` is http."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    from codebot_mcp.core.config.oauth import oauth_model
    from codebot_mcp.core.config.sandboxing import Mode, sandbox_model
    from codebot_mcp.core.config.servers import DEFAULT_HANDSHAKE_TIMEOUT

    seconds_ = Annotated[float, Field(gt=0)]
    text = Annotated[str, Field(min_length=1)]

    class ServerCommon(BaseModel):
        model_config = ConfigDict(extra="forbid")
        timeout: seconds_ = DEFAULT_HANDSHAKE_TIMEOUT
        tool_timeout: seconds_ = NOT_SET
        enabled: bool = True
        include_tools: list[str] = NOT_SET
        exclude_tools: list[str] = Field(default_factory=list[str])
        protocol: Literal["auto", "legacy", "2026-07-28"] = "auto"
        description: str = NOT_SET
        log_level: Literal[
            "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
        ] = NOT_SET
        provenance: dict[str, Any] = Field(
            default=NOT_SET,
            description="Where codebot mcp install got the entry (docs/registry.md).",
        )

    class StdioServer(ServerCommon):
        """A local command, spoken to over its stdin and stdout."""

        type: Literal["stdio"] = "stdio"
        command: text
        args: list[str] = Field(default_factory=list[str])
        env: dict[str, str] = Field(default_factory=dict[str, str])
        cwd: text = NOT_SET
        sandbox: Mode | sandbox_model(server=True) = NOT_SET  # type: ignore[valid-type]

    class HttpServer(ServerCommon):
        """A Streamable HTTP endpoint."""

        type: Literal["http", "streamable-http", "streamableHttp", "streamable_http"] = "http"
        url: Annotated[str, Field(pattern="^(https?://|\\$\\{)")]
        headers: dict[str, str] = Field(default_factory=dict[str, str])
        oauth: Literal[False] | oauth_model() = NOT_SET  # type: ignore[valid-type]

    return StdioServer | HttpServer


@cache
def section_model() -> type[BaseModel]:
    """The MCP client's keys as a pydantic model."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    server = server_model()
    servers_help = (
        "MCP servers by name (each entry: command/args/env/cwd or type http with url/headers)."
    )

    class McpSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        mcp_servers: dict[str, server] = Field(  # type: ignore[valid-type]
            default_factory=dict, description=servers_help
        )
        mcpServers: dict[str, server] = Field(  # type: ignore[valid-type]
            default_factory=dict,
            description="The same as mcp_servers (the name other clients use); a file holds "
            "one of the two.",
        )
        roots: list[str] = Field(
            default_factory=list[str],
            description="Directories offered to servers (roots/list) besides the project root.",
            examples=[["~/src/shared"]],
        )
        warm_idle_timeout: Annotated[float, Field(gt=0, lt=1e9)] = Field(
            default=DEFAULT_WARM_IDLE_TIMEOUT,
            description="Seconds the warm holder (mcp warm) waits for a request before it exits.",
            examples=[120],
        )
        registry_url: str | list[str] = Field(
            default=DEFAULT_REGISTRY_URL,
            description="The MCP Registry (or a list) mcp search and mcp install use.",
            examples=["https://registry.example.com"],
        )

    return McpSection


register(
    Section(
        "servers",
        (
            row("mcp_servers"),
            row("mcpServers"),
            row("roots", roots),
            row("warm_idle_timeout", check),
            row("registry_url", field="registry_url", held=lambda url: (url,)),
        ),
        section_model,
        order=0,
    )
)
