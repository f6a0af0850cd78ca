"""SIGTERM and SIGHUP end a command the way Ctrl-C does: an orderly unwind that stops every
server and every ``bash`` child, then exit 130 (a closed terminal sends SIGHUP)."""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
SIGNALS = (signal.SIGTERM, signal.SIGHUP)


async def terminable(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run ``func(*args)``; SIGTERM or SIGHUP cancels it and raises ``KeyboardInterrupt``
    once everything inside has unwound (shielded clean-ups still run to the end)."""
    import asyncio

    import anyio

    loop = asyncio.get_running_loop()
    received: list[int] = []
    with anyio.CancelScope() as scope:

        def on_signal(number: int) -> None:
            received.append(number)
            scope.cancel()

        installed: list[signal.Signals] = []
        for sig in SIGNALS:
            try:
                loop.add_signal_handler(sig, on_signal, sig)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                pass
        try:
            return await func(*args)
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
    raise KeyboardInterrupt  # only reached when a signal cancelled the scope
