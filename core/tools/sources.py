"""What a session may ask of its servers beyond tools, and what servers may ask back.

The bridge implements these protocols; ``core`` sees only them and the plain dataclasses
below, never an SDK type. ``mcpbridge.Manager`` is a :class:`ServerSource`: the tools of
:class:`core.tools.ToolSource` plus resources and prompts
(``mcpbridge/connection/remote_resources.py``).
Requests a server sends to us (elicitation, sampling, roots) go to a
:class:`core.useragent.UserAgent` (re-exported here) that the REPL or the non-interactive
policy implements; ``mcpbridge/connection/requests.py`` registers the SDK callbacks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from codebot_mcp.core.tools.base import ToolSource
from codebot_mcp.core.tools.useragent import ElicitAnswer, UserAgent

__all__ = [
    "DYNAMIC",
    "ElicitAnswer",
    "PromptArgument",
    "PromptInfo",
    "PromptMessage",
    "ResourceContent",
    "ResourceInfo",
    "ServerSource",
    "SkillEntry",
    "SkillFile",
    "SkillListing",
    "SkillSource",
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


DYNAMIC = "dynamic"
"""A skill entry's ``resources`` when the server publishes no digests (generated content)."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of an MCP-served skill, as its entry lists it (SEP-2640 ``SkillResource``)."""

    uri: str
    digest: str
    """``sha256:`` and 64 lowercase hex digits, over the file's raw bytes."""
    size: int


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """One skill a server serves (SEP-2640 ``Skill``), identified by (server, uri).

    The bridge checks the shape (``uri`` a string, ``frontmatter`` an object, ``resources``
    an array of files or ``"dynamic"``); what the entry says is checked against the files
    when the skill is loaded (``core.skills.skillload``).
    """

    server: str
    uri: str
    """The URI of the skill's ``SKILL.md``."""
    frontmatter: Mapping[str, Any]
    """The ``SKILL.md`` front matter as the server rendered it (JSON)."""
    resources: tuple[SkillFile, ...] | None
    """Every file of the skill, ``SKILL.md`` included; None when ``"dynamic"``."""

    @property
    def name(self) -> str:
        """The front matter's ``name``, else the last segment of the skill's path."""
        value = self.frontmatter.get("name")
        return value if isinstance(value, str) and value else skill_path(self.uri)[-1]

    @property
    def description(self) -> str:
        """The front matter's ``description`` ("" when it has none)."""
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""


def skill_path(uri: str) -> list[str]:
    """The skill path segments of a ``SKILL.md`` URI: ``skill://acme/refunds/SKILL.md`` →
    ``["acme", "refunds"]`` (any scheme; the last segment is the skill's name)."""
    rest = uri.split("://", 1)[-1]
    parts = [p for p in rest.split("/") if p]
    if parts and parts[-1] == "SKILL.md":
        parts = parts[:-1]
    return parts or [rest]


@dataclass(frozen=True, slots=True)
class SkillListing:
    """Every connected server's skills, and the servers whose listing failed (by name)."""

    entries: tuple[SkillEntry, ...] = ()
    failures: Mapping[str, str] = field(default_factory=dict[str, str])
    """Server name → why its ``skills/list`` failed."""
    issues: tuple[str, ...] = ()
    """One line per entry a server listed that may not be loaded (malformed), naming both."""


class SkillSource(Protocol):
    """Skills served over MCP (the ``io.modelcontextprotocol/skills`` extension).

    Listing fetches entries only; files are read one by one when a skill is loaded.
    """

    async def skills(self, *, refresh: bool = False) -> SkillListing:
        """``skills/list`` of every connected server that declares the extension (cached
        per connection; ``refresh`` lists again)."""
        ...

    async def get_skill(self, server: str, uri: str) -> SkillEntry:
        """``skills/get``: the entry of one skill by the URI of its ``SKILL.md``."""
        ...

    async def read_skill_file(self, server: str, uri: str) -> bytes:
        """``resources/read`` of one file of a skill, as raw bytes (text as UTF-8)."""
        ...


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


def without_hidden_tools(text: str, hidden: Sequence[str]) -> str:
    """Server instructions without the lines that name a hidden tool.

    Instructions are free text, so this works by line: a line naming a hidden tool (as a
    whole word) goes, even when it also names a visible one. The model is told lines went.
    """
    if not hidden:
        return text
    names = "|".join(re.escape(n) for n in sorted(hidden, key=len, reverse=True))
    mention = re.compile(rf"(?<![A-Za-z0-9_-])(?:{names})(?![A-Za-z0-9_-])")
    kept = [line for line in text.splitlines() if not mention.search(line)]
    dropped = len(text.splitlines()) - len(kept)
    if not dropped:
        return text
    note = f"[codebot: {dropped} line(s) about tools not enabled here were left out]"
    return "\n".join([*kept, note])
