"""``codebot mcp warm [--stop] [--status]``, and the warm path of ``mcp list``/``mcp call``.

The holder itself is :mod:`mcpbridge.warm`; this module starts and stops it, and asks it first
on behalf of ``mcp list`` and ``mcp call`` (the answers are rendered by the same code as the cold
path's, so output and exit codes are identical). Nothing here imports anyio or the MCP SDK.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.cli.warm_client import location, settings_digest
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from codebot_mcp.core.config.settings import Settings

READY_TIMEOUT_SLACK = 10.0
"""The holder must be ready within the slowest server's handshake timeout plus this."""

NoWarmOpt = Annotated[
    bool,
    typer.Option("--no-warm", help="Do not use a warm holder (`mcp warm`); connect afresh."),
]


app = typer.Typer()
"""Holds ``warm``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


@app.command("warm")
def warm_command(
    ctx: typer.Context,
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop the holder for these settings.")
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Say whether a holder runs, and for which servers.")
    ] = False,
    idle_timeout: Annotated[
        float | None,
        typer.Option(
            "--idle-timeout",
            help="Exit after this many seconds without a request "
            "(default: the 'warm_idle_timeout' setting, 600).",
        ),
    ] = None,
) -> int:
    """Keep the configured servers connected in a background holder, for fast one-shot calls.

    `mcp list` and `mcp call` use it while it runs and its settings match (else they connect
    as usual). Exit 0 when the holder runs with every server connected, 4 when some failed.
    --status: exit 0 when a holder runs, 1 when none does. --stop: exit 0 (also when none ran).
    """
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    globals_: Globals = ctx.obj
    loaded = load_effective(globals_, warn=not (stop or status))
    settings, check = loaded.settings, loaded.trust
    path = location(settings)
    if stop or status:
        answer = warm.ask(path, {"op": "stop" if stop else "status"})
        if answer is None:
            print(f"no warm holder runs for these settings ({path.parent})")
            return ExitCode.OK if stop else ExitCode.TOOL_ERROR  # --status: a check that failed
        verb = "stopped" if stop else "running"
        names = ", ".join(answer.get("servers") or []) or "no servers"
        print(f"warm holder {verb} (pid {answer.get('pid')}): {names}")
        if stop:
            _wait_gone(answer.get("pid"))
        return ExitCode.OK
    if idle_timeout is not None and idle_timeout <= 0:
        raise UsageError("--idle-timeout must be a positive number of seconds")
    digest = settings_digest(settings, check)
    current = warm.ask(path, {"op": "status"})
    if current is not None and current.get("digest") == digest:
        print(f"warm holder already running (pid {current.get('pid')}) for these settings")
        return ExitCode.OK
    if len(str(path).encode()) > warm.SOCKET_PATH_LIMIT:
        raise CodebotError(
            f"cannot keep servers warm: the socket path {path} is too long for a Unix socket",
            hint="Set CODEBOT_HOME to a shorter directory.",
        )
    if current is not None:  # a holder for other settings: it must not linger beside ours
        warm.ask(path, {"op": "stop"})
        _wait_gone(current.get("pid"))
    return _start(globals_, settings, path, digest, idle_timeout, replacing=current is not None)


def _start(
    globals_: Globals,
    settings: Settings,
    path: Path,
    digest: str,
    idle_timeout: float | None,
    *,
    replacing: bool,
) -> int:
    from codebot_mcp.mcpbridge.transport.runlog import holder_log

    argv = [sys.executable, "-m", "codebot_mcp.mcpbridge.warm", "--cwd", str(globals_.cwd)]
    if globals_.trust_project:
        argv.append("--trust-project")
    if idle_timeout is not None:
        argv += ["--idle", f"{idle_timeout:g}"]
    log_file, log = holder_log()  # this holder's own log, never another's
    try:
        holder = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            close_fds=True,
            start_new_session=True,  # outlives this command; no terminal signal reaches it
        )
    finally:
        log.close()
    from codebot_mcp.core.proc import descendants

    descendants.spare(holder.pid)  # it and its servers outlive this command on purpose
    assert holder.stdout is not None
    bound = max((c.timeout for c in settings.servers.values()), default=0) + READY_TIMEOUT_SLACK
    line = _read_ready(holder, bound)
    if line is None:
        holder.kill()
        holder.wait()
        raise CodebotError(
            f"the warm holder did not start (see {log_file})",
            hint="Run `codebot mcp list` to see what fails.",
        )
    ready = json.loads(line)
    if ready.get("digest") != digest:
        render.warn("the settings changed while the holder started; it serves the new ones")
    servers = ready.get("servers") or []
    failed = ready.get("failed") or []
    what = "replaced the warm holder" if replacing else "warm holder started"
    print(
        f"{what} (pid {ready.get('pid')}): {len(servers) - len(failed)} of {len(servers)} "
        f"servers connected; stop it with `codebot mcp warm --stop`"
    )
    for name in failed:
        render.warn(f"server '{name}' failed to start; `codebot mcp list --no-warm` shows why")
    return ExitCode.SERVER if failed else ExitCode.OK


def _read_ready(holder: subprocess.Popen[bytes], seconds: float) -> str | None:
    """The holder's ready line, or None when it exits or stays silent for ``seconds``."""
    import selectors

    assert holder.stdout is not None
    deadline = time.monotonic() + seconds
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(holder.stdout, selectors.EVENT_READ)
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return None
            chunk = os.read(holder.stdout.fileno(), 65536)
            if not chunk:
                return None
            data += chunk
    holder.stdout.close()
    return data.partition(b"\n")[0].decode()


def _wait_gone(pid: object, seconds: float = 15.0) -> None:
    """After a stop: wait until the holder has stopped its servers and exited."""
    from codebot_mcp.core.proc.procfs import read_stat

    if not isinstance(pid, int):
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        stat = read_stat(pid)
        if stat is None or not stat.live:
            return
        time.sleep(0.05)
