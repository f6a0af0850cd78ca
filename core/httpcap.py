"""One size cap on HTTP answers, for every HTTP client codebot opens: the model client's
(``core.model.client``), Streamable HTTP and OAuth (``mcpbridge``), the registry's
(``core.registry.http``).

httpx has no response-size limit: an endless stream, or a 400 MB body, grows memory until the
process dies. An :class:`AnswerCap` goes into a client as its event hooks, so the client keeps
httpx's own transport, pool, timeouts and proxies (``trust_env``: ``HTTPS_PROXY``,
``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``); a client given a transport of its own would
ignore the proxy variables. The request hook asks for no compression; the response hook
refuses a declared length over the cap, then wraps the body and counts it as it is read: a
body as a whole, or, with ``per_event``, an SSE stream (``text/event-stream``) event by event,
so a long-lived stream of small events is never cut. An event ends at a blank line, whatever
the line ends are: the SSE standard allows ``\\n``, ``\\r\\n`` and ``\\r`` (and a blank line
split across two reads still counts). The bytes counted are the decoded ones: a server that
compresses anyway (gzip, deflate) is decoded here, piece by piece, under the cap
(:mod:`core.inflate`: a "zip bomb" of 100 kB that inflates to gigabytes is dropped at the
cap); other encodings are refused.

Each reader keeps its limit and its words (:class:`Wording`): 64 MB for one model answer
(``core.model.cap``), 32 MB for one MCP message as over stdio, 8 MiB for a registry page and
256 MiB for a bundle (``core.registry.http``).
"""

from __future__ import annotations

import functools
import os
import re
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2

from codebot_mcp.core.inflate import DECODED, Inflater

__all__ = [
    "MCP_WORDING",
    "MODEL_WORDING",
    "AnswerCap",
    "AnswerTooLargeError",
    "EventSizes",
    "Wording",
    "async_client",
    "sync_client",
    "tls_context",
]

_MB = 2**20
_C = TypeVar("_C")
_BLANK_LINE = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")
"""Two line ends in a row: the end of an SSE event (CRLF, CR or LF, in any mix)."""


@dataclass(frozen=True, slots=True)
class Wording:
    """How one reader's refusals read (``{limit}`` and ``{size}`` in MB)."""

    speaker: str
    """Who answered: the subject of the encoding and corruption messages."""
    over: str
    """An answer that grew past the cap as it was read."""
    over_declared: str
    """An answer whose ``Content-Length`` is past the cap (nothing of it is read)."""


MODEL_WORDING = Wording(
    "the model server",
    "the answer is larger than {limit} MB",
    "the answer is {size} MB, larger than {limit} MB",
)
"""The model client's: its error says who and what around it (``core.model.errors``)."""
MCP_WORDING = Wording(
    "the server",
    "the server's answer is larger than {limit} MB and was dropped",
    "the server's answer is larger than {limit} MB and was dropped",
)
"""An MCP server's (and an OAuth endpoint's), as the stdio cap words it."""


def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (``SSL_CERT_FILE``, ``SSL_CERT_DIR``, else the system's CA
    store), made once per process and shared by the clients that pass it as ``verify``:
    making one reads the CA store (about 0.1 s), a cost per client, per proxy mount, and so
    per registry page."""
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _tls_context(_cafile: str | None, _capath: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def async_client(cap: AnswerCap, **options: Any) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` with ``cap``'s hooks (before any of ``options``' own), the
    shared TLS context and the environment's proxies.

    Raises:
        httpx2.ProxyError: a proxy variable names a proxy httpx cannot use (a ``socks5://``
            one without ``socksio``, an unknown scheme).
    """
    return _client(httpx2.AsyncClient, cap.hooks(), options)


def sync_client(cap: AnswerCap, **options: Any) -> httpx2.Client:
    """:func:`async_client` for synchronous code (an ``httpx2.Client``)."""
    return _client(httpx2.Client, cap.sync_hooks(), options)


def _client(
    make: Callable[..., _C], hooks: dict[str, list[Callable[..., Any]]], options: dict[str, Any]
) -> _C:
    options["event_hooks"] = _merged(hooks, options.get("event_hooks"))
    options.setdefault("verify", tls_context())
    try:
        return make(**options)
    except (ImportError, ValueError) as exc:
        raise _proxy_error(exc) from None


def _merged(
    first: dict[str, list[Callable[..., Any]]], then: dict[str, list[Callable[..., Any]]] | None
) -> dict[str, list[Callable[..., Any]]]:
    merged = {kind: list(hooks) for kind, hooks in first.items()}
    for kind, hooks in (then or {}).items():
        merged.setdefault(kind, []).extend(hooks)
    return merged


def _proxy_error(exc: BaseException) -> httpx2.ProxyError:
    return httpx2.ProxyError(
        f"cannot use the proxy from the environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY): {exc}"
    )


class AnswerTooLargeError(httpx2.ReadError):
    """An answer went over the cap (it is dropped; the request fails instead of filling
    memory)."""

    def __init__(
        self, message: str, *, request: httpx2.Request, limit: int, declared: int | None
    ) -> None:
        super().__init__(message, request=request)
        self.limit = limit
        """The cap, in bytes."""
        self.declared = declared
        """The ``Content-Length`` the answer declared, when that is what went over."""


