"""The loopback redirect listener: where the browser lands after the user authorizes.

It listens on 127.0.0.1 only (``callback_port``, or a free port), answers exactly one
callback whose ``state`` matches the authorization request, shows a short page saying it
worked or why not, and gives up after :data:`LOGIN_TIMEOUT_SECONDS`. Connections are served
at once, each in a task of its own (at most :data:`MAX_CONNECTIONS`): a slow, silent or junk
connection (another program, a browser's speculative preconnect) cannot hold up the real
redirect. Written on anyio's
sockets rather than an HTTP framework: it parses one request line, nothing more.
"""

from __future__ import annotations

import html
import secrets
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from mcp.client.auth import AuthorizationCodeResult

LOGIN_TIMEOUT_SECONDS = 300.0
"""How long the user has to finish in the browser."""
REQUEST_READ_SECONDS = 5.0
"""A connection that sends no request line within this is dropped (a stray port scan)."""
MAX_REQUEST_BYTES = 16 * 1024
MAX_CONNECTIONS = 32
"""Connections served at once; more are closed unanswered until one ends."""
CALLBACK_PATH = "/callback"


class LoginError(Exception):
    """The browser flow failed: denied, timed out, or the port is taken."""


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>codebot</title></head>
<body style="font-family:sans-serif;margin:3em"><h2>{title}</h2><p>{text}</p></body></html>"""


class LoopbackListener:
    """One authorization callback on ``http://127.0.0.1:<port>/callback``."""

    def __init__(self, port: int | None = None, timeout: float = LOGIN_TIMEOUT_SECONDS) -> None:
        self.requested_port = port
        self.timeout = timeout
        self.port = 0
        self.expected_state: str | None = None
        """Set from the authorization URL before the browser opens; other states are refused."""
        self._listener: SocketListener | None = None

    @property
    def redirect_uri(self) -> str:
        """What the authorization server redirects to."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackListener:
        try:
            group = await anyio.create_tcp_listener(
                local_host="127.0.0.1", local_port=self.requested_port or 0
            )
        except OSError as exc:
            raise LoginError(
                f"cannot listen on 127.0.0.1:{self.requested_port} for the login callback: "
                f"{exc.strerror or exc}"
            ) from None
        listener = group.listeners[0]  # one address: 127.0.0.1
        assert isinstance(listener, SocketListener)
        self._listener = listener
        self.port = listener.extra(SocketAttribute.local_port)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._listener is not None:
            await self._listener.aclose()
            self._listener = None

    async def wait(self) -> AuthorizationCodeResult:
        """The code, state and ``iss`` of the first valid callback.

        Raises:
            LoginError: the authorization server reported an error, or nobody came back
                within the timeout.
        """
        listener = self._listener
        assert listener is not None, "use the listener as 'async with'"
        found: list[AuthorizationCodeResult] = []
        failed: list[LoginError] = []
        slots = anyio.Semaphore(MAX_CONNECTIONS)

        async def serve(stream: SocketStream, done: anyio.CancelScope) -> None:
            try:
                async with stream:
                    result = await self._answer(stream)
            except LoginError as exc:
                failed.append(exc)
                done.cancel()
                return
            finally:
                slots.release()
            if result is not None:
                found.append(result)
                done.cancel()

        with anyio.move_on_after(self.timeout):
            async with anyio.create_task_group() as group:
                while True:
                    stream = await listener.accept()
                    try:
                        slots.acquire_nowait()
                    except anyio.WouldBlock:
                        await stream.aclose()  # too many at once: this one is not served
                        continue
                    group.start_soon(serve, stream, group.cancel_scope)
        if failed:
            raise failed[0]
        if found:
            return found[0]
        raise LoginError(
            f"no answer from the browser within {self.timeout:g} s (waiting on {self.redirect_uri})"
        )

    async def _answer(self, stream: SocketStream) -> AuthorizationCodeResult | None:
        target = await _read_target(stream)
        if target is None:
            return None
        parts = urlsplit(target)
        if parts.path != CALLBACK_PATH:
            await _respond(stream, 404, "Not found", "This is codebot's login callback.")
            return None
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        state = query.get("state")
        if self.expected_state is not None and (
            state is None or not secrets.compare_digest(state, self.expected_state)
        ):
            # A stale tab or a forged request: refuse it and keep waiting for the real one.
            await _respond(
                stream,
                400,
                "Login failed",
                "The state parameter does not match this login. Close this tab and retry.",
            )
            return None
        if "error" in query:
            reason = query["error"]
            if query.get("error_description"):
                reason += f": {query['error_description']}"
            await _respond(stream, 400, "Login failed", f"The authorization server said {reason}.")
            raise LoginError(f"the authorization server refused: {reason[:300]}")
        if not query.get("code"):
            await _respond(stream, 400, "Login failed", "The callback carries no code.")
            raise LoginError("the callback carried no authorization code")
        await _respond(stream, 200, "Logged in", "codebot is authorized. You can close this tab.")
        return AuthorizationCodeResult(code=query["code"], state=state, iss=query.get("iss"))


async def _read_target(stream: SocketStream) -> str | None:
    data = b""
    with anyio.move_on_after(REQUEST_READ_SECONDS):
        try:
            while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST_BYTES:
                data += await stream.receive(4096)
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            pass
    line = data.split(b"\r\n", 1)[0].decode("latin-1")
    method, _, rest = line.partition(" ")
    target = rest.rsplit(" ", 1)[0] if " " in rest else rest
    if method != "GET" or not target.startswith("/"):
        return None
    return target


async def _respond(stream: SocketStream, status: int, title: str, text: str) -> None:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    try:
        await stream.send(head.encode() + body)
    except (anyio.BrokenResourceError, OSError):
        pass
