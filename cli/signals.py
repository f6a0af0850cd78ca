"""SIGTERM and SIGHUP end a command the way Ctrl-C does: an orderly unwind that stops every
server and every ``bash`` child, then exit 130 (a closed terminal sends SIGHUP).

Every command enters its event loop through :func:`run`, so none can forget it (a test holds
``anyio.run`` to this module)."""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import anyio

T = TypeVar("T")
SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_RECEIVED: list[int] = []
"""SIGTERM/SIGHUP received by :func:`terminable` in this process."""


def terminating() -> bool:
    """True once SIGTERM or SIGHUP asked this process to end (not Ctrl-C): a call cancelled by
    it leaves its server-side task running, for ``--continue`` to pick up."""
    return bool(_RECEIVED)


def run(func: Callable[..., Awaitable[T]], *args: Any, one_shot: bool = True) -> T:
    """``anyio.run(func, *args)`` under :func:`terminable`: the one way a command runs async.

    A ``one_shot`` command (every one but the REPL) prints its results first and leaves the
    rest of its servers' shutdown to the reaper (:mod:`mcpbridge.transport.reaper`): it exits
    without waiting for a slow server to stop. The REPL stops the servers it drops itself.

    Raises:
        Interrupted: Ctrl-C, SIGTERM or SIGHUP ended it (said as "interrupted", exit 130;
            Typer would otherwise turn the ``KeyboardInterrupt`` into a silent 130).
    """
    import anyio

    from codebot_mcp.core.errors import InterruptionError
    from codebot_mcp.mcpbridge.transport import reaper  # standard library only

    if one_shot:
        reaper.allow()
    try:
        return anyio.run(terminable, func, *args)
    except KeyboardInterrupt:
        raise InterruptionError from None


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
            _RECEIVED.append(number)
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


@contextmanager
def sigint_cancels(scope: anyio.CancelScope) -> Iterator[None]:
    """While inside, Ctrl-C (SIGINT) cancels ``scope`` instead of killing the process."""
    import asyncio

    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, scope.cancel)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        # remove_signal_handler installs Python's default handler; put back asyncio.Runner's,
        # which cancels the main task (an orderly unwind) instead of raising anywhere.
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
