"""A running tool's output as it arrives, for whoever shows it (the REPL's live preview).

A view sets :data:`WATCHER` around a turn; a tool that produces output over time (``bash``)
hands each chunk to it. The watcher is called on the event loop, must be quick and must not
raise; the tool's result is the same whether anyone watches or not.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

Watcher = Callable[[bytes], None]
"""Takes one chunk of raw output (bytes as the process wrote them)."""

WATCHER: ContextVar[Watcher | None] = ContextVar("codebot_tool_output", default=None)
"""Set by the view for the turn; tasks the turn starts (tool calls) inherit it."""


def emit(data: bytes) -> None:
    """Hand ``data`` to the watcher, if any; a failing watcher never fails the tool."""
    watcher = WATCHER.get()
    if watcher is None:
        return
    try:
        watcher(data)
    except Exception:  # boundary: a display problem must not change what the tool does
        WATCHER.set(None)
