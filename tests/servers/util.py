"""Helpers to launch the test servers in ``tests/servers``.

- ``server_command(name, *args)`` -> ``(sys.executable, ["-m", "tests.servers.<name>", *args])``.
  The module is found only when the child's working directory is the repo
  root (``REPO_ROOT``) or ``PYTHONPATH`` contains it: pass ``cwd=REPO_ROOT``
  or ``env=server_env()`` when building ``StdioServerParameters``/a config.
- ``stdio_params(name, *args, env=None)``: ready-made ``StdioServerParameters``
  (cwd = repo root). Imports the SDK lazily.
- ``run_http_server(*args)``: context manager that runs ``http_server`` as a
  real subprocess, waits for its ``READY <url>`` line (30 s) and yields the
  URL; on exit it terminates the process (then kills it) so nothing is left
  behind.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

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


def _stop(process: subprocess.Popen[str]) -> None:
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
    command, argv = server_command(module, *args)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
        process = subprocess.Popen(
            [command, *argv],
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=_pump_lines, args=(process.stdout, lines), daemon=True).start()
            url = _wait_ready(lines, process, errlog)
            yield url
        finally:
            _stop(process)
            if process.stdout is not None:
                process.stdout.close()


def _wait_ready(
    lines: queue.Queue[str | None], process: subprocess.Popen[str], errlog: object
) -> str:
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
