"""``codebot mcp resources|read``: parse, call into mcpbridge, render (and the options and
helpers ``mcp call``, ``mcp prompt`` and chat share: ``--elicit``, ``--allow-sampling``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import completion, render
from codebot_mcp.cli.answers import LazyModel, policy
from codebot_mcp.cli.runtime import (
    Globals,
    apply_trust,
    load_settings,
    open_manager,
    require_trusted,
    select_servers,
    with_timeout,
)
from codebot_mcp.core.errors import ExitCode, ServerError, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.servers import ServerConfig
    from codebot_mcp.core.settings import Settings
    from codebot_mcp.core.sources import ResourceContent, ResourceInfo
    from codebot_mcp.mcpbridge.manager import Manager

JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
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


def safe(text: str | None) -> str:
    """Text from a server, safe for the terminal (:func:`cli.render.safe`): control, invisible
    and bidi characters shown escaped (``\\x1b``, ``\\u202e``), known secrets scrubbed."""
    return render.safe(text or "")


def servers_for(
    globals_: Globals, server: str | None, timeout: float | None
) -> tuple[Settings, dict[str, ServerConfig]]:
    from codebot_mcp.core import trust
    from codebot_mcp.core.servers import require_usable

    settings = load_settings(globals_)
    if server is not None:
        check = trust.check(settings, assume_trusted=globals_.trust_project)
        require_trusted(server, check, settings)
        if server in settings.shadowed and check.needs_trust:
            settings, _ = apply_trust(globals_, settings)  # the global entry stands in
        config = select_servers(settings, [server])[server]
        require_usable(config)
        return settings, with_timeout({server: config}, timeout)
    settings, _ = apply_trust(globals_, settings)
    usable = {n: c for n, c in settings.servers.items() if c.enabled and c.error is None}
    return settings, with_timeout(usable, timeout)


async def started(manager: Manager, names: list[str], server: str | None) -> list[str]:
    """Start the servers; the named one must connect; the names of those that failed."""
    await manager.start_all(names)
    failures = manager.failures
    if server is not None and server in failures:
        failure = failures[server]
        raise ServerError(f"server '{server}': {failure.describe()}", hint=failure.hint)
    for name, failure in failures.items():
        render.warn(f"server '{name}' failed: {failure.message}")
    return list(failures)


app = typer.Typer()
"""``mcp resources`` and ``mcp read`` (merged into ``mcp``)."""


# -- resources ----------------------------------------------------------------------------


@app.command("resources")
def resources_command(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Argument(
            metavar="[SERVER]",
            help="Only this server.",
            show_default=False,
            autocompletion=completion.server_names,
        ),
    ] = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
) -> int:
    """List the resources and resource templates of every server (or of SERVER).

    Exit 0 ok, 2 unknown server, 3 settings error, 4 a server failed (the others are listed).
    """
    import anyio

    settings, servers = servers_for(ctx.obj, server, timeout)
    items, failed = anyio.run(_resources, settings, servers, server)
    if as_json:
        render.print_json({"resources": [_resource_view(r) for r in items], "failed": failed})
    else:
        _print_resources(items, bool(servers))
    return ExitCode.SERVER if failed else ExitCode.OK


async def _resources(
    settings: Settings, servers: dict[str, ServerConfig], server: str | None
) -> tuple[list[ResourceInfo], list[str]]:
    async with open_manager(servers, agent=policy(settings, None, None)) as manager:
        failed = await started(manager, list(servers), server)
        return await manager.resources(server), failed


def _resource_view(r: ResourceInfo) -> dict[str, Any]:
    view: dict[str, Any] = {
        "server": r.server,
        "uriTemplate" if r.template else "uri": r.uri,
        "name": r.name,
        "title": r.title,
        "description": r.description,
        "mimeType": r.mime_type,
        "template": r.template,
    }
    if not r.template:
        view["size"] = r.size
    return view


def _print_resources(items: list[ResourceInfo], any_servers: bool) -> None:
    if not any_servers:
        render.warn("no MCP servers are configured")
        return
    if not items:
        print("no resources")
        return
    rows = [
        [
            safe(r.server),
            safe(r.uri),
            "template" if r.template else safe(r.mime_type or ""),
            render.first_line(safe(r.title or r.name), 50),
        ]
        for r in items
    ]
    print(render.table([["SERVER", "URI", "TYPE", "NAME"], *rows]))


@app.command("read")
def read_command(
    ctx: typer.Context,
    server: Annotated[
        str,
        typer.Argument(
            metavar="SERVER",
            help="The server's name in settings.",
            autocompletion=completion.server_names,
        ),
    ],
    uri: Annotated[str, typer.Argument(help="The resource's URI.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the contents to FILE (needed for binary resources).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
) -> int:
    """Read one resource: text to stdout; binary contents need --output FILE.

    Exit 0 ok, 2 usage (binary without --output, unknown server), 3 settings, 4 server failed.
    """
    import anyio

    settings, servers = servers_for(ctx.obj, server, timeout)
    parts = anyio.run(_read, settings, servers, server, uri, elicit, allow_sampling)
    if as_json:
        render.print_json({"contents": [_content_view(p) for p in parts]})
        return ExitCode.OK
    binary = any(p.blob is not None for p in parts)
    if output is not None:
        data = b"".join(p.blob if p.blob is not None else (p.text or "").encode() for p in parts)
        target = output if output.is_absolute() else ctx.obj.cwd / output
        try:
            target.write_bytes(data)
        except OSError as exc:
            raise UsageError(
                f"cannot write {target}: {exc.strerror or exc}", hint="Pick a writable path."
            ) from None
        print(f"wrote {len(data)} bytes to {target}", file=sys.stderr)
        return ExitCode.OK
    if binary:
        mime = next((p.mime_type for p in parts if p.blob is not None), None)
        raise UsageError(
            f"resource {uri} on server '{server}' is binary ({mime or 'unknown type'})",
            hint=f"Write it to a file: codebot mcp read {server} '{uri}' --output FILE",
        )
    text = safe("\n".join(p.text or "" for p in parts))  # the raw bytes: --output FILE
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    return ExitCode.OK


async def _read(
    settings: Settings,
    servers: dict[str, ServerConfig],
    server: str,
    uri: str,
    elicit: str | None,
    allow_sampling: list[str] | None,
) -> list[ResourceContent]:
    from codebot_mcp.core.sampling import Sampler

    lazy = LazyModel(settings)
    agent = policy(settings, elicit, allow_sampling)
    try:
        async with open_manager(servers, agent=agent, sampler=Sampler(lazy)) as manager:
            await started(manager, [server], server)
            return await manager.read_resource(server, uri)
    finally:
        await lazy.aclose()


def _content_view(p: ResourceContent) -> dict[str, Any]:
    import base64

    view: dict[str, Any] = {"uri": p.uri, "mimeType": p.mime_type}
    if p.blob is not None:
        view["blob"] = base64.b64encode(p.blob).decode()
    else:
        view["text"] = p.text
    return view
