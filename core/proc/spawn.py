"""Start child processes that die with codebot, even after SIGKILL, confined when asked.

Every child goes through the exec helper (:mod:`.helper`, a small C program): it sets the
parent-death signal, announces the child to the reaper, and applies the sandbox, then execs
the command. Nothing runs as Python between fork and exec (the process is threaded: a lock
held by another thread at fork time would hang the child); ``subprocess`` itself does the
rest (``start_new_session``, ``pass_fds``).

Without the helper (not Linux, or it could not be built) children start as plain
``anyio.open_process`` children: no parent-death signal (the sweep of :mod:`.descendants`
still stops them at a normal exit), and a confined start is refused
(:class:`ConfinementError`), never run unconfined.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process

from codebot_mcp.core.proc import descendants, helper


@dataclass(frozen=True, slots=True)
class Confinement:
    """What a confined child may do (``core.sandbox.confinement`` builds one from the settings).

    It reads and executes anywhere but ``hidden`` (an empty directory or file there); it
    writes only beneath ``writable`` (and to ``/dev/null`` and the like), never beneath
    ``protected``; ``network`` False: no network at all (but the proxy's forwarder, when
    ``proxy`` is set); ``pinned`` directories stay writable but cannot be renamed or removed.
    """

    writable: tuple[str, ...]
    protected: tuple[str, ...] = ()
    network: bool = False
    hidden: tuple[str, ...] = ()
    """Real paths covered by an empty read-only mount (credentials)."""
    pinned: tuple[str, ...] = ()
    """Writable folders above a protected or hidden path: made mount points, so none can be
    renamed or removed."""
    proxy: tuple[int, str] | None = None
    """Without network: (port, Unix socket path): a forwarder inside listens on
    ``127.0.0.1:port`` and relays to the socket (``core.sandbox.netproxy``)."""


@dataclass(frozen=True, slots=True)
class Announcement:
    """Tell the reaper (``mcpbridge/transport/reaper.py``) about the child from inside it,
    before it execs: a line on the pipe ``fd`` (kept open in the child only for that)."""

    fd: int
    grace: float
    term: float


class ConfinementError(Exception):
    """A confined start was asked for and cannot be had (the helper is missing)."""


def helper_argv(
    command: Sequence[str],
    *,
    die_with_parent: bool = True,
    announce: Announcement | None = None,
    confine: Confinement | None = None,
    helper_path: str,
) -> list[str]:
    """The command line that runs ``command`` through the helper at ``helper_path``."""
    argv = [helper_path]
    if die_with_parent:
        argv += ["--parent", str(os.getpid())]
    if announce is not None:
        argv += ["--announce", f"{announce.fd}:{announce.grace:g}:{announce.term:g}"]
    if confine is not None:
        argv.append("--sandbox")
        if not confine.network:
            argv.append("--no-network")
            if confine.proxy is not None:
                argv += ["--proxy", f"{confine.proxy[0]}:{confine.proxy[1]}"]
        for path in confine.writable:
            argv += ["--write", path]
        for path in confine.pinned:
            argv += ["--pin", path]
        for path in confine.protected:
            argv += ["--protect", path]
        for path in confine.hidden:
            argv += ["--hide", path]
    return [*argv, "--", *command]


async def open_process(
    command: Sequence[str],
    *,
    die_with_parent: bool = True,
    announce: Announcement | None = None,
    confine: Confinement | None = None,
    **kwargs: Any,
) -> Process:
    """``anyio.open_process`` whose child gets SIGKILL when codebot dies (Linux), whose
    descendants are found and stopped at exit even after ``setsid`` (:mod:`.descendants`),
    and which runs confined when ``confine`` says so.

    ``die_with_parent=False``: no parent-death signal, for a child that something else (the
    reaper of ``mcpbridge/transport/reaper.py``) stops after codebot exits; ``announce`` then
    tells that reaper about the child before it execs.

    Raises:
        ConfinementError: ``confine`` was given and the helper is missing or changed.
        OSError: the helper (or, without it, the command) cannot be started, or it changed
            since codebot verified it (:class:`.helper.HelperChangedError`).
    """
    descendants.become_subreaper()
    # The first call may compile the helper (a wheel install): off the event loop then.
    located = helper.locate() if helper.decided() else await anyio.to_thread.run_sync(helper.locate)
    if located is None:
        if confine is not None:
            raise ConfinementError(helper.problem() or "the exec helper is missing")
        process = await anyio.open_process(list(command), **kwargs)
    else:
        try:
            helper.check(located)  # what runs outside the sandbox, checked before each use
        except helper.HelperChangedError as exc:
            if confine is not None:
                raise ConfinementError(str(exc)) from None
            raise
        argv = helper_argv(
            command,
            die_with_parent=die_with_parent,
            announce=announce,
            confine=confine,
            helper_path=str(located),
        )
        if announce is not None:
            kwargs["pass_fds"] = (*kwargs.get("pass_fds", ()), announce.fd)
        process = await anyio.open_process(argv, **kwargs)
    descendants.track(process.pid)
    return process


async def command_line(command: Sequence[str], *, confine: Confinement | None) -> list[str]:
    """The argv that runs ``command`` as :func:`open_process` would, for another program to
    start (an ACP editor's terminal, on this machine): through the exec helper with the
    confinement when ``confine`` is given (without the parent-death signal: the child's
    parent is that program, not codebot), else ``command`` itself.

    Raises:
        ConfinementError: ``confine`` was given and the helper is missing or changed.
    """
    if confine is None:
        return list(command)
    located = helper.locate() if helper.decided() else await anyio.to_thread.run_sync(helper.locate)
    if located is None:
        raise ConfinementError(helper.problem() or "the exec helper is missing")
    try:
        helper.check(located)
    except helper.HelperChangedError as exc:
        raise ConfinementError(str(exc)) from None
    return helper_argv(command, die_with_parent=False, confine=confine, helper_path=str(located))
