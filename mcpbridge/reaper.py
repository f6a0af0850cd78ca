"""Results first, shutdown after: a detached reaper finishes stopping servers after we exit.

A one-shot command (``mcp list``, ``mcp call``, ``mcp doctor``) has its result long before its
servers are gone: server-everything alone waits 0.36 s after its stdin closes. When the console
script is about to exit anyway (:func:`arm`, by ``cli.app.main``) and the command allows it
(:func:`allow`), :meth:`~mcpbridge.process.ServerProcess.stop` closes the server's stdin and
hands the process here instead of waiting. Just before exiting, :func:`spawn` starts one small
reaper (this file run as a script, standard library only, ``python -I -S``) that finishes the
usual sequence for every handed-off server: wait for it to exit on its own, then SIGTERM to its
process group, then SIGKILL. It outlives codebot by at most ``stdin_grace + term_grace``.

The reaper runs in its own session (no terminal signal reaches it) with stdin, stdout and stderr
on /dev/null (a caller reading codebot's output sees EOF when codebot exits), and it is started
with a plain ``Popen``, never through :func:`mcpbridge.process.launch`: a parent-death signal
meant for servers must not reach it. It checks each process's start time before signalling, so
a recycled pid is never hit.

Kept free of any import beyond the standard library: it runs as a script.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

_armed = False
_allowed = False
_handed: list[dict[str, Any]] = []
_keep: list[object] = []
"""The handed-off process objects, kept referenced until exit (their finalizers would kill)."""
POLL_SECONDS = 0.02


def arm() -> None:
    """The process exits right after the command (console script): detaching is safe."""
    global _armed
    _armed = True


def allow() -> None:
    """The running command is one-shot: its servers' shutdown may finish after it exits."""
    global _allowed
    _allowed = True


def active() -> bool:
    """True when a stop should hand the process off instead of waiting for it."""
    return _armed and _allowed


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), or None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def handoff(pid: int, keep: object, stdin_grace: float, term_grace: float) -> None:
    """Leave the rest of stopping ``pid`` (its stdin already closed) to the reaper."""
    _keep.append(keep)
    ticks = start_ticks(pid)
    if ticks is None:
        return  # already gone
    _handed.append({"pid": pid, "ticks": ticks, "grace": stdin_grace, "term": term_grace})


def pending() -> list[dict[str, Any]]:
    """What the reaper would be given."""
    return list(_handed)


def spawn() -> int | None:
    """Start the reaper for every handed-off server still running; its pid, or None."""
    targets = [t for t in _handed if start_ticks(t["pid"]) == t["ticks"]]
    _handed.clear()
    if not targets:
        return None
    try:
        reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), json.dumps(targets)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except OSError:
        # No reaper: finish the job here, the slow way, rather than leave a process behind.
        reap(targets)
        return None
    return reaper.pid


def _group_members(pgid: int) -> bool:
    """True while a live (not zombie) process is in process group ``pgid``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
            return True
    return False


def _gone(target: dict[str, Any]) -> bool:
    """The server and every process of its group have exited (zombies count as exited)."""
    now = start_ticks(target["pid"])
    if now == target["ticks"]:
        return False
    if now is not None:
        return True  # the pid is another process's now: our group is long gone
    return not _group_members(target["pid"])


def _wait(targets: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    left = [t for t in targets if not _gone(t)]
    while left and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        left = [t for t in left if not _gone(t)]
    return left


def _signal(targets: list[dict[str, Any]], sig: signal.Signals) -> None:
    for t in targets:
        if _gone(t):
            continue  # nothing of it is left (and a recycled pid is not ours to signal)
        try:
            os.killpg(t["pid"], sig)  # launched with start_new_session: pgid == pid
        except (ProcessLookupError, PermissionError):
            pass


def reap(targets: list[dict[str, Any]]) -> None:
    """Wait for each target to exit; SIGTERM its group after its grace, SIGKILL after more."""
    grace = max((t["grace"] for t in targets), default=0.0)
    term = max((t["term"] for t in targets), default=0.0)
    left = _wait(targets, grace)
    if not left:
        return
    _signal(left, signal.SIGTERM)
    left = _wait(left, term)
    _signal(left, signal.SIGKILL)
    _wait(left, term)


def main(argv: list[str]) -> int:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    targets = json.loads(argv[1])
    reap(targets)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
