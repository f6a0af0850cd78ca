"""Skills served over MCP (SEP-2640, ``io.modelcontextprotocol/skills``), for one connection.

codebot declares the extension in its client capabilities; a server that declares it back is
asked ``skills/list`` (all pages) and, for a skill addressed by URI alone, ``skills/get``.
Files are read with ``resources/read`` one at a time, only when a skill is loaded: nothing
here prefetches. Entries become :class:`core.tools.sources.SkillEntry` after their shape is
checked; an entry the spec says a host must not load (no ``resources``, a malformed file
list, a name that is not its path's last segment) is reported, not offered. Verifying the
files against the entry is core's (``core.skills.skillload``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from codebot_mcp.core.config.skills import NAME
from codebot_mcp.core.errors import ServerError, UsageError
from codebot_mcp.core.tools.sources import (
    DYNAMIC,
    SkillEntry,
    SkillFile,
    skill_path,
)
from codebot_mcp.mcpbridge.connection.remote_resources import guarded, read_resource
from codebot_mcp.mcpbridge.transport.wire import SKILLS as EXTENSION

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.connection.mcp_client import Client

MAX_PAGES = 100
"""Pages of one ``skills/list``; a cursor that never ends must not hang us."""
MAX_ENTRIES = 5_000
"""Skill entries kept per server: the catalog is for a prompt, not an archive."""
MAX_URI = 2_048
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_UNPRINTABLE = re.compile(r"[\x00-\x20\x7f-\x9f]")


class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    """``skills/list``, paginated like the base protocol's list methods."""

    method: Literal["skills/list"] = "skills/list"


class ListSkillsResult(BaseModel):
    """A ``skills/list`` page, its entries as sent (each is checked by :func:`parse_entry`)."""

    model_config = ConfigDict(extra="allow")
    skills: Any = None
    next_cursor: Any = Field(default=None, alias="nextCursor")


class GetSkillResult(BaseModel):
    """A ``skills/get`` answer, its entry as sent."""

    model_config = ConfigDict(extra="allow")
    skill: Any = None


class GetSkillParams(types.RequestParams):
    """``skills/get`` params: the URI of the skill's ``SKILL.md``."""

    uri: str


class GetSkillRequest(types.Request[GetSkillParams, Literal["skills/get"]]):
    """``skills/get``."""

    method: Literal["skills/get"] = "skills/get"
    params: GetSkillParams


def declares(client: Client) -> bool:
    """Whether the server declared the skills extension (``capabilities.extensions``)."""
    caps = client.info.capabilities if client.info else {}
    declared = caps.get("extensions")
    return isinstance(declared, dict) and EXTENSION in declared


