"""What the ``mcp`` commands (and chat) share: their options, picking the servers, starting them.

``mcp resources|read``, ``mcp prompts|prompt``, ``mcp call`` and chat take the same ``--json``,
``--timeout``, ``--elicit`` and ``--allow-sampling``; a listing command (:func:`listing`) opens
every server (or the one named) and lists what they offer, a single-server command
(:func:`one_server`) opens that one server with the model behind it for sampling.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.answers import LazyModel, policy
from codebot_mcp.cli.commands import shell_completion as completion
from codebot_mcp.cli.runtime import (
    Globals,
    load_effective,
    open_manager,
    require_trusted,
    select_servers,
    with_timeout,
)
from codebot_mcp.core.errors import ExitCode

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.mcpbridge.connection.manager import Manager

T = TypeVar("T")

ServerFilterArg = Annotated[
    str | None,
    typer.Argument(
        metavar="[SERVER]",
        help="Only this server.",
        show_default=False,
        autocompletion=completion.server_names,
    ),
]
ServerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server",
        "-s",
        metavar="NAME",
        help="Only this server (repeatable).",
        show_default=False,
        autocompletion=completion.server_names,
    ),
]
"""``--server NAME``, repeatable: the commands over several servers (list, doctor, lock)."""
ServerArg = Annotated[
    str,
    typer.Argument(
        metavar="SERVER",
        help="The server's name in settings.",
        autocompletion=completion.server_names,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
AllowDriftOpt = Annotated[
    bool,
    typer.Option(
        "--allow-drift",
        help="Use servers whose tools drifted from .codebot/mcp-lock.json (or that the lock "
        "does not know) for this run only; without it they are held back. `codebot mcp lock` "
        "accepts the change for good.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", help="Seconds for the handshake and for each request."),
]
ElicitOpt = Annotated[
    str | None,
    typer.Option(
        "--elicit",
        metavar="decline|defaults|cancel",
        help="How to answer a server's request for input: decline (default), defaults (accept "
        "with the schema's defaults; decline if a required field has none) or cancel.",
        show_default=False,
    ),
]
AllowSamplingOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-sampling",
        metavar="SERVER",
        help="Let SERVER use the model (sampling/createMessage) without asking (repeatable).",
        show_default=False,
        autocompletion=completion.server_names,
    ),
]


def servers_for(
    globals_: Globals, server: str | None, timeout: float | None
) -> tuple[Settings, dict[str, ServerConfig]]:
    from codebot_mcp.core.config.servers import require_usable

    loaded = load_effective(globals_, warn=server is None)
    settings = loaded.settings  # trust applied: sampling, roots and limits included
    if server is not None:
        require_trusted(server, loaded.trust, settings)
        config = select_servers(settings, [server])[server]
        require_usable(config)
        return settings, with_timeout({server: config}, timeout)
    usable = {n: c for n, c in settings.servers.items() if c.enabled and c.error is None}
    return settings, with_timeout(usable, timeout)


async def started(manager: Manager, names: list[str], server: str | None) -> list[str]:
    """Start the servers; the named one must connect; the names of those that failed."""
    await manager.start_all(names)
    failures = manager.failures
    if server is not None and server in failures:
        raise failures[server].error()  # the record's own words, as ``mcp call`` reports it
    for name, failure in failures.items():
        render.warn(f"server '{name}' failed: {failure.message}")
    return list(failures)


def listing(
    globals_: Globals,
    server: str | None,
    timeout: float | None,
    as_json: bool,
    *,
    what: str,
    fetch: Callable[[Manager, str | None], Awaitable[list[T]]],
    view: Callable[[T], dict[str, Any]],
    columns: list[str],
    row: Callable[[T], list[str]],
) -> int:
    """A listing command (``mcp resources``, ``mcp prompts``): start every server (or
    ``server``, which must connect), ``fetch`` what they offer and print it as JSON (``what``:
    the views, ``failed``: the servers that failed) or a table. Exit 4 when a server failed."""

    settings, servers = servers_for(globals_, server, timeout)
    items, failed = signals.run(_listed, settings, servers, server, fetch)
    if as_json:
        render.print_json({what: [view(item) for item in items], "failed": failed})
        return ExitCode.SERVER if failed else ExitCode.OK
    if not servers:
        render.warn("no MCP servers are configured")
    elif not items:
        print(f"no {what}")
    else:
        print(render.table([columns, *[row(item) for item in items]]))
    return ExitCode.SERVER if failed else ExitCode.OK


async def _listed(
    settings: Settings,
    servers: dict[str, ServerConfig],
    server: str | None,
    fetch: Callable[[Manager, str | None], Awaitable[list[T]]],
) -> tuple[list[T], list[str]]:
    async with open_manager(servers, agent=policy(settings, None, None)) as manager:
        failed = await started(manager, list(servers), server)
        return await fetch(manager, server), failed


@asynccontextmanager
async def one_server(
    settings: Settings,
    servers: dict[str, ServerConfig],
    server: str,
    elicit: str | None,
    allow_sampling: list[str] | None,
) -> AsyncIterator[Manager]:
    """A manager with ``server`` connected, its requests answered as ``--elicit`` and
    ``--allow-sampling`` say (sampling by the configured model, loaded when first asked)."""
    from codebot_mcp.core.agent.sampling import Sampler

    lazy = LazyModel(settings)
    agent = policy(settings, elicit, allow_sampling)
    try:
        async with open_manager(servers, agent=agent, sampler=Sampler(lazy)) as manager:
            await started(manager, [server], server)
            yield manager
    finally:
        await lazy.aclose()
