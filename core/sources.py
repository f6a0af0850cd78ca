"""What a session may ask of its servers beyond tools, and what servers may ask back.

The bridge implements these protocols; ``core`` sees only them and the plain dataclasses
below, never an SDK type. Today :class:`core.tools.ToolSource` (tools and instructions) is
all the session uses; :class:`ServerSource` is the shape it grows into:

- resources and prompts are verbs on the source, beside ``tools()``
  (home in the bridge: ``mcpbridge/resources.py`` and ``mcpbridge/prompts.py``);
- requests a server sends to us (elicitation, sampling, roots) go to a :class:`UserAgent`
  that the REPL or a non-interactive policy implements (home in the bridge:
  ``mcpbridge/requests.py``, which registers the SDK callbacks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from core.tools import ToolSource

__all__ = [
    "ElicitAnswer",
    "PromptInfo",
    "ResourceInfo",
    "ServerSource",
    "UserAgent",
]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """One resource (or resource template) a server offers."""

    server: str
    uri: str
    """The URI, or the RFC 6570 template when ``template`` is true."""
    name: str
    description: str = ""
    mime_type: str | None = None
    template: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """One prompt a server offers, with the names of its arguments."""

    server: str
    name: str
    description: str = ""
    arguments: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ElicitAnswer:
    """The user's answer to a server's question (``elicitation/create``)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict[str, Any])


class ServerSource(ToolSource, Protocol):
    """A :class:`ToolSource` that also offers the servers' resources and prompts."""

    def resources(self) -> Sequence[ResourceInfo]:
        """Every resource and template of every connected server, sorted (server, URI)."""
        ...

    async def read_resource(self, server: str, uri: str) -> Sequence[Mapping[str, Any]]:
        """The resource's contents (text or base64 blobs, with their MIME types)."""
        ...

    def prompts(self) -> Sequence[PromptInfo]:
        """Every prompt of every connected server, sorted (server, name)."""
        ...

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str]
    ) -> Sequence[Mapping[str, Any]]:
        """The prompt's messages, as chat messages (``role`` and ``content``)."""
        ...


class UserAgent(Protocol):
    """Answers the requests a server sends to the client; every answer is the user's."""

    async def elicit(
        self, server: str, message: str, schema: Mapping[str, Any] | None, url: str | None
    ) -> ElicitAnswer:
        """Ask the user for what the server wants (a form, or a URL to open)."""
        ...

    async def approve_sampling(self, server: str, summary: str, max_tokens: int) -> bool:
        """Whether the server may have the session's model answer ``summary``."""
        ...

    def roots(self) -> Sequence[Path]:
        """The directories the servers may work in (the project root first)."""
        ...
