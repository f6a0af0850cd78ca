"""What a session may ask of its servers beyond tools, and what servers may ask back.

The bridge implements these protocols; ``core`` sees only them and the plain dataclasses
below, never an SDK type. ``mcpbridge.Manager`` is a :class:`ServerSource`: the tools of
:class:`core.tools.ToolSource` plus resources and prompts (``mcpbridge/connection/resources.py``).
Requests a server sends to us (elicitation, sampling, roots) go to a
:class:`core.useragent.UserAgent` (re-exported here) that the REPL or the non-interactive
policy implements; ``mcpbridge/connection/requests.py`` registers the SDK callbacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from codebot_mcp.core.tools.base import ToolSource
from codebot_mcp.core.tools.useragent import ElicitAnswer, UserAgent

__all__ = [
    "ElicitAnswer",
    "PromptArgument",
    "PromptInfo",
    "PromptMessage",
    "ResourceContent",
    "ResourceInfo",
    "ServerSource",
    "UserAgent",
    "content_text",
]


UI_SCHEME = "ui://"
"""The scheme of an MCP App's page (``text/html;profile=mcp-app``)."""


def is_app_page(uri: str) -> bool:
    """True for a ``ui://`` URI (the scheme compared without case, as URI schemes are)."""
    return uri[: len(UI_SCHEME)].lower() == UI_SCHEME


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One resource, or one resource template (``template`` True: ``uri`` is the template)."""

    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    template: bool = False
    updated: bool = False
    """A ``notifications/resources/updated`` arrived since it was last read."""

    @property
    def app_page(self) -> bool:
        """A ``ui://`` resource: an MCP App's HTML page (SEP-1865), for hosts that render
        Apps in a frame. codebot does not: such pages stay out of ``@`` completion and out of
        the model's resource list (``codebot mcp resources`` still lists them)."""
        return is_app_page(self.uri)


@dataclass(frozen=True, slots=True)
class ResourceContent:
    """One part of a read resource: text, or bytes (``blob``)."""

    uri: str
    mime_type: str | None
    text: str | None = None
    blob: bytes | None = None


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """One prompt a server offers."""

    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a rendered prompt, its content as text."""

    role: str
    text: str


def content_text(parts: Sequence[ResourceContent]) -> str:
    """A read resource as text for the model or a prompt: text parts, and one line per blob."""
    out: list[str] = []
    for part in parts:
        if part.text is not None:
            out.append(part.text)
        else:
            size = len(part.blob or b"")
            out.append(f"[binary: {part.uri}, {part.mime_type or 'unknown type'}, {size} bytes]")
    return "\n".join(out)


class ServerSource(ToolSource, Protocol):
    """Tools, resources and prompts of every connected server."""

    async def resources(self, server: str | None = None) -> list[ResourceInfo]:
        """Every resource and template (all pages), sorted by server then URI."""
        ...

    async def read_resource(self, server: str, uri: str) -> list[ResourceContent]:
        """Read one resource."""
        ...

    async def prompts(self, server: str | None = None) -> list[PromptInfo]:
        """Every prompt (all pages), sorted by server then name."""
        ...

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str]
    ) -> list[PromptMessage]:
        """Render one prompt."""
        ...
