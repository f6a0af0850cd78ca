"""Launching and stopping stdio server processes, without importing the MCP SDK.

Kept free of ``mcp`` imports on purpose: ``mcp list``/``mcp call`` launch the server processes
first and import the SDK (over a second of CPU) while the servers boot, so the two overlap.

A server gets a minimal environment (the SDK's allow-list) plus its configured ``env``, its own
process group (so Ctrl-C in the terminal does not reach it and a stop reaches its children too),
and its stderr goes to a log file of its own launch (:mod:`.runlog`), capped in size. An entry
with ``"sandbox"`` is started confined (:mod:`core.sandbox.confinement`), or not at all where the
machine cannot.
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
from anyio.abc import Process

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.proc.lookup import child_environment as _child_environment
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.proc.spawn import Announcement, ConfinementError, open_process
from codebot_mcp.core.sandbox.confinement import Sandbox
from codebot_mcp.core.secrets.redact import SECRETS, Redactor, entry_secrets, printable
from codebot_mcp.core.secrets.streamscrub import StreamScrubber
from codebot_mcp.mcpbridge.transport import reaper, runlog

STDIN_CLOSE_GRACE = 2.0
"""After stdin closes, a well-behaved server exits on its own within this time."""
TERM_GRACE = 2.0
"""After SIGTERM to the process group, wait this long before SIGKILL."""
STDERR_LOG_LIMIT = 4 * 1024 * 1024
"""A server flooding stderr fills its log up to this size; the rest is counted and dropped."""


class LaunchError(Exception):
    """The server process could not be started (stage "launch")."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass
class ServerProcess:
    """A launched stdio server and where its stderr goes."""

    name: str
    process: Process
    log_file: Path
    _log: IO[bytes] = field(repr=False)
    redact: Callable[[str], str] | None = None
    """Scrubs the server's secrets out of its stderr before it reaches the log."""
    dropped_stderr: int = 0
    closed: anyio.Event = field(default_factory=anyio.Event)
    """Set when the server's stdout ends: it exited, or we stopped it."""
    sandbox: Sandbox | None = None
    """The sandbox it runs in (its private temp directory goes when it stops)."""

    async def pump_stderr(self) -> None:
        """Copy stderr into the log file up to the cap; keep draining so the server never blocks.

        Scrubbed as a stream (:class:`core.secrets.stream.StreamScrubber`): a secret split across
        two reads, or across the middle of a long line, is masked all the same.
        """
        stream = self.process.stderr
        if stream is None:
            return
        written = 0
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        scrub = StreamScrubber(self.redact) if isinstance(self.redact, Redactor) else None

        def keep(text: str) -> None:
            nonlocal written
            if scrub is None and self.redact is not None:
                text = self.redact(text)
            chunk = text.encode("utf-8")
            room = STDERR_LOG_LIMIT - written
            if room > 0:
                self._log.write(chunk[:room])
                self._log.flush()
                written += min(room, len(chunk))
            if len(chunk) > room:
                self.dropped_stderr += len(chunk) - max(room, 0)

        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                text = decoder.decode(await stream.receive())
                keep(scrub.feed(text) if scrub is not None else text)
        rest = decoder.decode(b"", final=True)
        keep(scrub.feed(rest) + scrub.flush() if scrub is not None else rest)

    def note(self, line: str) -> None:
        """Append one line of codebot's own (a server log message) to the log file."""
        if not self._log.closed:
            self._log.write(line.encode("utf-8", "replace") + b"\n")
            self._log.flush()

    async def stop(self) -> None:
        """Close stdin, wait; SIGTERM the group, wait; SIGKILL. Shielded from cancellation."""
        with anyio.CancelScope(shield=True):
            process = self.process
            if process.stdin is not None:
                with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await process.stdin.aclose()
            if reaper.watches(process.pid) and process.returncode is None:
                self._detach()  # a one-shot command: the reaper finishes after we exit
                return
            if not await exited(process, STDIN_CLOSE_GRACE):
                _signal_group(process, signal.SIGTERM)
                if not await exited(process, TERM_GRACE):
                    _signal_group(process, signal.SIGKILL)
                    await exited(process, TERM_GRACE)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await stream.aclose()
            if self.sandbox is not None:
                self.sandbox.close()
            with suppress(OSError):
                await process.aclose()
            if self.dropped_stderr:
                self._log.write(
                    f"\n[codebot: {self.dropped_stderr} more bytes of stderr dropped]\n".encode()
                )
            self._log.close()

    def _detach(self) -> None:
        """Hand the rest of the stop (grace, SIGTERM, SIGKILL) to the reaper, and let go."""
        reaper.handoff(self.process.pid, self.process)
        self._log.close()
        if self.sandbox is not None:  # it is on its way out: its temp files with it
            self.sandbox.close()


async def exited(process: Process, seconds: float) -> bool:
    """Wait up to ``seconds`` for the process to end; True when it has."""
    # Poll returncode rather than wait(): a grandchild holding the pipes would make wait() hang.
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110 - nothing to wait on but the poll
            await anyio.sleep(0.02)
    return process.returncode is not None


