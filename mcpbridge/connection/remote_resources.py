"""Resources, templates, prompts and completions of one server, as core's plain data.

Every SDK failure becomes a :class:`core.errors.ServerError` (or a ``UsageError`` for an
unknown name) naming the server: a protocol error, a dead connection, and a result the SDK
cannot parse (``pydantic.ValidationError``) alike, so no traceback reaches the user.
"""

from __future__ import annotations

import base64
import binascii
import warnings
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp import InputRequiredRoundsExceededError, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from codebot_mcp.core.errors import CodebotError, ServerError, UsageError
from codebot_mcp.core.tools.sources import (
    PromptArgument,
    PromptInfo,
    PromptMessage,
    ResourceContent,
    ResourceInfo,
)
from codebot_mcp.mcpbridge.connection.features import MAX_UPDATED
from codebot_mcp.mcpbridge.connection.tool import describe_block
from codebot_mcp.mcpbridge.transport.rpcerror import (
    TOO_MANY_ROUNDS_HINT,
    rpc_error_text,
    too_many_rounds,
)

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.connection.mcp_client import Client

MAX_PAGES = 100
"""Pages of one listing; a server whose cursor never ends must not hang us."""
MAX_ITEMS = 10_000
"""Entries of one listing kept."""
REQUEST_TIMEOUT = 60.0
"""Seconds for a listing, a read or a prompt when the server sets no ``tool_timeout``."""
MAX_COMPLETIONS = 100


