"""``list_mcp_resources`` and ``read_mcp_resource``: the servers' resources, for the model.

Both have read capability and go through the same permission gate as every tool. They are in
the local layer (offered when MCP servers are configured), so the cached prompt stays stable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.media import images
from codebot_mcp.core.tools.base import Capability, Origin, Permission, Tool, ToolInfo, ToolResult
from codebot_mcp.core.tools.sources import ServerSource, content_text

MAX_LISTED = 500
"""Resources listed to the model at once; more would flood the context."""


def _text(arguments: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = arguments.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"'{key}' must be a non-empty string")
    return value


class ListResourcesTool:
    """List the resources (and templates) of the connected MCP servers."""

    name = "list_mcp_resources"
    description = (
        "List the resources MCP servers offer (files, documents, records), with their URIs. "
        "Optionally only one server's. Read one with read_mcp_resource."
    )

    def __init__(self, source: ServerSource) -> None:
        self.source = source

    def schema(self) -> dict[str, Any]:
        """Arguments: optional ``server``."""
        return {
            "type": "object",
            "properties": {"server": {"type": "string", "description": "Only this server."}},
        }

    @property
    def info(self) -> ToolInfo:
        """Listing changes nothing."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in list_mcp_resources: only lists"),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """One JSON line per resource; errors are error results."""
        try:
            server = _text(arguments, "server", required=False)
            items = await self.source.resources(server)
        except ValueError as exc:
            return ToolResult(f"list_mcp_resources: {exc}", is_error=True)
        except CodebotError as exc:
            return ToolResult(f"list_mcp_resources: {exc.message}", is_error=True)
        items = [r for r in items if not r.app_page]  # an App's HTML page says nothing here
        if not items:
            return ToolResult("no MCP server offers resources")
        lines = []
        for r in items[:MAX_LISTED]:
            entry: dict[str, Any] = {"server": r.server, "name": r.name}
            entry["uriTemplate" if r.template else "uri"] = r.uri
            if r.mime_type:
                entry["mimeType"] = r.mime_type
            if r.description:
                entry["description"] = r.description[:200]
            if r.updated:
                entry["updated"] = True  # changed since it was last read: read it again
            lines.append(json.dumps(entry, ensure_ascii=False))
        if len(items) > MAX_LISTED:
            lines.append(f"({len(items) - MAX_LISTED} more; pass 'server' to narrow the list)")
        return ToolResult("\n".join(lines))


class ReadResourceTool:
    """Read one resource of one MCP server."""

    name = "read_mcp_resource"
    description = (
        "Read a resource of an MCP server by its URI (see list_mcp_resources). "
        "Template URIs need their {placeholders} filled in."
    )

    def __init__(self, source: ServerSource) -> None:
        self.source = source

    def schema(self) -> dict[str, Any]:
        """Arguments: ``server`` and ``uri``."""
        return {
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The server's name."},
                "uri": {"type": "string", "description": "The resource's URI."},
            },
            "required": ["server", "uri"],
        }

    @property
    def info(self) -> ToolInfo:
        """Reading changes nothing."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in read_mcp_resource: only reads"),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """The resource's text; an image part as an image (PNG, JPEG, GIF, WebP, known by its
        bytes), other binary parts described in one line each."""
        try:
            server = _text(arguments, "server", required=True)
            uri = _text(arguments, "uri", required=True)
            assert server is not None and uri is not None
            parts = await self.source.read_resource(server, uri)
        except ValueError as exc:
            return ToolResult(f"read_mcp_resource: {exc}", is_error=True)
        except CodebotError as exc:
            return ToolResult(f"read_mcp_resource: {exc.message}", is_error=True)
        pictures: list[images.Image] = []
        lines: list[str] = []
        for part in parts:
            found = images.sniff(part.blob[: images.SNIFF_BYTES]) if part.blob else None
            if part.blob is None or found is None:
                lines.append(content_text([part]))
                continue
            image = images.Image(part.blob, *found, name=part.uri)
            pictures.append(image)
            lines.append(f"[image: {image.describe()}]")
        text = "\n".join(lines)
        return ToolResult(text or "(the resource is empty)", images=tuple(pictures))


def resource_tools(source: ServerSource) -> list[Tool]:
    """Both tools, in a fixed order."""
    return [ListResourcesTool(source), ReadResourceTool(source)]
