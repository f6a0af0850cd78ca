"""A size cap for Streamable HTTP: one message from a server may be at most
:data:`mcpbridge.stdio.MAX_MESSAGE_BYTES`, as over stdio.

httpx has no response-size limit, so the transport wraps each response stream and counts the
bytes of the current message: a JSON body as a whole, an SSE stream event by event (an event
ends at a blank line), so a long-lived stream of small events is never cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

from mcpbridge.stdio import MAX_MESSAGE_BYTES


class MessageTooLarge(httpx2.ReadError):
    """A server sent a message over the cap; the request fails instead of filling memory."""


def _too_large(limit: int, request: httpx2.Request) -> MessageTooLarge:
    return MessageTooLarge(
        f"the server's answer is larger than {limit // 2**20} MB and was dropped", request=request
    )


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        limit: int,
        request: httpx2.Request,
        owner: CappedTransport,
    ) -> None:
        self._owner = owner
        self._inner = inner
        self._limit = limit
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        current = 0  # bytes of the message being received
        async for chunk in self._inner:
            boundary = chunk.rfind(b"\n\n")
            current = len(chunk) - boundary - 2 if boundary >= 0 else current + len(chunk)
            if current > self._limit:
                self._owner.tripped = True
                raise _too_large(self._limit, self._request)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """The default httpx transport, with every response message capped at ``limit`` bytes."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._limit = limit
        self.tripped = False
        """Set once an answer went over the cap (the SDK then reports a closed connection)."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request; the answer's body is counted as it streams in."""
        response = await self._inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            await response.aclose()
            self.tripped = True
            raise _too_large(self._limit, request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_CappedStream(response.stream, self._limit, request, self),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        """Close the pooled connections."""
        await self._inner.aclose()
