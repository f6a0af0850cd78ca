"""The model's answers under the one HTTP answer cap (:mod:`core.httpcap`): one answer (a
body, or a whole stream) may be at most :data:`MAX_ANSWER_BYTES` decoded bytes.

``openai`` reads whatever the endpoint sends. The client codebot gives ``openai`` (its own
default one, so proxies and timeouts are unchanged) carries the cap's hooks; past the cap the
answer is dropped with :class:`~codebot_mcp.core.httpcap.AnswerTooLargeError`, which the model
client turns into a clear error (exit 5).

The figure: an answer of ``max_tokens`` 128k tokens streamed token by token is about 25 MB of
SSE framing; 64 MB leaves room for that and for a long tool call, and stops a runaway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codebot_mcp.core.httpcap import MODEL_WORDING, AnswerCap

if TYPE_CHECKING:
    import httpx2

__all__ = ["MAX_ANSWER_BYTES", "chunk_limit", "http_client"]

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


def http_client(limit: int = MAX_ANSWER_BYTES) -> httpx2.AsyncClient:
    """``openai``'s own default client (its timeouts, limits, proxies), every answer capped."""
    import openai

    cap = AnswerCap(limit, wording=MODEL_WORDING)
    return openai.DefaultAsyncHttpxClient(event_hooks=cap.hooks())
