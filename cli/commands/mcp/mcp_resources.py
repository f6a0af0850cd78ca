"""``codebot mcp resources|read``: parse, call into mcpbridge, render."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.mcp.common import (
    AllowSamplingOpt,
    ElicitOpt,
    JsonOpt,
    ServerArg,
    ServerFilterArg,
    TimeoutOpt,
    listing,
    one_server,
    servers_for,
)
from codebot_mcp.cli.render import safe
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.tools.sources import ResourceContent, ResourceInfo
    from codebot_mcp.mcpbridge.connection.manager import Manager

app = typer.Typer()
"""``mcp resources`` and ``mcp read`` (merged into ``mcp``)."""


# -- resources ----------------------------------------------------------------------------


@app.command("resources")
def resources_command(
    ctx: typer.Context,
    server: ServerFilterArg = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
) -> int:
    """List the resources and resource templates of every server (or of SERVER).

    Exit 0 ok, 2 unknown server, 3 settings error, 4 a server failed (the others are listed).
    """
    return listing(
        ctx.obj,
        server,
        timeout,
        as_json,
        what="resources",
        fetch=_fetch_resources,
        view=_resource_view,
        columns=["SERVER", "URI", "TYPE", "NAME"],
        row=_resource_row,
    )


async def _fetch_resources(manager: Manager, server: str | None) -> list[ResourceInfo]:
    return await manager.resources(server)


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


def _resource_row(r: ResourceInfo) -> list[str]:
    return [
        safe(r.server),
        safe(r.uri),
        "template" if r.template else safe(r.mime_type or ""),
        render.first_line(safe(r.title or r.name), 50),
    ]


@app.command("read")
def read_command(
    ctx: typer.Context,
    server: ServerArg,
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

    settings, servers = servers_for(ctx.obj, server, timeout)
    parts = signals.run(_read, settings, servers, server, uri, elicit, allow_sampling)
    if as_json:
        render.print_json({"contents": [_content_view(p) for p in parts]})
        return ExitCode.OK
    binary = any(p.blob is not None for p in parts)
    if output is not None:
        data = b"".join(p.blob if p.blob is not None else (p.text or "").encode() for p in parts)
        target = output if output.is_absolute() else ctx.obj.cwd / output
        try:
            from codebot_mcp.core.fsutil import atomic_write

            atomic_write(target, data, follow_symlinks=True)  # a link the user made is theirs
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
    async with one_server(settings, servers, server, elicit, allow_sampling) as manager:
        return await manager.read_resource(server, uri)


def _content_view(p: ResourceContent) -> dict[str, Any]:
    import base64

    view: dict[str, Any] = {"uri": p.uri, "mimeType": p.mime_type}
    if p.blob is not None:
        view["blob"] = base64.b64encode(p.blob).decode()
    else:
        view["text"] = p.text
    return view
