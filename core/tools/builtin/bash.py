"""``bash``: run a command in the working directory, with a timeout and capped output.

The command gets its own process group, so a timeout or a cancel (Ctrl-C) kills everything it
started, and background children that keep the output pipe open cannot hang the call.

With a sandbox (:mod:`core.sandbox.confinement`) the command runs confined, and then without
asking (the permission gate sees :meth:`BashTool.sandboxed`). The model may pass
``"sandbox": false`` to run one command outside: the gate then asks as it always did. A
confined command that fails because the sandbox refused something says so in its result.

With background jobs (:class:`core.tools.background.BackgroundJobs`, a chat's job table,
``core.jobs``), ``"run_in_background": true`` starts the command as a background job under the
same sandbox and approval, and returns its id at once (with what it printed in the first
moment); the jobs feature's ``bash_output`` and ``bash_kill`` follow it.

With :class:`Terminals` (an ACP editor's terminal, ``cli/acp/bridge.py``), a foreground call
runs there instead: the same argv (the exec helper with the sandbox's confinement, then
``bash -c``), the same minimal environment and directory; the editor shows it live. The gate,
the output cap and the sandbox's notes are as for a call codebot starts itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc

from codebot_mcp.core.proc import descendants
from codebot_mcp.core.proc.spawn import ConfinementError, command_line, open_process
from codebot_mcp.core.sandbox import guarded
from codebot_mcp.core.sandbox.confinement import Sandbox
from codebot_mcp.core.secrets.credentials import shell_environment
from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.core.tools import live
from codebot_mcp.core.tools.background import BackgroundJobs
from codebot_mcp.core.tools.base import (
    Capability,
    Origin,
    Permission,
    ToolInfo,
    ToolResult,
    ToolSandbox,
)
from codebot_mcp.core.tools.builtin._common import BadArgumentError, integer, string

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
MAX_OUTPUT_BYTES = 30_000
"""Head and tail are kept; the middle of a huge build log is rarely the interesting part."""
EXIT_GRACE = 0.5
"""Seconds to keep reading after the shell exits, before leftover children are killed."""


@dataclass
class TerminalRun:
    """What a command run in a :class:`Terminals` left."""

    terminal_id: str
    output: str
    truncated: bool
    """The terminal dropped the start of the output (its byte limit)."""
    exit_code: int | None
    signal: str | None
    timed_out: bool


class Terminals(Protocol):
    """Terminals an editor lends (ACP's ``terminal/*`` methods, :mod:`cli.acp.bridge`):
    ``bash``'s foreground calls run there when it is set. The gate decides first; ``argv``
    is already confined (:func:`core.proc.spawn.command_line`) and ``env`` is the minimal
    environment."""

    async def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        limit: float,
        output_limit: int,
    ) -> TerminalRun:
        """Run ``argv`` to its end (killed after ``limit`` seconds or when the call is
        cancelled). Raises ``OSError`` with a message for the model when the editor refuses
        or fails."""
        ...


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
    DESCRIPTION = (
        "Run a bash command in the working directory and return its combined stdout and "
        f"stderr (capped at {MAX_OUTPUT_BYTES} bytes) and exit code. Non-interactive: stdin "
        f"is empty. timeout is in seconds (default {DEFAULT_TIMEOUT}, max {MAX_TIMEOUT})."
    )

    BACKGROUND = " run_in_background: a job (dev server, watcher); see bash_output, bash_kill."
    """Kept short: every request carries it."""

    def __init__(
        self,
        cwd: Path,
        root: Path | None = None,
        sandbox: Sandbox | None = None,
        jobs: BackgroundJobs | None = None,
        terminals: Terminals | None = None,
    ) -> None:
        self.cwd = cwd
        self.root = root or cwd
        """The project root (bash is not confined to it by the file tools' boundary)."""
        self.sandbox = sandbox
        """Where commands run confined; None (or inactive): unconfined, asking first."""
        self.jobs = jobs
        """The session's background jobs; None: no ``run_in_background`` (``mcp serve``)."""
        self.terminals = terminals
        """Where foreground calls run (an ACP editor's terminals); None: codebot's own
        process."""

    @property
    def description(self) -> str:  # type: ignore[override]
        """What the model reads; it names the sandbox when there is one."""
        base = self.DESCRIPTION + (self.BACKGROUND if self.jobs is not None else "")
        sandbox = self.sandbox
        if sandbox is None or not sandbox.active:
            return base
        where = (
            "only in its private $TMPDIR"
            if sandbox.requested == "read-only"
            else "only in the project, the configured roots and writable paths, and $TMPDIR"
        )
        net = "with network" if sandbox.network else "without any network"
        if sandbox.domains:  # sandbox.network as a list: those hosts through the proxy
            net = (
                f"with network only to {', '.join(sandbox.domains)} (HTTP and HTTPS through "
                "the proxy that HTTPS_PROXY names)"
            )
        return (
            f"{base} Commands run in a {sandbox.requested} sandbox: they may read "
            f"anywhere and write {where}, {net}; git directories stay read-only (git "
            "commands that write a repository, such as add or commit, need the sandbox off). "
            "If a command fails because the sandbox "
            'refused something it really needs, call bash again with "sandbox": false to run '
            "it outside the sandbox; the user is asked first."
        )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``command``, optional ``timeout`` (``sandbox`` with a sandbox,
        ``run_in_background`` with a job table)."""
        properties: dict[str, Any] = {
            "command": {"type": "string", "description": "The bash command line."},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
        }
        if self.jobs is not None:
            properties["run_in_background"] = {
                "type": "boolean",
                "description": "Return a job id at once; no timeout.",
            }
        if self.sandbox is not None and self.sandbox.active:
            properties["sandbox"] = {
                "type": "boolean",
                "description": "false: run outside the sandbox (the user is asked first). "
                "Only after the sandbox refused something the command needs.",
            }
        return {"type": "object", "properties": properties, "required": ["command"]}

    @property
    def info(self) -> ToolInfo:
        """A shell can do anything."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.EXECUTE, "built-in bash: runs arbitrary shell commands"),
            sandbox=ToolSandbox(self.sandboxed, self.sandbox_note),
        )

    def sandboxed(self, arguments: Mapping[str, Any]) -> str | None:
        """The sandbox mode this call runs under when it runs confined, else None."""
        sandbox = self.sandbox
        if sandbox is None or not sandbox.active or arguments.get("sandbox", True) is False:
            return None
        return sandbox.requested

    def background(self, arguments: Mapping[str, Any]) -> bool:
        """The call starts a background job."""
        return self.jobs is not None and arguments.get("run_in_background") is True

    def sandbox_note(self, arguments: Mapping[str, Any]) -> str:
        """Which sandbox the call runs under, in words (approvals, transcripts); a
        background job says so."""
        sandbox = self.sandbox
        if sandbox is None:
            note = "none"
        elif self.sandboxed(arguments) or not sandbox.active:
            note = sandbox.describe()
        else:
            note = f"none: the call asks to run outside the {sandbox.requested} sandbox"
        if self.background(arguments):
            note += (
                "; runs as a BACKGROUND JOB until it ends, bash_kill, /jobs kill or the "
                "session ends"
            )
        return note

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the command; a non-zero exit or a timeout is an error result."""
        try:
            command = string(arguments, "command")
            timeout = min(integer(arguments, "timeout", DEFAULT_TIMEOUT), MAX_TIMEOUT)
            if not isinstance(arguments.get("sandbox", True), bool):
                raise BadArgumentError("'sandbox' must be true or false")
            if not isinstance(arguments.get("run_in_background", False), bool):
                raise BadArgumentError("'run_in_background' must be true or false")
        except BadArgumentError as exc:
            return ToolResult(f"bash: {exc}", is_error=True)
        jobs = self.jobs if self.background(arguments) else None
        if jobs is not None and (refusal := jobs.refusal()) is not None:
            return ToolResult(f"bash: {refusal}; nothing ran.", is_error=True)
        # The user's environment, less its credentials and codebot's own secrets (the model's
        # API key): what the model runs cannot read them back (``echo $OPENAI_API_KEY``).
        env = {
            **shell_environment(os.environ, SECRETS.values()),
            "PAGER": "cat",
            "GIT_PAGER": "cat",
        }
        sandbox = self.sandbox if self.sandboxed(arguments) else None
        label = sandbox.requested if sandbox is not None else "off"
        watch = sandbox.watch(self.cwd) if sandbox is not None else None
        mark = sandbox.network_mark() if sandbox is not None else 0.0
        confine = None
        try:
            if sandbox is not None:
                env = sandbox.environment(env)
                confine = sandbox.confinement()
            if self.terminals is not None and jobs is None:  # the editor's terminal
                argv = await command_line(["bash", "-c", command], confine=confine)
                terminals, process = self.terminals, None
            else:
                terminals, argv = None, []
                process = await open_process(
                    ["bash", "-c", command],
                    confine=confine,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    cwd=self.cwd,
                    env=env,
                    start_new_session=True,
                )
        except ConfinementError as exc:
            return ToolResult(
                f"bash: the sandbox cannot start ({exc}); nothing ran. Call bash again with "
                '"sandbox": false to run it outside the sandbox (the user is asked first).',
                is_error=True,
                data={"sandbox": label},
            )
        except OSError as exc:
            return ToolResult(f"bash: cannot start bash: {exc.strerror or exc}", is_error=True)
        if terminals is not None:
            outcome = await self._in_terminal(terminals, argv, env, timeout)
            return self._finished(outcome, label, sandbox, command, mark, watch)
        assert process is not None
        if jobs is not None:
            return await jobs.start(process, command, label, sandbox, watch, self.cwd)
        output = _Capped(MAX_OUTPUT_BYTES)
        try:
            timed_out = await self._collect(process, output, timeout)
        finally:  # also on cancellation: nothing the command started may outlive the call
            _kill_group(process.pid)
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await process.aclose()
            descendants.reap_adopted()  # `cmd &` that exited since: no zombie left behind
        result = self._result(output, process.returncode, timed_out, timeout)
        outcome = (result, output.text(), timed_out)
        return self._finished(outcome, label, sandbox, command, mark, watch)

    def _finished(
        self,
        outcome: tuple[ToolResult, str, bool],
        label: str,
        sandbox: Sandbox | None,
        command: str,
        mark: float,
        watch: guarded.Watch | None,
    ) -> ToolResult:
        """The call's result (``outcome``: the result, the output's text, whether it timed
        out) with the sandbox label and, when confined, what the sandbox did."""
        result, text, timed_out = outcome
        result.data["sandbox"] = label
        if sandbox is not None:
            self._confined_notes(result, sandbox, command, text, timed_out, mark, watch)
        return result

    async def _in_terminal(
        self, terminals: Terminals, argv: list[str], env: Mapping[str, str], limit: int
    ) -> tuple[ToolResult, str, bool]:
        """Run ``argv`` in the editor's terminal: the result (capped as ours), the output's
        text and whether it timed out; an editor that fails is the call's error."""
        try:
            run = await terminals.run(
                argv, cwd=self.cwd, env=env, limit=limit, output_limit=MAX_OUTPUT_BYTES
            )
        except OSError as exc:
            failed = ToolResult(f"bash: the editor's terminal failed: {exc}", is_error=True)
            return failed, "", False
        output = _Capped(MAX_OUTPUT_BYTES)
        if run.truncated:
            output.add(b"[the editor's terminal dropped the start of the output]\n")
        output.add(run.output.encode("utf-8", errors="replace"))
        code = run.exit_code
        if code is None and run.signal is not None and not run.timed_out:
            output.add(f"\n[killed by signal {run.signal}]".encode())
            code = 1
        result = self._result(output, code, run.timed_out, limit)
        result.data["terminal_id"] = run.terminal_id
        return result, output.text(), run.timed_out

    def _confined_notes(
        self,
        result: ToolResult,
        sandbox: Sandbox,
        command: str,
        text: str,
        timed_out: bool,
        mark: float,
        watch: guarded.Watch | None,
    ) -> None:
        """What the sandbox did to a confined call, added to its result: a refusal that made
        it fail, hosts the proxy refused, hidden paths it read, names it created (moved)."""
        if result.is_error and not timed_out:
            note = sandbox.refusal_note(text, command, self.cwd)
            if note is not None:
                result.text = f"{result.text}\n{note}"
        refused = sandbox.refused_hosts(mark)
        if refused:  # the proxy's 403s, failed or not
            result.text = f"{result.text}\n{sandbox.network_note(refused)}"
            result.data["sandbox_refused_hosts"] = refused
        hidden = sandbox.hidden_note(command, text, self.cwd)  # reads as empty: say so
        if hidden is not None:
            result.text = f"{result.text}\n{hidden}"
        created = watch.created() if watch is not None else []
        if created:  # moved out of the project, and said
            moved = sandbox.quarantine(created)
            result.text = f"{result.text}\n{sandbox.created_note(moved)}"
            result.data["sandbox_created"] = [str(p) for p in created]
            result.data["sandbox_quarantined"] = {str(p): str(t) for p, t in moved if t}

    @staticmethod
    async def _collect(process: anyio.abc.Process, output: _Capped, limit: float) -> bool:
        assert process.stdout is not None
        stdout = process.stdout
        eof = anyio.Event()

        async def pump() -> None:
            async for data in stdout:
                output.add(data)
                live.emit(data)  # the REPL's live preview; nothing when no one watches
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
