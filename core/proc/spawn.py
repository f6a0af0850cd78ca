"""Start child processes that die with codebot, even after SIGKILL (Linux: parent-death signal).

``anyio.open_process`` has no ``preexec_fn``; its backend passes extra keywords on to
``subprocess.Popen``, so this one module reaches for ``anyio``'s backend (a private name,
fenced here; the test ``tests/hostile/test_signals.py`` fails the day it stops applying).
Elsewhere, or when the private name is gone, it is plain ``anyio.open_process``.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from anyio.abc import Process

from codebot_mcp.core.proc import descendants

PR_SET_PDEATHSIG = 1


def _parent_death_signal() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child, between fork and exec
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # codebot died before prctl took effect
            os._exit(1)

    return preexec


async def open_process(
    command: Sequence[str],
    *,
    die_with_parent: bool = True,
    before_exec: Callable[[], None] | None = None,
    **kwargs: Any,
) -> Process:
    """``anyio.open_process`` whose child gets SIGKILL when codebot dies (Linux), and whose
    descendants are found and stopped at exit even after ``setsid`` (:mod:`core.descendants`).

    ``die_with_parent=False``: no parent-death signal, for a child that something else (the
    reaper of :mod:`mcpbridge.reaper`) stops after codebot exits. ``before_exec`` runs in the
    child between fork and exec (the reaper's announcement), where the private path applies.
    """
    descendants.become_subreaper()
    process = await _open(command, die_with_parent, before_exec, **kwargs)
    descendants.track(process.pid)
    return process


async def _open(
    command: Sequence[str],
    die_with_parent: bool,
    before_exec: Callable[[], None] | None,
    **kwargs: Any,
) -> Process:
    hooks = [h for h in (_parent_death_signal() if die_with_parent else None, before_exec) if h]
    if not hooks:
        return await anyio.open_process(command, **kwargs)

    def preexec() -> None:  # runs in the child, between fork and exec
        for hook in hooks:
            hook()

    try:
        from anyio._core._eventloop import get_async_backend  # pyright: ignore[reportPrivateUsage]
    except ImportError:
        return await anyio.open_process(command, **kwargs)
    stdin = kwargs.pop("stdin", -1)
    stdout = kwargs.pop("stdout", -1)
    stderr = kwargs.pop("stderr", -1)
    return await get_async_backend().open_process(
        list(command), stdin=stdin, stdout=stdout, stderr=stderr, preexec_fn=preexec, **kwargs
    )
