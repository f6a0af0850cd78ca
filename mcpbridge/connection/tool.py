"""``MCPTool``: one remote tool adapted to core's ``Tool`` protocol."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import InputRequiredRoundsExceededError, MCPError
from pydantic import ValidationError

from codebot_mcp.core.media.images import SNIFF_BYTES, Image, sniff
from codebot_mcp.core.tools.base import Origin, ToolInfo, ToolResult, normalize_schema
from codebot_mcp.mcpbridge.connection.explain import describe_invalid_result
from codebot_mcp.mcpbridge.tools.call_arguments import first_problem, validator_for
from codebot_mcp.mcpbridge.tools.capability import classify

__all__ = ["MCPTool", "describe_invalid_result", "to_tool_result"]

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.connection.mcp_client import Client


class MCPTool:
    """A tool of an MCP server, named ``mcp__<server>__<tool>`` for the model."""

    def __init__(
        self, client: Client, tool: types.Tool, name: str, *, name_reason: str | None = None
    ) -> None:
        self._client = client
        self.tool = tool
        self._name = name
        self.name_reason = name_reason
        """Why the visible name differs from ``mcp__server__tool`` (sanitized, shortened, ...)."""
        self._info: ToolInfo | None = None
        self._validator: Any = None

    @property
    def name(self) -> str:
        """The model-visible name."""
        return self._name

    @property
    def server(self) -> str:
        """The server this tool belongs to."""
        return self._client.name

    @property
    def original_name(self) -> str:
        """The tool's own name on its server."""
        return self.tool.name

    @property
    def description(self) -> str:
        """The server's description (may be empty)."""
        return self.tool.description or self.tool.title or ""

    def schema(self) -> dict[str, Any]:
        """The input schema as an object schema: ``properties`` always present."""
        return normalize_schema(self.tool.input_schema)

    @property
    def info(self) -> ToolInfo:
        """An MCP tool of :attr:`server`, its capability and reason from annotations first,
        then keywords (classified once, when first asked)."""
        if self._info is None:
            hints = self.tool.annotations
            permission = classify(
                self.tool.name,
                self.tool.description,
                read_only=hints.read_only_hint if hints else None,
                destructive=hints.destructive_hint if hints else None,
                open_world=hints.open_world_hint if hints else None,
            )
            self._info = ToolInfo(
                Origin.MCP,
                permission,
                server=self.server,
                original_name=self.original_name,
                fingerprint=self.fingerprint,
            )
        return self._info

    def fingerprint(self) -> str:
        """A hash of what the model is told about the tool (see ``mcpbridge.tools.tool_pins``)."""
        from codebot_mcp.mcpbridge.tools.tool_pins import tool_hash

        return tool_hash(self.tool)

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        """The first way ``arguments`` break the input schema, or None.

        Never stricter than the protocol: ``null`` for a property the schema does not require
        counts as leaving it out (SEP-2243: a null parameter is sent, its header omitted), and
        a schema that is itself invalid, or that cannot be evaluated here (a ``$ref`` to a
        network location, which is never fetched), is not enforced: the server judges then.
        """
        if self._validator is None:
            self._validator = validator_for(self.schema())
        return first_problem(self._validator, arguments, self.schema())

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Call the tool; every failure becomes an error result, never an exception (worded
        by the call's failure record: :meth:`Client.call_failure`)."""
        try:
            result = await self._client.call_tool(self.tool.name, dict(arguments))
        except (
            MCPError,
            ValidationError,
            InputRequiredRoundsExceededError,
            ConnectionError,
            OSError,
            RuntimeError,
        ) as exc:
            failure = self._client.call_failure(exc, self.original_name, self.name)
            return ToolResult(failure.for_model(), is_error=True)
        return to_tool_result(result)


def to_tool_result(result: types.CallToolResult) -> ToolResult:
    """Join the text of all blocks; describe the others in one line each. Every secret this
    process knows (header and env values, OAuth tokens, the API key) is scrubbed here, where
    a result enters codebot, so no path (chat, ``mcp call``, ``--json``, ``--batch``, the
    warm holder) can show a credential a server echoes back."""
    from codebot_mcp.core.secrets.redact import SECRETS, scrub

    parts = [describe_block(block) for block in result.content]
    found = [image_of(block) for block in result.content]
    pictures = tuple(i for i in found if i is not None)
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    data: dict[str, Any] = {
        "content": [
            b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in result.content
        ]
    }
    if result.structured_content is not None:
        data["structuredContent"] = result.structured_content
    data["isError"] = result.is_error
    return ToolResult(
        SECRETS("\n".join(parts)),
        is_error=result.is_error,
        data=scrub(data, SECRETS),
        images=pictures,
        scrubbed=True,
    )


def image_of(block: types.ContentBlock) -> Image | None:
    """The image an image block (or an embedded blob resource) holds, when its bytes are a
    PNG, JPEG, GIF or WebP (whatever its ``mimeType`` claims); None otherwise."""
    if isinstance(block, types.ImageContent):
        payload, name = block.data, "image"
    elif isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    ):
        payload, name = block.resource.blob, str(block.resource.uri)
    else:
        return None
    try:
        data = base64.b64decode(payload, validate=True)
    except (ValueError, TypeError):
        return None
    found = sniff(data[:SNIFF_BYTES])
    return None if found is None else Image(data, *found, name=name)


def describe_block(block: types.ContentBlock) -> str:
    """Text for a text block, one line for anything else."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_b64_size(block.data)} bytes]"
    if isinstance(block, types.ResourceLink):
        label = f" ({block.name})" if block.name else ""
        return f"[resource link: {block.uri}{label}]"
    if isinstance(block, types.EmbeddedResource):
        res = block.resource
        if isinstance(res, types.TextResourceContents):
            return res.text
        mime = res.mime_type or "application/octet-stream"
        return f"[embedded resource: {res.uri}, {mime}, {_b64_size(res.blob)} bytes]"
    return f"[{getattr(block, 'type', 'unknown')} content]"


def _b64_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (ValueError, TypeError):
        return len(data) * 3 // 4
