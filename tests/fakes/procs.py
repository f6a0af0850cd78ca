"""Running the real ``codebot`` console script as a child process, and watching its output.

Used by the end-to-end tests (faults, Ctrl-C, tmux): they need the process table and real
signals, which an in-process ``run()`` cannot give.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

from tests.fakes import zygote

CODEBOT = Path(sys.executable).parent / "codebot"
"""The console script installed into the same environment as the running interpreter."""


def codebot_env(home: Path, **extra: str) -> dict[str, str]:
    """The parent's environment without keys, proxies and codebot settings, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "CODEBOT_")) and not k.lower().endswith("_proxy")
    }
    env.update(
        CODEBOT_HOME=str(home), NO_PROXY="127.0.0.1,localhost", NO_COLOR="1", PYTHONUNBUFFERED="1"
    )
    env["CODEBOT_MANAGED_SETTINGS"] = str(home / "no-managed-settings.json")  # not the machine's
    env.update(extra)
    return env


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is neither a zombie nor dead (one read of /proc: a
    process that vanishes meanwhile is not alive)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_until(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``predicate`` every 50 ms; fail with ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        time.sleep(0.05)


class Running:
    """A ``codebot`` child whose stdout and stderr are collected by reader threads."""

    def __init__(
        self, argv: list[str], cwd: Path, env: Mapping[str, str], *, forked: bool = False
    ) -> None:
        """``forked``: run as a fork of :mod:`tests.fakes.zygote` (the SDK and openai already
        imported), for a test whose subject is what the command does; such a run has no
        :attr:`pid` (the process below ``Popen`` is the shim)."""
        self.forked = forked
        self.proc = subprocess.Popen(
            [*zygote.command(), *argv] if forked else [str(CODEBOT), *argv],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._out: list[str] = []
        self._err: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self._out), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self._err), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _pump(self, stream: IO[str], sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    @property
    def pid(self) -> int:
        """The codebot process id (not known of a forked run: a test reading the process table
        runs the console script itself)."""
        assert not self.forked, "a forked run's process table is the zygote's, not Popen's"
        return self.proc.pid

    @property
    def stdout(self) -> str:
        """Everything written to stdout so far."""
        return "".join(self._out)

    @property
    def stderr(self) -> str:
        """Everything written to stderr so far."""
        return "".join(self._err)

    def wait(self, seconds: float) -> int:
        """Wait for the exit (killing the process if it overstays) and drain the readers."""
        try:
            code = self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(
                f"codebot did not exit within {seconds}s\nstderr:\n{self.stderr}"
            ) from None
        self._drain()
        return code

    def _drain(self) -> None:
        for thread in self._threads:
            thread.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        """Kill the process if it is still running, and close the pipes (test cleanup)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self._drain()
