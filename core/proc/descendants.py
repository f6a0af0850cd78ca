"""Descendants that leave their process group (``setsid``) are still found and stopped (Linux).

A server or a ``bash`` command runs in its own process group, and stopping it signals that
group. A grandchild that calls ``setsid`` leaves the group, and when its parent exits it would
be re-parented to init and live on. So the console script makes codebot a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``) before it starts its first child: an orphaned descendant
is re-parented to codebot instead, and stays findable through ``/proc``. When the command
ends (normally, on an error, Ctrl-C, SIGTERM or SIGHUP), :func:`sweep` stops every process
still descending from codebot: SIGTERM, a short grace, SIGKILL.

Exempt from the sweep: processes meant to outlive codebot (:func:`spare`, e.g. a background
holder, a browser window), and the process group of a child that is still running at sweep
time (:func:`track`; a detached reaper finishes stopping those). Only the console script arms
this (:func:`arm`): a test calling ``cli.app.run`` in-process never sweeps its own children.
Not covered: after a SIGKILL of codebot nothing is left to sweep (the parent-death signal
still stops its direct children), and a process that double-forks while codebot is not a
subreaper (other platforms).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterable

from codebot_mcp.core.proc import procfs
from codebot_mcp.core.proc.procfs import start_ticks

PR_SET_CHILD_SUBREAPER = 36
SWEEP_GRACE_SECONDS = 1.0
"""After SIGTERM, leftovers get this long to exit before SIGKILL."""
SWEEP_ROUNDS = 3
"""A leftover that forks while it is being stopped is caught by the next round."""
_POLL_SECONDS = 0.02

_armed = False
_subreaper = False
_roots: dict[int, int | None] = {}
"""pid → start time of every process started through :mod:`core.spawn`."""
_spared: set[int] = set()
_mortal: set[int] = set()
"""Tracked children whose process group the sweep stops even while they run (jobs)."""


def arm() -> None:
    """The console script runs this process: become a subreaper at the first child, sweep at
    exit. (In-process callers, such as tests, never arm it.)"""
    global _armed
    _armed = True


def armed() -> bool:
    """True once :func:`arm` ran."""
    return _armed


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process (Linux, once armed); True when so."""
    global _subreaper
    if _subreaper or not _armed or not sys.platform.startswith("linux"):
        return _subreaper
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def track(pid: int) -> None:
    """Remember a child started through :mod:`core.spawn` (a server, a ``bash`` command)."""
    _roots[pid] = start_ticks(pid)


def mortal(pid: int) -> None:
    """``pid`` (a tracked child) dies with codebot: the sweep stops its process group even
    while it runs (a background job; a server's group is handed to the reaper instead)."""
    _mortal.add(pid)


def forget_mortal(pid: int) -> None:
    """The mortal child ``pid`` ended (its pid may be reused)."""
    _mortal.discard(pid)


def tree(pid: int) -> list[tuple[int, int]]:
    """(pid, start ticks) of ``pid`` and every live process below it (``setsid`` ones too)."""
    out: list[tuple[int, int]] = []
    for member in (pid, *descendants(pid)):
        stat = _live(member)
        if stat is not None:
            out.append((member, stat.start_ticks))
    return out


def signal_tree(pid: int, targets: Iterable[tuple[int, int]], sig: signal.Signals) -> None:
    """Send ``sig`` to the process group ``pid`` leads and to each of ``targets`` (from
    :func:`tree`; a pid that is another process's by now is left alone)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):  # the group is gone
        pass
    _signal(targets, sig)


def spare(pid: int) -> None:
    """Exempt ``pid`` and everything below it from the sweep (it is meant to outlive us)."""
    _spared.add(pid)


def opened(action: Callable[[], object]) -> None:
    """Run ``action`` (it starts something meant to outlive us, e.g. a browser window) and
    spare the children it started."""
    before = set(procfs.children(os.getpid()))
    try:
        action()
    finally:
        for pid in set(procfs.children(os.getpid())) - before:
            spare(pid)


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below ``pid`` (default: this process), parents before children."""
    top = os.getpid() if pid is None else pid
    out: list[int] = []
    seen = {top}
    frontier = [top]
    while frontier:
        below = [c for p in frontier for c in procfs.children(p) if c not in seen]
        seen.update(below)
        out += below
        frontier = below
    return [p for p in out if _live(p) is not None]


def _kept() -> set[int]:
    """Process groups left alone: those of tracked children still running (handed off)."""
    groups: set[int] = set()
    for pid, ticks in _roots.items():
        stat = _live(pid)
        if stat is not None and stat.start_ticks == ticks and pid not in _mortal:
            groups.add(pid)
    return groups


def leftovers() -> list[tuple[int, int]]:
    """(pid, start ticks) of every descendant the sweep would stop."""
    spared: set[int] = set()
    for pid in _spared:
        if _live(pid) is not None:
            spared |= {pid, *descendants(pid)}
    groups = _kept()
    out: list[tuple[int, int]] = []
    for pid in descendants():
        stat = _live(pid)
        if stat is None or pid in spared or stat.pgid in groups:
            continue
        out.append((pid, stat.start_ticks))
    return out


def _signal(targets: Iterable[tuple[int, int]], sig: signal.Signals) -> None:
    for pid, ticks in targets:
        if start_ticks(pid) != ticks:
            continue  # gone, or the pid is another process's now
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reap() -> None:
    """Collect exited adopted children, so they do not linger as zombies."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap_adopted() -> int:
    """Collect adopted orphans that have exited (zombies: a subreaper must wait for them);
    children started through :mod:`core.spawn` are left to their own waiters. The count."""
    if not _subreaper:
        return 0
    reaped = 0
    for pid in procfs.children(os.getpid()):
        if pid in _roots or pid in _spared or not _is_zombie(pid):
            continue
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                reaped += 1
        except ChildProcessError:
            pass
    return reaped


def sweep(grace: float = SWEEP_GRACE_SECONDS) -> list[int]:
    """Stop every leftover descendant (see the module docstring); the pids that were stopped.

    Does nothing unless armed. Bounded: at most ``SWEEP_ROUNDS`` times ``grace`` seconds.
    """
    if not _armed or not sys.platform.startswith("linux"):
        return []
    stopped: list[int] = []
    for _ in range(SWEEP_ROUNDS):
        targets = leftovers()
        if not targets:
            break
        stopped += [pid for pid, _ in targets]
        _signal(targets, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if all(start_ticks(pid) != ticks for pid, ticks in targets):
                break
            time.sleep(_POLL_SECONDS)
        _signal(targets, signal.SIGKILL)
    if _subreaper:
        _reap()
    return stopped


def _live(pid: int) -> procfs.Stat | None:
    """``pid``'s stat while it is alive (not a zombie); None otherwise."""
    stat = procfs.read_stat(pid)
    return stat if stat is not None and stat.live else None


def _is_zombie(pid: int) -> bool:
    stat = procfs.read_stat(pid)
    return stat is not None and stat.state == "Z"