class EventSizes:
    """Counts the bytes of SSE events as they are received, across reads: :meth:`add` returns
    the size of the largest event a chunk ends or leaves unfinished, so an event over the cap
    is seen however the reads cut it (its end in the same read as most of it included)."""

    def __init__(self) -> None:
        self.current = 0
        """The size of the event being received (unfinished)."""
        self._tail = b""  # the last bytes of the previous chunk: a blank line may span reads

    def add(self, chunk: bytes) -> int:
        """Count ``chunk``; the size of the largest event it ends, or of the one it leaves
        unfinished when that is larger."""
        seen = len(self._tail)
        window = self._tail + chunk
        largest, start = 0, -1
        for match in _BLANK_LINE.finditer(window):
            if match.end() <= seen:
                continue  # it ended in the previous read, and was counted there
            size = match.end() - start if start >= 0 else self.current + match.end() - seen
            largest, start = max(largest, size), match.end()
        self.current = len(window) - start if start >= 0 else self.current + len(chunk)
        self._tail = window[-3:]
        return max(largest, self.current)


class AnswerCap:
    """Every answer of one client capped at ``limit`` decoded bytes (see the module).

    Use it as the client's hooks: ``httpx2.AsyncClient(event_hooks=cap.hooks())``, or
    ``cap.sync_hooks()`` for an ``httpx2.Client``.
    """

    def __init__(
        self, limit: int, *, wording: Wording = MCP_WORDING, per_event: bool = False
    ) -> None:
        self.limit = limit
        self.wording = wording
        self.per_event = per_event
        """Count an SSE stream event by event (MCP), not as a whole (a model's stream)."""
        self.tripped = False
        """Set once an answer went over the cap (the SDK then reports a closed connection)."""

    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        """The event hooks of an ``httpx2.AsyncClient``."""

        async def on_response(response: httpx2.Response) -> None:
            refusal = self._refusal(response)
            if refusal is not None:
                await response.aclose()
                raise refusal
            self._wrap(response)

        return {"request": [_no_compression], "response": [on_response]}

    def sync_hooks(self) -> dict[str, list[Callable[..., Any]]]:
        """The event hooks of an ``httpx2.Client``."""

        def on_response(response: httpx2.Response) -> None:
            refusal = self._refusal(response)
            if refusal is not None:
                response.close()
                raise refusal
            self._wrap(response)

        return {"request": [_no_compression_sync], "response": [on_response]}

    def too_large(self, request: httpx2.Request, declared: int | None = None) -> Exception:
        """The error for an answer over the cap (and the cap marked tripped)."""
        self.tripped = True
        words = self.wording.over if declared is None else self.wording.over_declared
        size = declared // _MB if declared is not None else 0
        return AnswerTooLargeError(
            words.format(limit=self.limit // _MB, size=size),
            request=request,
            limit=self.limit,
            declared=declared,
        )

    def _refusal(self, response: httpx2.Response) -> Exception | None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.limit:
            return self.too_large(response.request, int(length))
        encoding = _encoding(response)
        if encoding not in DECODED and encoding not in ("", "identity"):
            return httpx2.DecodingError(
                f"{self.wording.speaker} answered in an encoding codebot does not accept "
                f"({encoding})",
                request=response.request,
            )
        return None

    def _wrap(self, response: httpx2.Response) -> None:
        encoding = _encoding(response)
        if encoding in DECODED:
            del response.headers["content-encoding"]  # decoded here, under the cap
            response.headers.pop("content-length", None)
        else:
            encoding = ""
        events = self.per_event and response.headers.get("content-type", "").lower().startswith(
            "text/event-stream"
        )
        response.stream = _CappedStream(response.stream, self, response.request, encoding, events)


def _encoding(response: httpx2.Response) -> str:
    return response.headers.get("content-encoding", "identity").strip().lower()


async def _no_compression(request: httpx2.Request) -> None:
    request.headers["Accept-Encoding"] = "identity"


def _no_compression_sync(request: httpx2.Request) -> None:
    request.headers["Accept-Encoding"] = "identity"


class _CappedStream(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """One answer's body, decoded and counted as it streams in (sync or async, as its
    client)."""

    def __init__(
        self, inner: Any, cap: AnswerCap, request: httpx2.Request, encoding: str, events: bool
    ) -> None:
        self._inner = inner
        self._cap = cap
        self._request = request
        self._inflater = Inflater(encoding) if encoding else None
        self._events = EventSizes() if events else None
        self._current = 0  # bytes of the message being received (the whole body, or one event)

    def _count(self, raw: bytes) -> Iterator[bytes]:
        pieces = iter([raw]) if self._inflater is None else self._decode(raw)
        for piece in pieces:  # inflated lazily: a bomb stops at the cap
            if self._events is not None:
                self._current = self._events.add(piece)
            else:
                self._current += len(piece)
            if self._current > self._cap.limit:
                raise self._cap.too_large(self._request)
            yield piece

    def _decode(self, raw: bytes) -> Iterator[bytes]:
        assert self._inflater is not None
        try:
            yield from self._inflater.pieces(raw)
        except zlib.error as exc:
            raise httpx2.DecodingError(
                f"{self._cap.wording.speaker}'s compressed answer is corrupt: {exc}",
                request=self._request,
            ) from None

    def __iter__(self) -> Iterator[bytes]:
        for raw in self._inner:
            yield from self._count(raw)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for raw in self._inner:
            for piece in self._count(raw):
                yield piece

    def close(self) -> None:
        """Close the answer's connection (a sync client's)."""
        self._inner.close()

    async def aclose(self) -> None:
        """Close the answer's connection (an async client's)."""
        await self._inner.aclose()
