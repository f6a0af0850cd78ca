"""The general-purpose test server, server name "echo", without the MCP SDK.

It answers exactly as :mod:`tests.servers.echo_sdk` (the same server on the SDK's
``MCPServer``) does, in both protocol eras: ``server/discover`` and per-request envelopes
(2026-07-28), or ``initialize`` (2024-11-05 to 2025-11-25). It starts in a tenth of the
time, since it imports only the standard library: most tests start it, many of them several
times. ``tests/test_servers_raw.py`` checks that the two give the same answers.

Instructions: "Use echo to repeat text." Tools:

- ``echo(text)``: returns ``text`` unchanged as one text block;
- ``add(a, b)``: structured output ``{"sum": a + b}`` (with an output schema) plus the same
  JSON as text;
- ``fail(message)``: an error result (``isError``) with ``message`` in its text;
- ``read_notes()`` (readOnlyHint), ``delete_note(id)`` (destructiveHint), ``fetch_url(url)``
  (openWorldHint, readOnlyHint=False; never touches the network), ``mystery()`` (no
  annotations, neutral description);
- ``image()``: an ImageContent (1x1 PNG) plus a text block;
- ``link()``: a ResourceLink to ``file:///tmp/example.txt``;
- ``embedded()``: an EmbeddedResource with text ``embedded hello``;
- ``binary()``: an EmbeddedResource with a blob of bytes 0..255;
- ``big(size)``: a text block of exactly ``size`` ``"x"`` characters;
- ``sleep(seconds)``: sleeps, then returns ``slept`` (a cancelled call never answers);
- ``env(name)``: ``os.environ.get(name, "<unset>")``;
- ``crash()``: ``os._exit(1)`` without answering.

Run: ``python -m tests.servers.echo``
"""

from __future__ import annotations

import base64
import json
import os
import struct
import threading
import zlib
from typing import Any

from tests.servers._era import Call, EraServer, tool_error
from tests.servers._mcpserver import ToolFailure, check_arguments

NAME = "echo"
INSTRUCTIONS = "Use echo to repeat text."
NOTES = {"1": "buy milk", "2": "call mom"}


def _tool(name: str, description: str, params: dict[str, str], **extra: Any) -> dict[str, Any]:
    """A tool as the SDK lists it: pydantic's schema of its arguments."""
    schema: dict[str, Any] = {
        "properties": {p: {"title": p.title(), "type": t} for p, t in params.items()},
        "type": "object",
        "title": f"{name}Arguments",
    }
    if params:
        schema = {"properties": schema["properties"], "required": list(params), **schema}
    return {"description": description, "inputSchema": schema, "name": name, **extra}


TOOLS = [
    _tool("echo", "Echo the given text back unchanged.", {"text": "string"}),
    _tool(
        "add",
        "Add two integers and return their sum.",
        {"a": "integer", "b": "integer"},
        outputSchema={
            "properties": {"sum": {"title": "Sum", "type": "integer"}},
            "required": ["sum"],
            "type": "object",
            "title": "AddResult",
        },
    ),
    _tool("fail", "Always fails with the given message.", {"message": "string"}),
    {"annotations": {"readOnlyHint": True}, **_tool("read_notes", "Read all notes.", {})},
    {
        "annotations": {"destructiveHint": True},
        **_tool(
            "delete_note",
            "Delete a note by id (pretend: nothing is actually deleted).",
            {"id": "string"},
        ),
    },
    {
        "annotations": {"openWorldHint": True, "readOnlyHint": False},
        **_tool(
            "fetch_url",
            "Fetch a URL from the internet (pretend: no network access happens).",
            {"url": "string"},
        ),
    },
    _tool("mystery", "Does something unspecified.", {}),
    _tool("image", "Return a tiny PNG image and a caption.", {}),
    _tool("link", "Return a link to a resource.", {}),
    _tool("embedded", "Return an embedded text resource.", {}),
    _tool("binary", "Return an embedded binary resource holding the bytes 0..255.", {}),
    _tool("big", "Return a text of exactly `size` characters.", {"size": "integer"}),
    _tool("sleep", "Wait for `seconds` seconds, then answer.", {"seconds": "number"}),
    _tool(
        "env",
        "Return the value of an environment variable in the server process.",
        {"name": "string"},
    ),
    _tool("crash", "Terminate the server process immediately, without answering.", {}),
]
_BY_NAME = {t["name"]: t for t in TOOLS}


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


