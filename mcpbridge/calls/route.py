"""One path per command: ``mcp list`` and ``mcp call`` from the settings to the wire.

Each command has one entry here, :func:`list_servers`, :func:`call_tool` and
:func:`call_batch` (``mcp call --batch``, always the SDK path). It chooses the
transport before anything is launched: the SDK-free hot path (:mod:`.lite`) when the command
needs nothing more than the default answers and every server is one it takes
(:func:`.lite.usable`), else the SDK path (:class:`~mcpbridge.connection.manager.Manager`).
Both transports are one Client API per command (:mod:`mcpbridge.connection.contract`): a
call runs on a ``ToolClient`` (start, tools, call, the failure record;
:class:`.lite.LiteClient` and :class:`.call.ManagedClient`), driven by the same steps
(:func:`~mcpbridge.connection.contract.call_on`); a listing on a ``ServersClient`` (several
servers started together, then one ``ListedServer`` each; :class:`.lite.LiteServers` and
:class:`.call.ManagedServers`), rendered by
:func:`~mcpbridge.connection.report.listed_view`. When the hot path hands a server over
(:class:`.lite.HandOverError`: an answer of another shape before any call, or a server that
offers tasks), the SDK path goes on on the same process, with the handshake's answer when
there is one; nothing is launched twice and the settings are not read again. The command
layer parses, asks the warm holder, calls one of these and renders what comes back.

The SDK is imported only when the SDK path runs: the hot path stays light.
"""

from __future__ import annotations

__all__ = ["OpenManager", "call_batch", "call_tool", "list_servers"]

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import gcpause
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.mcpbridge.calls import lite
from codebot_mcp.mcpbridge.connection.contract import ListedServer, call_on

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.connection.features import ProgressHook
    from codebot_mcp.mcpbridge.connection.manager import Manager
    from codebot_mcp.mcpbridge.connection.taskpolicy import StatusHook
    from codebot_mcp.mcpbridge.tools.tool_pins import Pins
    from codebot_mcp.mcpbridge.transport.process import Prelaunched

OpenManager = Callable[
    [Mapping[str, ServerConfig], "Prelaunched | None"], AbstractAsyncContextManager["Manager"]
]
"""The command's SDK path: a manager over these servers (not yet started), taking over the
processes the hot path handed over (``None``: none). The command supplies it, with how its
servers' requests are answered, its login and its pins."""


async def list_servers(
    servers: Mapping[str, ServerConfig],
    open_manager: OpenManager,
    *,
    hot: bool,
    roots: Sequence[Path],
    schemas: bool,
    show_app_tools: bool,
    pins: Pins | None,
) -> list[dict[str, Any]]:
    """``mcp list``: what it shows of every server (``report.server_view``), by name.

    ``hot``: the command may take the hot path (no ``--login``); ``roots`` answer
    ``roots/list`` there. A server that fails is a failed view, never an exception.
    """
    from codebot_mcp.mcpbridge.connection.report import listed_view

    shown: list[ListedServer] = []
    handed: Prelaunched | None = None
    todo: Mapping[str, ServerConfig] = servers
    if hot and lite.usable(servers):  # lite declares the same capabilities (a test)
        async with lite.connect_all(servers, roots=roots, pins=pins) as group:
            await group.start()
            gcpause.release()  # connected: the work begins (core.gcpause)
            shown = group.listing()
            if group.handed is not None:  # the rest on their processes, listed by the SDK
                handed = group.handed.prelaunched()
                todo = {n: c for n, c in servers.items() if n in group.handed.processes}
        if handed is None:
            return [listed_view(s, schemas=schemas, show_app_tools=show_app_tools) for s in shown]
    async with open_manager(todo, handed) as manager:
        from codebot_mcp.mcpbridge.calls.call import ManagedServers

        managed = ManagedServers(manager)
        await managed.start()
        gcpause.release()  # connected: the work begins (core.gcpause)
        listing = managed.listing()
    if shown:
        listing = sorted([*shown, *listing], key=lambda s: s.name)
    return [listed_view(s, schemas=schemas, show_app_tools=show_app_tools) for s in listing]


async def call_tool(
    config: ServerConfig,
    tool: str,
    arguments: dict[str, Any],
    open_manager: OpenManager,
    *,
    hot: bool,
    roots: Sequence[Path],
    pins: Pins | None,
    on_progress: ProgressHook | None = None,
    on_task_status: StatusHook | None = None,
) -> ToolResult:
    """``mcp call``: call ``tool`` of ``config``'s server once and return its result.

    ``hot``: the command may take the hot path (the default answers, no ``--login``, no
    progress line); ``on_progress`` or ``on_task_status`` then go unused.

    Raises:
        UsageError: the tool is unknown, or the arguments do not match its input schema.
        ServerError: the server cannot be reached, or dies or times out during the call.
    """
    handed: Prelaunched | None = None
    if hot and lite.usable({config.name: config}):
        async with lite.connect(config, roots=roots, pins=pins) as client:
            await client.start()
            gcpause.release()  # connected: the work begins (core.gcpause)
            if client.handed is None:
                return await call_on(client, config.name, tool, arguments)
            handed = client.handed.prelaunched()  # the same process, its handshake adopted
    async with open_manager({config.name: config}, handed) as manager:
        from codebot_mcp.mcpbridge.calls.call import ManagedClient

        manager.on_progress = on_progress
        if on_task_status is not None:
            manager.tasks.on_status = on_task_status
        managed = ManagedClient(manager, config)
        await managed.start()
        gcpause.release()  # connected: the work begins (core.gcpause)
        return await call_on(managed, config.name, tool, arguments)


async def call_batch(
    servers: Mapping[str, ServerConfig],
    open_manager: OpenManager,
    read_line: Callable[[], Awaitable[str]],
    emit: Callable[[dict[str, Any]], None],
) -> bool:
    """``mcp call --batch``: one JSON request per line, on the SDK path (servers start on first
    use and stay connected; :func:`.call.call_batch`); True when every line succeeded.

    Every line's failure is its answer's ``error`` (message, hint, exit code), never raised.
    """
    async with open_manager(servers, None) as manager:
        from codebot_mcp.mcpbridge.calls.call import call_batch as answer_lines

        gcpause.release()  # before the first line: a batch may run for long (core.gcpause)

        return await answer_lines(manager, servers, read_line, emit)
