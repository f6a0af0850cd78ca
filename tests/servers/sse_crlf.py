"""A Streamable HTTP MCP server that answers ``tools/call`` with a long SSE stream framed with
CRLF line ends (as the SSE standard allows): many small log events, then the result.

``stream(megabytes)`` sends that many megabytes of 8 kB ``notifications/message`` events
before its result (``streamed <megabytes> MB``): a legitimate stream, each event far below
the 32 MB message cap, the whole of it far above. ``--lf`` frames with LF instead, ``--cr``
with bare CR.

Run: ``python -m tests.servers.sse_crlf [--lf | --cr]``; prints ``READY <url>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from tests.servers.http_server import _lifespan_noop, _send_response, serve

TOOL = {
    "name": "stream",
    "description": "Streams many small log events, then answers.",
    "inputSchema": {
        "type": "object",
        "properties": {"megabytes": {"type": "integer"}},
        "required": ["megabytes"],
    },
}


def app_for(newline: bytes) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan_noop(receive, send)
            return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] != "POST":
            await _send_response(send, 405, b"", "text/plain")
            return
        request = json.loads(body or b"{}")
        method, ident = request.get("method"), request.get("id")
        if ident is None:
            await _send_response(send, 202, b"", "text/plain")
            return
        if method == "initialize":
            result: Any = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "sse-crlf", "version": "0.1.0"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            await stream(send, ident, int(request["params"]["arguments"]["megabytes"]), newline)
            return
        else:
            result = {}
        reply = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()
        await _send_response(send, 200, reply, "application/json")

    return app


async def stream(send: Any, ident: Any, megabytes: int, newline: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
        }
    )
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "debug", "data": "x" * 8000},
    }
    event = b"event: message" + newline + b"data: " + json.dumps(note).encode() + newline * 2
    batch = event * 64
    for _ in range(megabytes * 2**20 // len(batch) + 1):
        await send({"type": "http.response.body", "body": batch, "more_body": True})
    result = {"content": [{"type": "text", "text": f"streamed {megabytes} MB"}]}
    final = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()
    last = b"event: message" + newline + b"data: " + final + newline * 2
    await send({"type": "http.response.body", "body": last, "more_body": False})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    style = parser.add_mutually_exclusive_group()
    style.add_argument("--lf", action="store_true")
    style.add_argument("--cr", action="store_true")
    args = parser.parse_args()
    newline = b"\n" if args.lf else b"\r" if args.cr else b"\r\n"
    asyncio.run(serve(app_for(newline), args.port))


if __name__ == "__main__":
    main()
