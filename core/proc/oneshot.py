"""Run a short command to completion and leave nothing behind: a hook, for one.

The command gets its stdin, its own process group and an environment marker
(``CODEBOT_RUN_MARKER=<random>``). Its stdout and stderr are read apart, each capped. It is
bounded by a timeout; when it exits (or times out, or the caller is cancelled) its process
group is killed, and so is any process still carrying its marker: a ``setsid``/``nohup``
child that left the group is found through ``/proc/<pid>/environ``. (A process that scrubs
its own environment *and* leaves the group escapes this; codebot's exit sweep,
:mod:`core.proc.descendants`, still stops it.)
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from codebot_mcp.core.proc import descendants, procfs
from codebot_mcp.core.proc.spawn import open_process

MARKER_VARIABLE = "CODEBOT_RUN_MARKER"
MAX_OUTPUT_BYTES = 256 * 1024
"""Of each stream, this much is kept (the head): a hook's answer is small."""
EXIT_GRACE_SECONDS = 0.3
"""After the command exits, its pipes get this long to reach end-of-file (a background child
may hold them open) before the group is killed."""
KILL_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class Finished:
    """How a command ended."""

    code: int | None
    """The exit code; None when it was killed (timeout) or could not start."""
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


class _Capped:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.cut = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[: max(0, room)]
        self.cut += max(0, len(chunk) - max(0, room))

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.cut} bytes cut]" if self.cut else "")


async def run_once(
    argv: Sequence[str],
    *,
    stdin: bytes,
    env: Mapping[str, str],
    cwd: Path,
    limit: float,
    max_output: int = MAX_OUTPUT_BYTES,
    **spawn: Any,
) -> Finished:
    """Run ``argv`` with ``stdin`` for at most ``limit`` seconds; see the module docstring.
    ``spawn``: more options of :func:`core.proc.spawn.open_process` (confinement).

    Raises:
        OSError: the command could not be started.
    """
    marker = secrets.token_hex(12)
    began = time.monotonic()
    process = await open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**env, MARKER_VARIABLE: marker},
        start_new_session=True,
        **spawn,
    )
    out, err = _Capped(max_output), _Capped(max_output)
    timed_out = False
    try:
        timed_out = await _communicate(process, stdin, out, err, limit)
    finally:  # also on cancellation: nothing it started may outlive it
        _kill_group(process.pid)
        kill_marked(marker, since=process.pid)
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await process.aclose()
        descendants.reap_adopted()
    code = None if timed_out else process.returncode
    return Finished(code, out.text(), err.text(), timed_out, time.monotonic() - began)


async def _communicate(
    process: anyio.abc.Process, data: bytes, out: _Capped, err: _Capped, limit: float
) -> bool:
    """Feed stdin, read both streams; True when ``limit`` seconds passed first."""
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    done = {"out": anyio.Event(), "err": anyio.Event()}
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr

    async def feed() -> None:
        try:
            await stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the command did not read it all: its business
        finally:
            await stdin.aclose()

    async def pump(stream: anyio.abc.ByteReceiveStream, sink: _Capped, key: str) -> None:
        try:
            async for chunk in stream:
                sink.add(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        done[key].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(feed)
        tg.start_soon(pump, stdout, out, "out")
        tg.start_soon(pump, stderr, err, "err")
        with anyio.move_on_after(limit) as scope:
            await process.wait()
        if not scope.cancelled_caught:
            with anyio.move_on_after(EXIT_GRACE_SECONDS):
                await done["out"].wait()
                await done["err"].wait()
        _kill_group(process.pid)  # closes pipes held by leftover children: the pumps end
        with anyio.move_on_after(EXIT_GRACE_SECONDS):
            await done["out"].wait()
            await done["err"].wait()
        tg.cancel_scope.cancel()
    return scope.cancelled_caught


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # the group is empty: nothing left
        pass


def marked(marker: str, since: int = 0) -> list[int]:
    """Live processes of this user whose environment carries ``marker``. With ``since`` (the
    pid of the process that started them) only later pids are read, unless pids wrapped
    around since (then all are)."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    uid = os.getuid()
    last = procfs.last_pid()
    floor = since if last is not None and last >= since else 0
    found: list[int] = []
    for pid in procfs.pids():
        if pid < floor or procfs.owner(pid) != uid:
            continue
        entries = procfs.environ(pid)
        if entries is not None and needle in entries and procfs.start_ticks(pid) is not None:
            found.append(pid)
    return found


def kill_marked(marker: str, since: int = 0) -> int:
    """SIGKILL every process carrying ``marker`` (a few rounds: one may fork as it dies);
    how many were killed. ``since``: see :func:`marked`."""
    killed = 0
    for _ in range(KILL_ROUNDS):
        pids = marked(marker, since)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
    return killed