async def list_skills(client: Client) -> tuple[list[SkillEntry], list[str]]:
    """Every entry of ``skills/list`` (all pages), and one line per entry left out.

    Raises:
        ServerError: the server failed or refused the listing.
    """
    entries: list[SkillEntry] = []
    issues: list[str] = []
    seen: set[str] = set()
    cursor: str | None = None
    async with guarded(client, "skills/list"):
        for _ in range(MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await client.session.session.send_request(
                ListSkillsRequest(params=params), ListSkillsResult
            )
            raw: Any = page.skills
            if not isinstance(raw, list):
                raise ServerError(
                    f"server '{client.name}' sent a malformed answer to skills/list: "
                    "'skills' is not an array",
                    hint="The server does not follow the skills extension; report it.",
                )
            for index, item in enumerate(raw):
                entry = parse_entry(client.name, item, f"skills[{index}]")
                if isinstance(entry, str):
                    issues.append(entry)
                elif entry.uri in seen:
                    issues.append(f"{entry.uri}: listed twice; the first entry is kept")
                else:
                    seen.add(entry.uri)
                    entries.append(entry)
            cursor = page.next_cursor
            if not isinstance(cursor, str) or not cursor or len(entries) >= MAX_ENTRIES:
                break
    return entries[:MAX_ENTRIES], issues


async def get_skill(client: Client, uri: str) -> SkillEntry:
    """``skills/get`` for the skill whose ``SKILL.md`` is at ``uri``.

    Raises:
        ServerError: the server failed, refused (an unknown skill: -32602), or sent an
            entry that is malformed or names another URI.
    """
    async with guarded(client, f"skills/get {uri}"):
        result = await client.session.session.send_request(
            GetSkillRequest(params=GetSkillParams(uri=uri)), GetSkillResult
        )
    entry = parse_entry(client.name, result.skill, "skill")
    if isinstance(entry, str):
        raise ServerError(
            f"server '{client.name}' sent a malformed answer to skills/get {uri}: {entry}",
            hint="The server does not follow the skills extension; report it.",
        )
    if entry.uri != uri:
        raise ServerError(
            f"server '{client.name}' answered skills/get {uri} with the entry of {entry.uri}",
            hint="The server does not follow the skills extension; report it.",
        )
    return entry


async def read_file(client: Client, uri: str) -> bytes:
    """The raw bytes of one skill file (``resources/read``; text is UTF-8).

    Raises:
        ServerError: the read failed, or the answer holds no content for ``uri``.
    """
    parts = await read_resource(client, uri)
    mine = [p for p in parts if p.uri == uri] if len(parts) > 1 else parts
    if len(mine) != 1:
        raise ServerError(
            f"server '{client.name}' answered resources/read {uri} with {len(parts)} "
            f"content parts, {len(mine)} of them for that URI",
            hint="A skill file is one resource; the server does not follow the skills extension.",
        )
    part = mine[0]
    if part.text is not None:
        return part.text.encode("utf-8")
    return part.blob or b""


def require_skills(client: Client) -> None:
    """A usage error unless the server declared the skills extension."""
    if not declares(client):
        raise UsageError(
            f"server '{client.name}' does not serve skills "
            f"(it does not declare the {EXTENSION} extension)",
            hint="`codebot skills list` shows the skills of the servers that do.",
        )


def parse_entry(server: str, raw: Any, where: str) -> SkillEntry | str:
    """A ``Skill`` entry as core's data, or why it may not be loaded (one line)."""
    if not isinstance(raw, Mapping):
        return f"{where}: not an object"
    item: Mapping[str, Any] = raw
    uri = item.get("uri")
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI:
        return f"{where}: no 'uri' string"
    if _UNPRINTABLE.search(uri):
        return f"{where}: the uri {uri!r} holds spaces or control characters"
    if not uri.endswith("/SKILL.md"):
        return f"{uri}: the uri does not end in /SKILL.md"
    front = item.get("frontmatter")
    if not isinstance(front, Mapping):
        return f"{uri}: no 'frontmatter' object"
    frontmatter: dict[str, Any] = dict(front)
    name = frontmatter.get("name")
    if not isinstance(name, str) or not name:
        return f"{uri}: the frontmatter has no 'name'"
    if not isinstance(frontmatter.get("description"), str):
        return f"{uri}: the frontmatter has no 'description'"
    if skill_path(uri)[-1] != name:
        return f"{uri}: the skill's name {name!r} is not the last segment of its path"
    if not NAME.match(name):
        return f"{uri}: the skill's name {name!r} is not a skill name"
    resources = _resources(uri, item.get("resources"))
    if isinstance(resources, str):
        return resources
    return SkillEntry(server, uri, frontmatter, resources)


def _resources(uri: str, raw: Any) -> tuple[SkillFile, ...] | str | None:
    if raw == DYNAMIC:
        return None
    if not isinstance(raw, list):
        return f"{uri}: 'resources' is neither an array nor \"dynamic\" (hosts must not load it)"
    files: list[SkillFile] = []
    for index, value in enumerate(raw):
        if not isinstance(value, Mapping):
            return f"{uri}: resources[{index}] is not an object"
        item: Mapping[str, Any] = value
        file_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(file_uri, str) or not file_uri or len(file_uri) > MAX_URI:
            return f"{uri}: resources[{index}] has no 'uri' string"
        if _UNPRINTABLE.search(file_uri):
            return f"{uri}: resources[{index}] has spaces or control characters in its uri"
        if not isinstance(digest, str) or not DIGEST.match(digest):
            return f"{uri}: resources[{index}] ({file_uri}) has no sha256:<64 hex> 'digest'"
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return f"{uri}: resources[{index}] ({file_uri}) has no byte 'size'"
        files.append(SkillFile(file_uri, digest, size))
    return tuple(files)
