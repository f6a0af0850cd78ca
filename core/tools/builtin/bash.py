"""``bash``: run a command in the working directory, with a timeout and capped output.

The command gets its own process group, so a timeout or a cancel (Ctrl-C) kills everything it
started, and background children that keep the output pipe open cannot hang the call.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from codebot_mcp.core.proc import descendants
from codebot_mcp.core.proc.spawn import open_process
from codebot_mcp.core.tools.base import Capability, Permission, ToolResult
from codebot_mcp.core.tools.builtin._common import BadArgument, integer, string

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
MAX_OUTPUT_BYTES = 30_000
"""Head and tail are kept; the middle of a huge build log is rarely the interesting part."""
EXIT_GRACE = 0.5
"""Seconds to keep reading after the shell exits, before leftover children are killed."""


class _Capped:
    def __init__(self, limit: int) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        if self.total <= len(self.head) + len(self.tail):
            return head + self.tail.decode("utf-8", errors="replace")
        cut = self.total - len(self.head) - len(self.tail)
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n[... {cut} bytes of output cut ...]\n{tail}"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # already gone
        pass


class BashTool:
    """Run a shell command."""

    name = "bash"
    description = (
        "Run a bash command in the working directory and return its combined stdout and "
        f"stderr (capped at {MAX_OUTPUT_BYTES} bytes) and exit code. Non-interactive: stdin "
        f"is empty. timeout is in seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT})."
    )

    def __init__(self, cwd: Path, root: Path | None = None) -> None:
        self.cwd = cwd
        self.root = root or cwd
        """The project root (bash is not confined to it: it asks before every command)."""

    def schema(self) -> dict[str, Any]:
        """Arguments: ``command`` and optional ``timeout``."""
        return {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command line."},
                "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
            },
            "required": ["command"],
        }

    def permission(self) -> Permission:
        """A shell can do anything."""
        return Permission(Capability.EXECUTE, "built-in bash: runs arbitrary shell commands")

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the command; a non-zero exit or a timeout is an error result."""
        try:
            command = string(arguments, "command")
            timeout = min(integer(arguments, "timeout", DEFAULT_TIMEOUT), MAX_TIMEOUT)
        except BadArgument as exc:
            return ToolResult(f"bash: {exc}", is_error=True)
        env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat"}
        try:
            process = await open_process(
                ["bash", "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return ToolResult(f"bash: cannot start bash: {exc.strerror}", is_error=True)
        output = _Capped(MAX_OUTPUT_BYTES)
        try:
            timed_out = await self._collect(process, output, timeout)
        finally:  # also on cancellation: nothing the command started may outlive the call
            _kill_group(process.pid)
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await process.aclose()
            descendants.reap_adopted()  # `cmd &` that exited since: no zombie left behind
        return self._result(output, process.returncode, timed_out, timeout)

    @staticmethod
    async def _collect(process: anyio.abc.Process, output: _Capped, limit: float) -> bool:
        assert process.stdout is not None
        stdout = process.stdout
        eof = anyio.Event()

        async def pump() -> None:
            async for data in stdout:
                output.add(data)
            eof.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            with anyio.move_on_after(limit) as scope:
                await process.wait()
            if not scope.cancelled_caught:
                with anyio.move_on_after(EXIT_GRACE):
                    await eof.wait()
            _kill_group(process.pid)  # closes the pipe held by leftover children: pump ends
            with anyio.move_on_after(EXIT_GRACE):
                await eof.wait()
            tg.cancel_scope.cancel()
        return scope.cancelled_caught

    @staticmethod
    def _result(output: _Capped, code: int | None, timed_out: bool, timeout: int) -> ToolResult:
        text = output.text().rstrip("\n")
        if timed_out:
            note = f"[timed out after {timeout}s; the command and its children were killed]"
            return ToolResult(f"{text}\n{note}".lstrip("\n"), is_error=True)
        if code:
            return ToolResult(f"{text}\n[exit code {code}]".lstrip("\n"), is_error=True)
        return ToolResult(text or "[no output]", data={"exit_code": code})
