"""How long a server may take: the HTTP client's timeouts and the default per-call bound."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

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


def default_tool_timeout() -> float:
    """``CODEBOT_TOOL_TIMEOUT`` when it is a positive number, else :data:`DEFAULT_TOOL_TIMEOUT`."""
    import os

    try:
        value = float(os.environ.get(TOOL_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_TOOL_TIMEOUT
    return value if value > 0 else DEFAULT_TOOL_TIMEOUT
