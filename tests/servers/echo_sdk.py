"""The general-purpose test server on the SDK's ``MCPServer``: the reference for the raw ``echo``.

Instructions: "Use echo to repeat text." Tools:

- ``echo(text)``: returns ``text`` unchanged as one text block;
- ``add(a, b)``: structured output ``{"sum": a + b}`` (with an output schema)
  plus the same JSON as text;
- ``fail(message)``: raises, so the result has ``isError`` and ``message`` in
  its text;
- ``read_notes()`` (readOnlyHint), ``delete_note(id)`` (destructiveHint),
  ``fetch_url(url)`` (openWorldHint, readOnlyHint=False; never touches the
  network), ``mystery()`` (no annotations, neutral description);
- ``image()``: an ImageContent (1x1 PNG) plus a text block;
- ``link()``: a ResourceLink to ``file:///tmp/example.txt``;
- ``embedded()``: an EmbeddedResource with text ``embedded hello``;
- ``binary()``: an EmbeddedResource with a blob of bytes 0..255
  (``application/octet-stream``);
- ``big(size)``: a text block of exactly ``size`` ``"x"`` characters;
- ``sleep(seconds)``: sleeps, then returns ``slept``;
- ``env(name)``: ``os.environ.get(name, "<unset>")``;
- ``crash()``: ``os._exit(1)`` without answering.

Run: ``python -m tests.servers.echo_sdk``. The tests use its stand-in without the SDK,
:mod:`tests.servers.echo` (same answers, a tenth of the start-up); ``tests/test_servers_raw.py``
checks the two answer alike.
"""

from __future__ import annotations

import base64
import os
import struct
import zlib

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel

INSTRUCTIONS = "Use echo to repeat text."

mcp = MCPServer("echo", instructions=INSTRUCTIONS, version="0.1.0")


def tiny_png() -> bytes:
    """A valid 1x1 red RGB PNG, built by hand so no image library is needed."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (
            struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit, RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte + one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


class AddResult(BaseModel):
    sum: int


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the given text back unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> AddResult:
    """Add two integers and return their sum."""
    return AddResult(sum=a + b)


@mcp.tool(structured_output=False)
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


NOTES = {"1": "buy milk", "2": "call mom"}


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def read_notes() -> str:
    """Read all notes."""
    return "\n".join(f"{key}: {value}" for key, value in NOTES.items())


@mcp.tool(annotations=ToolAnnotations(destructive_hint=True), structured_output=False)
def delete_note(id: str) -> str:
    """Delete a note by id (pretend: nothing is actually deleted)."""
    return f"deleted {id}"


@mcp.tool(
    annotations=ToolAnnotations(open_world_hint=True, read_only_hint=False),
    structured_output=False,
)
def fetch_url(url: str) -> str:
    """Fetch a URL from the internet (pretend: no network access happens)."""
    return f"fetched {url}"


@mcp.tool(structured_output=False)
def mystery() -> str:
    """Does something unspecified."""
    return "42"


@mcp.tool()
def image() -> CallToolResult:
    """Return a tiny PNG image and a caption."""
    data = base64.b64encode(tiny_png()).decode("ascii")
    return CallToolResult(
        content=[
            ImageContent(data=data, mime_type="image/png"),
            TextContent(text="a 1x1 red pixel"),
        ]
    )


@mcp.tool()
def link() -> CallToolResult:
    """Return a link to a resource."""
    return CallToolResult(
        content=[
            ResourceLink(uri="file:///tmp/example.txt", name="example.txt", mime_type="text/plain"),
        ]
    )


@mcp.tool()
def embedded() -> CallToolResult:
    """Return an embedded text resource."""
    return CallToolResult(
        content=[
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="memo://embedded", mime_type="text/plain", text="embedded hello"
                )
            )
        ]
    )


@mcp.tool()
def binary() -> CallToolResult:
    """Return an embedded binary resource holding the bytes 0..255."""
    blob = base64.b64encode(bytes(range(256))).decode("ascii")
    return CallToolResult(
        content=[
            EmbeddedResource(
                resource=BlobResourceContents(
                    uri="memo://binary", mime_type="application/octet-stream", blob=blob
                )
            )
        ]
    )


@mcp.tool(structured_output=False)
def big(size: int) -> str:
    """Return a text of exactly `size` characters."""
    if size < 0:
        raise ToolError("size must be >= 0")
    return "x" * size


@mcp.tool(structured_output=False)
async def sleep(seconds: float) -> str:
    """Wait for `seconds` seconds, then answer."""
    await anyio.sleep(seconds)
    return "slept"


@mcp.tool(structured_output=False)
def env(name: str) -> str:
    """Return the value of an environment variable in the server process."""
    return os.environ.get(name, "<unset>")


@mcp.tool(structured_output=False)
def crash() -> str:
    """Terminate the server process immediately, without answering."""
    os._exit(1)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
