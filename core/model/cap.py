"""A size cap on the model's answers: one answer (a body, or a whole stream) may be at most
:data:`MAX_ANSWER_BYTES` decoded bytes.

``openai`` reads whatever the endpoint sends: an endless stream, or a 400 MB body, grows
memory until the process dies. The client codebot gives ``openai`` (its own default one, so
proxies and timeouts are unchanged) wraps every response stream and counts what arrives; past
the cap the answer is dropped with :class:`AnswerTooLargeError`, which the model client turns
into a clear error (exit 5). Requests ask for no compression; a body compressed anyway (gzip,
deflate) is decoded here under the cap (:mod:`core.inflate`), other encodings are refused.

The figure: an answer of ``max_tokens`` 128k tokens streamed token by token is about 25 MB of
SSE framing; 64 MB leaves room for that and for a long tool call, and stops a runaway.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from codebot_mcp.core.inflate import DECODED, Inflater

__all__ = [
    "MAX_ANSWER_BYTES",
    "AnswerTooLargeError",
    "capping_hook",
    "chunk_limit",
    "http_client",
]

MAX_ANSWER_BYTES = 64 * 2**20
"""Decoded bytes of one model answer (a JSON body, or a whole SSE stream)."""
CHUNKS_PER_TOKEN = 4
"""A streamed answer carries about one chunk per token (plus a few for the role, the finish
and usage); past this many per ``max_tokens`` the server is ignoring the cap."""
MIN_CHUNKS = 4096


def chunk_limit(max_tokens: int) -> int:
    """The most chunks one streamed answer may have before it is stopped as a runaway: the
    byte cap alone would let an endless stream of tiny chunks run for minutes."""
    return max(CHUNKS_PER_TOKEN * max_tokens, MIN_CHUNKS)


class AnswerTooLargeError(httpx2.ReadError):
    """The endpoint sent more than the cap in one answer (or an encoding codebot refuses)."""


class _Capped(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int, request: httpx2.Request, encoding: str) -> None:
        self._inner = inner
        self._limit = limit
        self._request = request
        self._inflater = Inflater(encoding) if encoding else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for raw in self._inner:
            pieces = iter([raw]) if self._inflater is None else self._decode(raw)
            for piece in pieces:  # inflated lazily: a bomb stops at the cap
                total += len(piece)
                if total > self._limit:
                    raise AnswerTooLargeError(
                        f"the answer is larger than {self._limit // 2**20} MB",
                        request=self._request,
                    )
                yield piece

    def _decode(self, raw: bytes) -> Iterator[bytes]:
        assert self._inflater is not None
        try:
            yield from self._inflater.pieces(raw)
        except zlib.error as exc:
            raise httpx2.DecodingError(
                f"the model server's compressed answer is corrupt: {exc}", request=self._request
            ) from None

    async def aclose(self) -> None:
        await self._inner.aclose()


def capping_hook(limit: int = MAX_ANSWER_BYTES) -> Any:
    """An httpx response hook that caps the body before anything reads it."""

    async def cap(response: httpx2.Response) -> None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await response.aclose()
            raise AnswerTooLargeError(
                f"the answer is {int(length) // 2**20} MB, larger than {limit // 2**20} MB",
                request=response.request,
            )
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in DECODED and encoding not in ("", "identity"):
            await response.aclose()
            raise httpx2.DecodingError(
                f"the model server answered in an encoding codebot does not accept ({encoding})",
                request=response.request,
            )
        if encoding in DECODED:
            del response.headers["content-encoding"]  # decoded here, under the cap
            response.headers.pop("content-length", None)
        response.stream = _Capped(
            response.stream, limit, response.request, encoding if encoding in DECODED else ""
        )

    return cap


def http_client(limit: int = MAX_ANSWER_BYTES) -> httpx2.AsyncClient:
    """``openai``'s own default client (its timeouts, limits, proxies), every answer capped."""
    import openai

    return openai.DefaultAsyncHttpxClient(
        event_hooks={"response": [capping_hook(limit)]}, headers={"Accept-Encoding": "identity"}
    )