@asynccontextmanager
async def guarded(client: Client, what: str) -> AsyncIterator[None]:
    """Turn any failure of ``what`` on ``client`` into an error naming the server."""
    name = client.name
    try:
        with anyio.fail_after(client.config.tool_timeout or REQUEST_TIMEOUT):
            yield
    except CodebotError:
        raise
    except MCPError as exc:
        text = rpc_error_text(exc.code, client.redact(exc.message))
        raise ServerError(f"server '{name}' rejected {what}: {text}") from None
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ServerError(
            f"server '{name}' sent a malformed answer to {what}: "
            f"{where + ': ' if where else ''}{first.get('msg', '')}",
            hint="The server does not follow the MCP schema; report it to its authors.",
        ) from None
    except TimeoutError:
        raise ServerError(
            f"server '{name}' gave no answer to {what} within "
            f"{client.config.tool_timeout or REQUEST_TIMEOUT:g} s",
            hint=f"Set 'tool_timeout' for server '{name}' to wait longer.",
        ) from None
    except (ConnectionError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
        raise ServerError(
            f"server '{name}' is not available: {exc or type(exc).__name__}"
        ) from None
    except InputRequiredRoundsExceededError:
        raise ServerError(too_many_rounds(name, what), hint=TOO_MANY_ROUNDS_HINT) from None
    except RuntimeError as exc:
        raise ServerError(f"{what} on server '{name}' failed: {client.redact(str(exc))}") from None


def _capable(client: Client, kind: str) -> bool:
    caps = client.info.capabilities if client.info else {}
    return kind in caps


async def list_resources(client: Client) -> list[ResourceInfo]:
    """Every resource and every template of ``client`` (all pages)."""
    if not _capable(client, "resources"):
        return []
    session = client.session
    out: list[ResourceInfo] = []
    async with guarded(client, "resources/list"):
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await session.list_resources(cursor=cursor, cache_mode="refresh")
            out += [
                ResourceInfo(
                    client.name,
                    r.uri,
                    r.name,
                    r.title,
                    r.description,
                    r.mime_type,
                    r.size,
                    updated=r.uri in client.features.updated,
                )
                for r in page.resources
            ]
            cursor = page.next_cursor
            if not cursor or len(out) >= MAX_ITEMS:
                break
    async with guarded(client, "resources/templates/list"):
        cursor = None
        for _ in range(MAX_PAGES):
            try:
                tpage = await session.list_resource_templates(cursor=cursor, cache_mode="refresh")
            except MCPError as exc:
                if exc.code == types.METHOD_NOT_FOUND:
                    break  # templates are optional
                raise
            out += [
                ResourceInfo(
                    client.name,
                    t.uri_template,
                    t.name,
                    t.title,
                    t.description,
                    t.mime_type,
                    template=True,
                )
                for t in tpage.resource_templates
            ]
            cursor = tpage.next_cursor
            if not cursor or len(out) >= MAX_ITEMS:
                break
    client.features.resources_stale = False
    return out[:MAX_ITEMS]


async def read_resource(client: Client, uri: str) -> list[ResourceContent]:
    """The contents of one resource (text, or decoded bytes)."""
    async with guarded(client, f"reading {uri}"):
        result = await client.session.read_resource(uri, cache_mode="refresh")
    client.features.updated.discard(uri)
    parts: list[ResourceContent] = []
    for c in result.contents:
        if isinstance(c, types.TextResourceContents):
            parts.append(ResourceContent(c.uri, c.mime_type, text=c.text))
        else:
            try:
                blob = base64.b64decode(c.blob, validate=True)
            except (binascii.Error, ValueError):
                raise ServerError(
                    f"server '{client.name}' sent a malformed answer to reading {uri}: "
                    "the blob is not valid base64"
                ) from None
            parts.append(ResourceContent(c.uri, c.mime_type, blob=blob))
    return parts


async def subscribe(client: Client, uri: str) -> bool:
    """Ask for updates about ``uri``; False when the server does not offer them.

    Handshake-era servers get ``resources/subscribe`` and send
    ``notifications/resources/updated``; on 2026-07-28 the listen stream is reopened with
    ``uri`` in its filter and the updates come on it.
    """
    if not client.features.can_subscribe() or client.info is None:
        return False
    if uri in client.features.subscribed:
        return True
    if client.info.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if len(client.features.subscribed) >= MAX_UPDATED:
            return False
        client.features.subscribed.add(uri)
        client.features.resubscribe()
        return True
    async with guarded(client, f"subscribing to {uri}"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
            await client.session.subscribe_resource(uri)
    client.features.subscribed.add(uri)
    return True


async def list_prompts(client: Client) -> list[PromptInfo]:
    """Every prompt of ``client`` (all pages)."""
    if not _capable(client, "prompts"):
        return []
    out: list[PromptInfo] = []
    async with guarded(client, "prompts/list"):
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.session.list_prompts(cursor=cursor, cache_mode="refresh")
            out += [
                PromptInfo(
                    client.name,
                    p.name,
                    p.title,
                    p.description,
                    tuple(
                        PromptArgument(a.name, a.description, bool(a.required))
                        for a in p.arguments or []
                    ),
                )
                for p in page.prompts
            ]
            cursor = page.next_cursor
            if not cursor or len(out) >= MAX_ITEMS:
                break
    client.features.prompts_stale = False
    return out[:MAX_ITEMS]


async def get_prompt(
    client: Client, name: str, arguments: Mapping[str, str]
) -> list[PromptMessage]:
    """Render one prompt; its messages' content as text."""
    async with guarded(client, f"prompt '{name}'"):
        result = await client.session.get_prompt(name, dict(arguments))
    return [PromptMessage(m.role, describe_block(m.content)) for m in result.messages]


async def complete(
    client: Client,
    ref: str,
    argument: str,
    value: str,
    context: Mapping[str, str] | None = None,
) -> list[str]:
    """``completion/complete`` for a prompt's (``ref`` = name) or a template's argument.

    A ``ref`` containing ``{`` is a resource template. Servers without the capability, and
    any failure, give no completions: completion is a convenience, never an error.
    """
    if not _capable(client, "completions") or not client.connected:
        return []
    reference: types.PromptReference | types.ResourceTemplateReference
    if "{" in ref:
        reference = types.ResourceTemplateReference(type="ref/resource", uri=ref)
    else:
        reference = types.PromptReference(type="ref/prompt", name=ref)
    try:
        async with guarded(client, "completion/complete"):
            result = await client.session.complete(
                reference, {"name": argument, "value": value}, dict(context or {}) or None
            )
    except ServerError:
        return []
    return [v for v in result.completion.values[:MAX_COMPLETIONS] if isinstance(v, str)]


def find_client(clients: Mapping[str, Client], server: str) -> Client:
    """The connected client named ``server``; a usage or server error otherwise."""
    client = clients.get(server)
    if client is None:
        known = ", ".join(sorted(clients)) or "none"
        raise UsageError(f"unknown server '{server}' (connected: {known})")
    if not client.connected:
        reason = client.failure.message if client.failure else "it is not connected"
        raise ServerError(f"server '{server}' is not available: {reason}")
    return client
