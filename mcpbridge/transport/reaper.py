"""Results first, shutdown after: a detached reaper finishes stopping servers after we exit.

A one-shot command (``mcp list``, ``mcp call``, ``mcp doctor``) has its result long before its
servers are gone: server-everything alone waits 0.36 s after its stdin closes, and one that
sends a request after its stdin closed may never exit on its own. When the console script will
exit right after the command (:func:`arm`, by ``cli.entry.main``) and the command allows it
(:func:`allow`), the first server launch starts one small reaper (this file run as a script,
standard library only, ``python -I -S``) and tells it, down a pipe, each server it launches.
:meth:`~mcpbridge.transport.process.ServerProcess.stop` then closes the server's stdin and lets go
(:func:`handoff`) instead of waiting. When codebot exits, however it exits (even by SIGKILL),
the pipe ends and the reaper finishes the usual sequence for every server still running: wait
for it to exit on its own, then SIGTERM to its process group, then SIGKILL. It outlives
codebot by at most ``stdin_grace + term_grace``.

Servers the reaper watches are launched without the parent-death signal of
:mod:`core.proc.spawn` (it would SIGKILL them the moment codebot exits, with no grace to flush
anything); the reaper's pipe stands in for it. When the reaper cannot start, servers get the
parent-death signal and ``stop`` waits as usual.

The reaper runs in its own session (no terminal signal reaches it) with stdout and stderr on
/dev/null (a caller reading codebot's output sees EOF when codebot exits), and it is started
with a plain ``Popen``, never through :mod:`core.proc.spawn`. It checks each process's start time
before signalling, so a recycled pid is never hit.

Kept free of any import beyond the standard library: it runs as a script.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import subprocess


def _load_procfs() -> Any:
    """:mod:`core.proc.procfs`, the one ``/proc`` reader: imported as a package module inside
    codebot, loaded by file path when this file runs as a bare script (``python -I -S``)."""
    if __name__ != "__main__":
        from codebot_mcp.core.proc import procfs

        return procfs
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "core" / "proc" / "procfs.py"
    spec = importlib.util.spec_from_file_location("codebot_procfs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


procfs = _load_procfs()

_armed = False
_allowed = False
_reaper: subprocess.Popen[bytes] | None = None
_pipe: IO[bytes] | None = None
_failed = False
_watched: set[int] = set()
_handed: list[int] = []
_keep: list[object] = []
"""The handed-off process objects, kept referenced until exit (their finalizers would kill)."""
POLL_SECONDS = 0.02
"""The first wait between two looks at the process table; each next one is half as long
again, up to :data:`MAX_POLL_SECONDS` (a look reads every process's ``/proc`` stat: polling a
busy machine every 20 ms for seconds cost more CPU than the command it followed)."""
MAX_POLL_SECONDS = 0.25


def arm() -> None:
    """The process exits right after the command (console script): detaching is safe."""
    global _armed
    _armed = True


def allow() -> None:
    """The running command is one-shot: its servers' shutdown may finish after it exits."""
    global _allowed
    _allowed = True


def active() -> bool:
    """True when servers launched now are left to the reaper (starting it if need be)."""
    return _armed and _allowed and _start()


