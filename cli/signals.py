"""Ctrl-C that cancels a scope (an orderly unwind) instead of killing the process."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import anyio


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