# -- the tools -------------------------------------------------------------------------------


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"text": text, "type": "text"}], "isError": False}


def _image(args: dict[str, Any]) -> dict[str, Any]:
    data = base64.b64encode(tiny_png()).decode("ascii")
    image = {"data": data, "mimeType": "image/png", "type": "image"}
    return {"content": [image, {"text": "a 1x1 red pixel", "type": "text"}], "isError": False}


def _link(args: dict[str, Any]) -> dict[str, Any]:
    link = {
        "mimeType": "text/plain",
        "name": "example.txt",
        "type": "resource_link",
        "uri": "file:///tmp/example.txt",
    }
    return {"content": [link], "isError": False}


def _embedded(args: dict[str, Any]) -> dict[str, Any]:
    resource = {"mimeType": "text/plain", "text": "embedded hello", "uri": "memo://embedded"}
    return {"content": [{"resource": resource, "type": "resource"}], "isError": False}


def _binary(args: dict[str, Any]) -> dict[str, Any]:
    blob = base64.b64encode(bytes(range(256))).decode("ascii")
    resource = {"blob": blob, "mimeType": "application/octet-stream", "uri": "memo://binary"}
    return {"content": [{"resource": resource, "type": "resource"}], "isError": False}


def _add(args: dict[str, Any]) -> dict[str, Any]:
    total = {"sum": args["a"] + args["b"]}
    return {**_text(json.dumps(total, indent=2)), "structuredContent": total}


def _fail(args: dict[str, Any]) -> dict[str, Any]:
    raise ToolFailure(args["message"])


def _big(args: dict[str, Any]) -> dict[str, Any]:
    if args["size"] < 0:
        raise ToolFailure("size must be >= 0")
    return _text("x" * args["size"])


def _crash(args: dict[str, Any]) -> dict[str, Any]:
    os._exit(1)


HANDLERS: dict[str, Any] = {
    "echo": lambda args: _text(args["text"]),
    "add": _add,
    "fail": _fail,
    "read_notes": lambda args: _text("\n".join(f"{k}: {v}" for k, v in NOTES.items())),
    "delete_note": lambda args: _text(f"deleted {args['id']}"),
    "fetch_url": lambda args: _text(f"fetched {args['url']}"),
    "mystery": lambda args: _text("42"),
    "image": _image,
    "link": _link,
    "embedded": _embedded,
    "binary": _binary,
    "big": _big,
    "env": lambda args: _text(os.environ.get(args["name"], "<unset>")),
    "crash": _crash,
}


def run_tool(name: str, arguments: dict[str, Any], cancelled: threading.Event) -> dict[str, Any]:
    """One tool's result; ``ToolFailure`` for a failure. ``sleep`` wakes early when cancelled."""
    args = check_arguments(name, _BY_NAME[name]["inputSchema"], arguments)
    if name == "sleep":
        cancelled.wait(max(0.0, args["seconds"]))
        return _text("slept")
    return HANDLERS[name](args)  # type: ignore[no-any-return]


class Echo(EraServer):
    """The echo server on the raw two-era base (:mod:`tests.servers._era`)."""

    name = NAME
    instructions = INSTRUCTIONS
    tools = TOOLS

    def known_tool(self, name: str) -> bool:
        return name in _BY_NAME

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        try:
            return run_tool(name, arguments, call.cancelled)
        except ToolFailure as exc:
            return tool_error(name, str(exc))


def main() -> None:
    Echo().serve()


if __name__ == "__main__":
    main()