def _signal_group(process: Process, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def child_environment(config: ServerConfig) -> dict[str, str]:
    """The allow-listed variables of our environment plus the server's own ``env``."""
    return _child_environment(config.env)


def resolve_command(config: ServerConfig) -> str:
    """The executable's path (see :mod:`core.proc.lookup`), or a ``LaunchError`` saying how to
    fix it."""
    assert config.command is not None
    found = find_command(config.command, config.cwd, config.env)
    if found is None:
        raise LaunchError(
            f"command '{printable(config.command, one_line=True)}' not found or not executable",
            f"Install it, or give its full path in 'command' of server '{config.name}' "
            f"in {config.source}.",
        )
    return str(found)


async def launch(config: ServerConfig) -> ServerProcess:
    """Start the server's process (not the MCP handshake).

    Raises:
        LaunchError: the command or the working directory is missing, or the OS refused.
    """
    command = resolve_command(config)
    if config.cwd is not None and not config.cwd.is_dir():
        raise LaunchError(
            f"working directory {printable(str(config.cwd), one_line=True)} does not exist",
            f"Fix 'cwd' of server '{config.name}' in {config.source}.",
        )
    sandbox = server_sandbox(config)
    log_file, log = runlog.server_log(config.name)  # this launch's own: never shared
    watched = reaper.active()  # a one-shot command: the reaper stops it after we exit
    env = child_environment(config)
    try:
        fd = reaper.announce_fd() if watched else None
        process = await open_process(
            [command, *config.args],
            die_with_parent=not watched,
            announce=None if fd is None else Announcement(fd, STDIN_CLOSE_GRACE, TERM_GRACE),
            confine=sandbox.confinement() if sandbox is not None else None,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=config.cwd,
            env=sandbox.environment(env) if sandbox is not None else env,
            start_new_session=True,
        )
    except ConfinementError as exc:
        log.close()
        raise LaunchError(
            f"server '{config.name}' asks for a sandbox, which cannot start: {exc}",
            f"Install the exec helper (`make install`), or remove 'sandbox' from server "
            f"'{config.name}' in {config.source}.",
        ) from None
    except OSError as exc:
        log.close()
        raise LaunchError(
            f"cannot start '{printable(config.command or '', one_line=True)}': "
            f"{exc.strerror or exc}",
            f"Check 'command' and 'cwd' of server '{config.name}' in {config.source}.",
        ) from None
    if watched:
        reaper.watch(process.pid, STDIN_CLOSE_GRACE, TERM_GRACE)
    redact = Redactor([*entry_secrets(config), *SECRETS.values()])
    return ServerProcess(config.name, process, log_file, log, redact=redact, sandbox=sandbox)


def server_sandbox(config: ServerConfig) -> Sandbox | None:
    """The sandbox a server entry asks for (None: it runs as is).

    Raises:
        LaunchError: it asks for one this machine cannot provide (it is never started
            unconfined instead).
    """
    if config.sandbox is None:
        return None
    try:
        sandbox = Sandbox.for_server(config.sandbox, config.cwd or Path.cwd())
    except SettingsError as exc:  # a `writable` path that holds codebot's own files
        raise LaunchError(
            f"server '{config.name}': {exc}",
            f"{exc.hint or ''} Fix 'sandbox.writable' of server '{config.name}' in "
            f"{config.source}.".strip(),
        ) from None
    if sandbox.missing:
        raise LaunchError(
            f"server '{config.name}' asks for the {sandbox.requested} sandbox, which this "
            f"machine cannot provide (missing: {'; '.join(sandbox.missing)})",
            f"Remove 'sandbox' from server '{config.name}' in {config.source} to run it "
            "unconfined, or run codebot where the kernel supports it (`/sandbox` shows what "
            "is missing).",
        )
    return sandbox


@dataclass(frozen=True, slots=True)
class Initialized:
    """What the hot path's ``initialize`` got from a handshake-era server it hands over."""

    answer: dict[str, Any]
    """The server's answer as it came: ``{"result": ...}`` or ``{"error": ...}``."""
    notified: bool
    """``notifications/initialized`` was sent already (the SDK's is then not sent again)."""


@dataclass
class Prelaunched:
    """Server processes started ahead of the SDK import, by server name."""

    processes: dict[str, ServerProcess] = field(default_factory=dict[str, ServerProcess])
    errors: dict[str, LaunchError] = field(default_factory=dict[str, LaunchError])
    discovered: dict[str, dict[str, Any] | Initialized] = field(
        default_factory=dict[str, dict[str, Any] | Initialized]
    )
    """A process the hot path handed over after its handshake: the ``server/discover`` result
    (2026-07-28) its client adopts, or the answer to its ``initialize`` (handshake era), which
    is replayed to the client's own (:func:`.probe.replay_initialize`): one handshake on the
    same process either way."""

    def take(self, name: str) -> ServerProcess | LaunchError | None:
        """Hand a launched process (or its launch error) over to its client, once."""
        return self.processes.pop(name, None) or self.errors.pop(name, None)


@asynccontextmanager
async def prelaunch(
    servers: Mapping[str, ServerConfig], handed: Prelaunched | None = None
) -> AsyncIterator[Prelaunched]:
    """Launch every usable stdio server now (but those ``handed`` over already running);
    stop whatever no client took over on exit."""
    launched = handed or Prelaunched()
    for name, config in servers.items():
        if config.type != "stdio" or config.error is not None or not config.enabled:
            continue
        if name in launched.processes:
            continue
        try:
            launched.processes[name] = await launch(config)
        except LaunchError as exc:
            launched.errors[name] = exc
    try:
        yield launched
    finally:
        async with anyio.create_task_group() as tg:
            for leftover in launched.processes.values():
                tg.start_soon(leftover.stop)
