"""A size cap for Streamable HTTP: one message from a server may be at most
:data:`mcpbridge.transport.wire.MAX_MESSAGE_BYTES`, as over stdio.

httpx has no response-size limit, so the transport wraps each response stream and counts the
bytes of the current message: a JSON body (any type but an event stream) as a whole, an SSE
stream (``text/event-stream``) event by event, so a long-lived stream of small events is
never cut. An event ends at a blank line, whatever the line ends are: the SSE standard allows
``\n``, ``\r\n`` and ``\r`` (and a blank line split across two reads still counts).
The bytes counted are the decoded ones: requests ask for no compression, and a server that
compresses anyway (gzip, deflate) is decoded here, piece by piece, under the cap (a "zip
bomb" of 100 kB that inflates to gigabytes is dropped at 32 MB); other encodings are refused.

Proxies from the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) are
honoured, as every httpx client does by default; this transport routes each request itself,
so the cap and every timeout hold through a proxy as well. (An httpx client given a transport
ignores proxy variables; choosing the route here keeps both.)
"""

from __future__ import annotations

import re
import urllib.request
import zlib
from collections.abc import AsyncIterator, Iterator

import httpx2

from codebot_mcp.core.inflate import DECODED, Inflater
from codebot_mcp.mcpbridge.transport.wire import MAX_MESSAGE_BYTES

_BLANK_LINE = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")
"""Two line ends in a row: the end of an SSE event (CRLF, CR or LF, in any mix)."""


class MessageTooLarge(httpx2.ReadError):
    """A server sent a message over the cap; the request fails instead of filling memory."""


def _too_large(limit: int, request: httpx2.Request) -> MessageTooLarge:
    return MessageTooLarge(
        f"the server's answer is larger than {limit // 2**20} MB and was dropped", request=request
    )


class EventSizes:
    """Counts the bytes of the SSE event being received, across reads: :meth:`add` returns
    the size of the current (unfinished) event after a chunk."""

    def __init__(self) -> None:
        self.current = 0
        self._tail = b""  # the last bytes of the previous chunk: a blank line may span reads

    def add(self, chunk: bytes) -> int:
        window = self._tail + chunk
        end = -1
        for match in _BLANK_LINE.finditer(window):
            end = match.end()
        if end >= 0:
            self.current = len(window) - end
        else:
            self.current += len(chunk)
        self._tail = window[-3:]
        return self.current


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        limit: int,
        request: httpx2.Request,
        owner: CappedTransport,
        encoding: str,
        events: bool = False,
    ) -> None:
        self._owner = owner
        self._events = EventSizes() if events else None
        self._inner = inner
        self._limit = limit
        self._request = request
        self._inflater = Inflater(encoding) if encoding else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        current = 0  # bytes of the message being received (the whole body, or one event)
        async for raw in self._inner:
            chunks = iter([raw]) if self._inflater is None else self._decode(raw)
            for chunk in chunks:
                if self._events is not None:
                    current = self._events.add(chunk)
                else:
                    current += len(chunk)
                if current > self._limit:
                    self._owner.tripped = True
                    raise _too_large(self._limit, self._request)
                yield chunk

    def _decode(self, raw: bytes) -> Iterator[bytes]:
        assert self._inflater is not None
        try:
            yield from self._inflater.pieces(raw)  # lazily: a bomb stops at the cap
        except zlib.error as exc:
            raise httpx2.DecodingError(
                f"the server's compressed answer is corrupt: {exc}", request=self._request
            ) from None

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """The default httpx transport (through the environment's proxy, if any), with every
    response message capped at ``limit`` decoded bytes."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._direct = httpx2.AsyncHTTPTransport()
        self._proxied: dict[str, httpx2.AsyncHTTPTransport] = {}
        self._proxies = urllib.request.getproxies_environment()
        self._limit = limit
        self.tripped = False
        """Set once an answer went over the cap (the SDK then reports a closed connection)."""
        self.session_id: str | None = None
        """The server's latest ``Mcp-Session-Id`` (handshake-era HTTP), for telemetry."""

    def proxy_for(self, url: httpx2.URL) -> str | None:
        """The proxy URL the environment names for ``url`` (None: connect directly)."""
        proxies = self._proxies
        proxy = proxies.get(url.scheme) or proxies.get("all")
        if not proxy:
            return None
        host = url.host if url.port is None else f"{url.host}:{url.port}"
        if urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
            return None
        return proxy if "://" in proxy else f"http://{proxy}"

    def _route(self, request: httpx2.Request) -> httpx2.AsyncHTTPTransport:
        proxy = self.proxy_for(request.url)
        if proxy is None:
            return self._direct
        if proxy not in self._proxied:
            try:
                self._proxied[proxy] = httpx2.AsyncHTTPTransport(proxy=proxy)
            except (ImportError, ValueError) as exc:
                raise httpx2.ProxyError(
                    f"cannot use the proxy {proxy} from the environment: {exc}", request=request
                ) from None
        return self._proxied[proxy]

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request; the answer's body is decoded and counted as it streams in."""
        request.headers["Accept-Encoding"] = "identity"
        response = await self._route(request).handle_async_request(request)
        self.session_id = response.headers.get("mcp-session-id") or self.session_id
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            await response.aclose()
            self.tripped = True
            raise _too_large(self._limit, request)
        if encoding not in DECODED and encoding not in ("", "identity"):
            await response.aclose()
            raise httpx2.DecodingError(
                f"the server answered in an encoding codebot does not accept ({encoding})",
                request=request,
            )
        headers = response.headers
        if encoding in DECODED:
            headers = httpx2.Headers(
                [
                    (k, v)
                    for k, v in headers.multi_items()
                    if k.lower() not in ("content-encoding", "content-length")
                ]
            )
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=headers,
            stream=_CappedStream(
                response.stream,
                self._limit,
                request,
                self,
                encoding if encoding in DECODED else "",
                events=response.headers.get("content-type", "")
                .lower()
                .startswith("text/event-stream"),
            ),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._direct.aclose()
        for transport in self._proxied.values():
            await transport.aclose()
