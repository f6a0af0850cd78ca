"""Helpers to launch the test servers in ``tests/servers``.

- ``server_command(name, *args)`` -> ``(sys.executable, ["-m", "tests.servers.<name>", *args])``.
  The module is found only when the child's working directory is the repo
  root (``REPO_ROOT``) or ``PYTHONPATH`` contains it: pass ``cwd=REPO_ROOT``
  or ``env=server_env()`` when building ``StdioServerParameters``/a config.
- ``stdio_params(name, *args, env=None)``: ready-made ``StdioServerParameters``
  (cwd = repo root). Imports the SDK lazily.
- ``run_http_server(*args)``: context manager that runs ``http_server`` as a
  real process of its own, waits for its ``READY <url>`` line (30 s) and yields the
  URL; on exit it terminates the process (then kills it) so nothing is left
  behind. The process is a fork of ``tests.servers.forkserver`` (one per test process,
  the MCP SDK imported once), not a fresh interpreter that imports the SDK again.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from mcp import StdioServerParameters

REPO_ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_SECONDS = 30.0


def server_command(name: str, *args: str) -> tuple[str, list[str]]:
    """The ``(command, args)`` that start ``tests.servers.<name>``."""
    return sys.executable, ["-m", f"tests.servers.{name}", *args]


def server_env() -> dict[str, str]:
    """Extra environment that makes ``-m tests.servers.<name>`` importable from any cwd."""
    return {"PYTHONPATH": str(REPO_ROOT)}


def stdio_params(name: str, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """``StdioServerParameters`` for a test server, with cwd set to the repo root."""
    from mcp import StdioServerParameters

    command, argv = server_command(name, *args)
    return StdioServerParameters(command=command, args=argv, env=env, cwd=REPO_ROOT)


def _pump_lines(stream: object, lines: queue.Queue[str | None]) -> None:
    """Forward every stdout line to ``lines``; ``None`` marks EOF."""
    try:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


class _ForkServer:
    """This test process's :mod:`tests.servers.forkserver`, started at its first server."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            subprocess.run(
                [sys.executable, "-m", "tests.servers.forkserver"],
                stdin=theirs,
                stdout=subprocess.DEVNULL,  # each server has its own; the fork server says nothing
                cwd=REPO_ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                check=True,
            )  # it detaches at once (this process's descendants stay its own)
        self.channel = ours
        self.asking = threading.Lock()
        self.pids: queue.Queue[int | None] = queue.Queue()
        self.ended = threading.Condition()
        self.exits: dict[int, int] = {}
        self.gone = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.channel.recv(4096)
            except OSError:
                data = b""
            if not data:
                with self.ended:
                    self.gone = True
                    self.ended.notify_all()
                self.pids.put(None)
                return
            message = json.loads(data)
            if "pid" in message:
                self.pids.put(message["pid"])
            else:
                with self.ended:
                    self.exits[message["exit"]] = message["code"]
                    self.ended.notify_all()

    def start(self, module: str, args: Sequence[str], stdout: int, stderr: int) -> _Forked:
        request = {
            "module": module,
            "args": list(args),
            "env": {**os.environ, "PYTHONUNBUFFERED": "1"},
            "cwd": str(REPO_ROOT),
        }
        with self.asking:
            socket.send_fds(self.channel, [json.dumps(request).encode()], [stdout, stderr])
            pid = self.pids.get(timeout=READY_TIMEOUT_SECONDS)
        if pid is None:
            raise RuntimeError("the fork server of the test servers ended")
        return _Forked(self, pid)


class _Forked:
    """A server forked by the fork server: what ``run_http_server`` asks of a ``Popen``."""

    def __init__(self, server: _ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.stdout: IO[str] | None = None

    def poll(self) -> int | None:
        with self.server.ended:
            return self.server.exits.get(self.pid)

    def wait(self, timeout: float) -> int:
        with self.server.ended:
            if not self.server.ended.wait_for(
                lambda: self.pid in self.server.exits or self.server.gone, timeout
            ):
                raise subprocess.TimeoutExpired(f"tests.servers pid {self.pid}", timeout)
            return self.server.exits.get(self.pid, -signal.SIGKILL)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, signo: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signo)


_FORK_SERVER: list[_ForkServer] = []


def _fork_server() -> _ForkServer:
    with _FORK_SERVER_LOCK:
        if not _FORK_SERVER or _FORK_SERVER[0].gone:
            _FORK_SERVER[:] = [_ForkServer()]
        return _FORK_SERVER[0]


_FORK_SERVER_LOCK = threading.Lock()


def _stop(process: subprocess.Popen[str] | _Forked) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextmanager
def run_http_server(*args: str, module: str = "http_server") -> Iterator[str]:
    """Run ``tests.servers.<module>`` with ``args``; yield ``http://127.0.0.1:<port>/mcp``.

    Raises ``RuntimeError`` (with the server's stderr) if it exits or stays
    silent for 30 s before printing ``READY``.
    """
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        read, write = os.pipe()
        try:
            process = _fork_server().start(module, args, write, errlog.fileno())
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        process.stdout = open(read, encoding="utf-8", errors="replace")
        try:
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=_pump_lines, args=(process.stdout, lines), daemon=True).start()
            url = _wait_ready(lines, process, errlog)
            yield url
        finally:
            _stop(process)
            if process.stdout is not None:
                process.stdout.close()


def _wait_ready(lines: queue.Queue[str | None], process: _Forked, errlog: object) -> str:
    def failure(reason: str) -> RuntimeError:
        errlog.seek(0)  # type: ignore[attr-defined]
        stderr = errlog.read()[-4000:]  # type: ignore[attr-defined]
        return RuntimeError(f"http_server {reason}; exit code {process.poll()}; stderr:\n{stderr}")

    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    try:
        while True:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                process.wait(timeout=5)
                raise failure("exited before printing READY")
            if line.startswith("READY "):
                return line.split(" ", 1)[1].strip()
    except queue.Empty:
        raise failure(f"did not print READY within {READY_TIMEOUT_SECONDS:.0f} s") from None
