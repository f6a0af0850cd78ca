"""The cyclic garbage collector, paused while a process starts.

Start-up creates hundreds of thousands of objects that live as long as the process: the
classes of ``openai``'s and the MCP SDK's pydantic models, codebot's own modules, the
runtime. Every collection while they pile up walks all of them again, and for a ``chat -p``
with one MCP server that is about a sixth of the run's CPU (measured: 1.33 s against 1.11 s
of CPU with the collector off). So an entry point calls :func:`hold` first, and the place
where the real work begins calls :func:`release`: what start-up made is frozen (never walked
again; reference counting still frees it) and the collector runs as usual from then on.

Where work begins: the first model request (:mod:`core.model.client`), a server command's
connections made (``mcpbridge.calls.route``, ``mcp doctor``), ``mcp serve`` and the warm
holder ready to serve, ``mcp call --batch`` before its first line, the REPL once its servers
connect. A one-shot command that never gets there (``trust``, ``mcp add``) ends with the
collector still paused: it is short, and ``cli.entry`` freezes the heap at exit anyway.
"""

from __future__ import annotations

__all__ = ["hold", "release"]

import gc

_held = False


def hold() -> None:
    """Pause the collector for start-up (an entry point, first thing)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """The real work begins: freeze what start-up made and run the collector again. Cheap
    and idempotent; nothing when :func:`hold` did not pause it (a library user, a test)."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
