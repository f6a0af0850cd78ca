"""Streamable HTTP test server on 127.0.0.1 with bearer-token auth (SDK ``MCPServer`` + uvicorn).

Binds ``127.0.0.1:--port`` (default 0 = pick a free port) and, once uvicorn
accepts connections, prints exactly one stdout line
``READY http://127.0.0.1:<port>/mcp`` (flushed). Nothing else is written to
stdout; logs go to stderr (uvicorn access logging is off).

Every request must carry ``Authorization: Bearer <token>`` (``--token``,
default ``sekret-token``); otherwise the answer is HTTP 401 with
``WWW-Authenticate: Bearer`` and a JSON-RPC-shaped body
``{"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Unauthorized: ..."}}``.
The MCP endpoint is ``/mcp`` (SDK ``MCPServer.streamable_http_app()``, which
serves both the handshake era and 2026-07-28). Tools: ``echo(text)``,
``whoami()`` (returns ``http``), ``authorization()`` (echoes the bearer header back, as a
leaky server would) and ``huge(size)`` (``size`` characters of text).

Alternative modes (no MCP at all, no auth):

- ``--html``: every path/method answers 200 ``text/html`` ``<html>not mcp</html>``;
- ``--status N``: every request is answered with HTTP status N and a short
  plain-text body.

Run: ``python -m tests.servers.http_server [--port 0] [--token T] [--html | --status N]``
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import logging
import socket
import sys
from typing import Any

import uvicorn

DEFAULT_TOKEN = "sekret-token"

Scope = dict[str, Any]
ASGIApp = Any


async def _send_response(
    send: Any,
    status: int,
    body: bytes,
    content_type: str,
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


async def _drain_request(receive: Any) -> None:
    while True:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            return


async def _lifespan_noop(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def fixed_response_app(status: int, body: bytes, content_type: str) -> ASGIApp:
    """An ASGI app that answers every HTTP request the same way."""

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan_noop(receive, send)
            return
        if scope["type"] != "http":
            return
        await _drain_request(receive)
        await _send_response(send, status, body, content_type)

    return app


def bearer_gate(app: ASGIApp, token: str) -> ASGIApp:
    """Wrap ``app`` so HTTP requests without the right bearer token get a 401."""
    expected = f"Bearer {token}".encode()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": "Unauthorized: missing or invalid bearer token"},
        }
    ).encode()

    async def gated(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            supplied = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(supplied, expected):
                await _drain_request(receive)
                await _send_response(
                    send, 401, body, "application/json", ((b"www-authenticate", b"Bearer"),)
                )
                return
        await app(scope, receive, send)

    return gated


def mcp_app(token: str) -> ASGIApp:
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("http", version="0.1.0", log_level="WARNING")

    @mcp.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the given text back unchanged."""
        return text

    @mcp.tool(structured_output=False)
    def whoami() -> str:
        """Name the transport this server speaks."""
        return "http"

    @mcp.tool(structured_output=False)
    def authorization() -> str:
        """Echo the Authorization header (every request that got here carried exactly this)."""
        return f"your header was: Bearer {token}"

    @mcp.tool(structured_output=False)
    def huge(size: int) -> str:
        """A text result of ``size`` characters."""
        return "x" * size

    return bearer_gate(mcp.streamable_http_app(host="127.0.0.1"), token)


async def serve(app: ASGIApp, port: int, on_port: Any = None) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    actual_port = sock.getsockname()[1]
    if on_port is not None:
        on_port(actual_port)  # the app learns its own URL before the first request

    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        sys.stdout.write(f"READY http://127.0.0.1:{actual_port}/mcp\n")
        sys.stdout.flush()

    announcer = asyncio.create_task(announce())
    try:
        await server.serve(sockets=[sock])
    finally:
        announcer.cancel()
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--token", default=DEFAULT_TOKEN, help="required bearer token")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--html", action="store_true", help="serve an HTML page instead of MCP")
    mode.add_argument("--status", type=int, help="answer every request with this HTTP status")
    args = parser.parse_args()

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.html:
        app = fixed_response_app(200, b"<html>not mcp</html>", "text/html; charset=utf-8")
    elif args.status is not None:
        body = f"status {args.status} from test server".encode()
        app = fixed_response_app(args.status, body, "text/plain; charset=utf-8")
    else:
        app = mcp_app(args.token)
    asyncio.run(serve(app, args.port))


if __name__ == "__main__":
    main()
