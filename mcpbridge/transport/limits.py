"""How long a server may take and how much it may send over HTTP: the HTTP client's
timeouts, its answer cap, and the default per-call bound."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

    from codebot_mcp.core.httpcap import AnswerCap

DEFAULT_TOOL_TIMEOUT = 300.0
"""Seconds one tool call may take when the entry sets no ``tool_timeout``: a server that never
answers (or keeps an SSE stream alive forever) must not hang a run."""
TOOL_TIMEOUT_ENV = "CODEBOT_TOOL_TIMEOUT"


def http_timeout() -> httpx2.Timeout:
    """Connect/write within 30 s; a streamed response may stay quiet for 5 minutes.

    A function, so the stdio hot path (:mod:`mcpbridge.calls.lite`) can read the default call bound
    without importing the HTTP client.
    """
    import httpx2

    return httpx2.Timeout(30.0, read=300.0)


def answer_cap() -> AnswerCap:
    """The one HTTP answer cap (:mod:`core.httpcap`) at the stdio cap on one message
    (:data:`~codebot_mcp.mcpbridge.transport.wire.MAX_MESSAGE_BYTES`), an SSE stream counted
    event by event: for Streamable HTTP and the OAuth endpoints' answers."""
    from codebot_mcp.core.httpcap import AnswerCap
    from codebot_mcp.mcpbridge.transport.wire import MAX_MESSAGE_BYTES

    return AnswerCap(MAX_MESSAGE_BYTES, per_event=True)


def default_tool_timeout() -> float:
    """``CODEBOT_TOOL_TIMEOUT`` when it is a positive number, else :data:`DEFAULT_TOOL_TIMEOUT`."""
    import os

    try:
        value = float(os.environ.get(TOOL_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_TOOL_TIMEOUT
    return value if value > 0 else DEFAULT_TOOL_TIMEOUT
