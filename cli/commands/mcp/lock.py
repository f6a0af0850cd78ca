"""``codebot mcp lock``: pin each server's version and tools in .codebot/mcp-lock.json."""

from __future__ import annotations

from typing import Any

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.answers import policy
from codebot_mcp.cli.commands.mcp.common import ServerOpt
from codebot_mcp.cli.runtime import (
    Globals,
    load_effective,
    open_manager,
    require_trusted,
    select_servers,
)
from codebot_mcp.core.errors import ExitCode, SettingsError

app = typer.Typer()
"""Holds ``lock``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


@app.command("lock")
def lock_command(
    ctx: typer.Context,
    server: ServerOpt = None,
) -> int:
    """Connect to every server and pin its version and tool definitions (description, schema,
    annotations) in .codebot/mcp-lock.json, and for a server `mcp install` wrote, the registry
    version it came from; `mcp doctor` then reports any drift (tools.lock).

    Exit 0 when every selected server was pinned, 4 when one could not be reached (the others
    are pinned; an unreachable server keeps its old record).
    """

    from codebot_mcp.core.config import projectfiles
    from codebot_mcp.mcpbridge.tools import tool_pins as lock

    globals_: Globals = ctx.obj
    loaded = load_effective(globals_)
    settings, check = loaded.settings, loaded.trust
    for name in server or []:
        require_trusted(name, check, settings)  # "not trusted" (3), as `mcp call` says
    servers = {n: c for n, c in select_servers(settings, server).items() if c.enabled}
    path = lock.lock_path(settings.project_root, settings.cwd)
    projectfiles.landing(path, path.parent.parent)  # refused before any server starts

    agent = policy(settings, None, None)  # the capabilities `mcp list`, doctor and chat declare

    async def pin() -> tuple[dict[str, dict[str, Any]], list[str]]:
        async with open_manager(servers, agent=agent) as manager:
            await manager.start_all()
            pinned: dict[str, dict[str, Any]] = {}
            failed: list[str] = []
            for name in servers:
                client = manager.clients.get(name)
                if client is None or not client.connected:
                    failed.append(name)
                    continue
                version = client.info.version if client.info else None
                pinned[name] = lock.server_entry(version, list(client.tools))
                provenance = servers[name].provenance
                if provenance is not None:  # where `mcp install` got it, pinned with it
                    pinned[name]["registry"] = provenance.as_dict()
            return pinned, failed

    pinned, failed = signals.run(pin)
    try:
        previous = lock.read(path) or {}
    except lock.LockfileError as exc:
        render.warn(f"{exc.message}; writing a new lock")
        previous = {}
    merged = {**previous, **pinned}
    try:
        lock.write(path, merged)
    except OSError as exc:
        raise SettingsError(
            f"cannot write the lock file {path}: {exc.strerror or exc}",
            hint=f"Check {path.parent}: the lock must be a plain file of the project "
            "(a symlink there is refused).",
        ) from None
    tools = sum(len(e["tools"]) for e in pinned.values())
    what = f"{render.count(len(pinned), 'server')} ({render.count(tools, 'tool')})"
    print(f"Pinned {what} in {render.safe(path)}.")
    for name in failed:
        render.warn(f"server '{name}' could not be reached; its record was not updated")
    return ExitCode.SERVER if failed else ExitCode.OK
