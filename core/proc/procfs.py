"""The one reader of Linux's ``/proc``: a process's state, parent, group and start time, its
children, and every pid.

Standard library only, and importable by file path: the reaper
(:mod:`mcpbridge.transport.reaper`) runs as a bare script (``python -I -S``) and loads this
module from beside the package instead of importing it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

__all__ = ["Stat", "children", "pids", "read_stat", "start_ticks"]


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
