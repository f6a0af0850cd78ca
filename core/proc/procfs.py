"""The one reader of Linux's ``/proc``: a process's state, parent, group and start time, its
children, owner and environment, every pid, and the last pid handed out.

Standard library only, and importable by file path: the reaper
(:mod:`mcpbridge.transport.reaper`) runs as a bare script (``python -I -S``) and loads this
module from beside the package instead of importing it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

__all__ = [
    "Stat",
    "children",
    "environ",
    "last_pid",
    "owner",
    "pids",
    "read_stat",
    "start_ticks",
]


class Stat(NamedTuple):
    """The fields of ``/proc/PID/stat`` codebot uses."""

    state: str
    """``R``, ``S``, ``D``, ``T``, ``Z`` (zombie), ``X`` (dead) ..."""
    ppid: int
    pgid: int
    start_ticks: int
    """Start time in clock ticks since boot: with the pid, a process's identity."""

    @property
    def live(self) -> bool:
        """Running or able to run: neither a zombie nor dead."""
        return self.state not in ("Z", "X")


def read_stat(pid: int) -> Stat | None:
    """``pid``'s stat, or None when it is gone or cannot be read. The command name (field 2)
    may hold spaces and parentheses: the fields are read after its last ``)``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return Stat(fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19]))
    except (OSError, IndexError, ValueError):
        return None


def start_ticks(pid: int) -> int | None:
    """The start time of a live ``pid``; None when it is gone or a zombie."""
    stat = read_stat(pid)
    return stat.start_ticks if stat is not None and stat.live else None


def children(pid: int) -> list[int]:
    """Direct children of ``pid``, over all its threads (``/proc/PID/task/*/children``)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found += [int(p) for p in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def pids() -> list[int]:
    """Every pid in ``/proc`` (empty when there is no ``/proc``)."""
    try:
        return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []


def owner(pid: int) -> int | None:
    """The uid that owns ``pid``, or None when it is gone."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def environ(pid: int) -> list[bytes] | None:
    """``pid``'s environment as ``NAME=value`` entries (as it started), or None when it cannot
    be read (gone, or another user's)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return handle.read().split(b"\0")
    except OSError:
        return None


def last_pid() -> int | None:
    """The pid the kernel handed out last (``/proc/loadavg``), or None."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            return int(handle.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None