def _start() -> bool:
    global _reaper, _pipe, _failed
    if _reaper is not None:
        return True
    if _failed or not os.path.isdir("/proc"):  # the reaper reads start times from /proc
        return False
    import subprocess  # here: the console script imports this module before any command

    try:
        _reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except OSError:
        _failed = True
        return False
    _pipe = _reaper.stdin
    from codebot_mcp.core.proc import (
        descendants,
    )  # not in the script: only codebot starts the reaper

    descendants.spare(_reaper.pid)  # it outlives codebot on purpose
    return True


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), or None when it is gone or a zombie."""
    return procfs.start_ticks(pid)  # type: ignore[no-any-return]


def announce_fd() -> int | None:
    """The pipe a server's child announces itself on before it execs (the exec helper of
    ``core.proc.spawn`` writes its pid and start time there), so a SIGKILL of codebot right
    after the spawn (before :func:`watch`) cannot leave it unknown. None before the reaper."""
    return None if _pipe is None else _pipe.fileno()


def watch(pid: int, stdin_grace: float, term_grace: float) -> bool:
    """Tell the reaper about a just-launched server (again, when its child announced itself:
    the reaper counts each process once); False when it cannot take it."""
    ticks = start_ticks(pid)
    if _pipe is None or ticks is None:
        return False
    import json  # on use: every codebot start arms the reaper, few announce a server

    line = json.dumps({"pid": pid, "ticks": ticks, "grace": stdin_grace, "term": term_grace})
    try:
        _pipe.write(line.encode() + b"\n")
        _pipe.flush()
    except OSError:
        return False
    _watched.add(pid)
    return True


def watches(pid: int) -> bool:
    """True when the reaper knows ``pid`` (it was launched while :func:`active`)."""
    return pid in _watched


def handoff(pid: int, keep: object) -> None:
    """Leave the rest of stopping ``pid`` (its stdin already closed) to the reaper."""
    _keep.append(keep)
    _handed.append(pid)
    _quiet_child_watcher()


_WATCHER_WORDS = (
    "Loop %r that handles pid %r is closed",
    "Unknown child process pid %d, will report returncode 255",
)
"""What asyncio's child watcher logs when a process it waits for exits after the event loop
closed, or was reaped by someone else (codebot's exit sweep, as a subreaper)."""
_quieted = False


def _quiet_child_watcher() -> None:
    """A handed-off server may exit between the end of the event loop and codebot's exit;
    asyncio's child watcher, still waiting for it in a thread, would then print a warning on
    stderr (after codebot's own output). That exit is expected: those two records, for a
    handed-off pid only, are dropped."""
    global _quieted
    if _quieted:
        return
    import logging

    class HandedOff(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            args = record.args if isinstance(record.args, tuple) else ()
            pids = [a for a in args if isinstance(a, int)]
            return not (record.msg in _WATCHER_WORDS and any(p in _handed for p in pids))

    logging.getLogger("asyncio").addFilter(HandedOff())
    _quieted = True


def pending() -> bool:
    """True when a server was handed off: exit with ``os._exit`` (no finalizer may kill it)."""
    return bool(_handed)


def _live_groups() -> set[int]:
    """The process groups that hold a live (not zombie) process."""
    stats = (procfs.read_stat(pid) for pid in procfs.pids())
    return {s.pgid for s in stats if s is not None and s.live}


def _gone(target: dict[str, Any], groups: set[int]) -> bool:
    """The server and every process of its group have exited (zombies count as exited)."""
    now = start_ticks(target["pid"])
    if now == target["ticks"]:
        return False
    if now is not None:
        return True  # the pid is another process's now: our group is long gone
    return target["pid"] not in groups  # launched with start_new_session: pgid == pid


def _left(targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups = _live_groups() if targets else set()
    return [t for t in targets if not _gone(t, groups)]


def _wait(targets: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    left = _left(targets)
    pause = POLL_SECONDS
    while left and (remaining := deadline - time.monotonic()) > 0:
        time.sleep(min(pause, remaining))
        pause = min(pause * 1.5, MAX_POLL_SECONDS)
        left = _left(left)
    return left


def _signal(targets: list[dict[str, Any]], sig: signal.Signals) -> None:
    for t in _left(targets):  # nothing left of it (a recycled pid is not ours to signal)
        try:
            os.killpg(t["pid"], sig)
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


def _read_targets(stream: IO[bytes]) -> list[dict[str, Any]]:
    """Every target codebot announces, until its end of the pipe closes (it exited)."""
    import json

    targets: dict[tuple[int, int], dict[str, Any]] = {}
    for line in stream:
        try:
            target = json.loads(line)
        except ValueError:
            continue
        if not isinstance(target, dict) or not isinstance(target.get("pid"), int):
            continue
        if isinstance(target.get("ticks"), int):
            targets.setdefault((target["pid"], target["ticks"]), target)
    return list(targets.values())


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    reap(_read_targets(sys.stdin.buffer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
