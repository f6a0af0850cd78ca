"""``codebot mcp prompts|prompt``: list a server's prompts, render one."""

from __future__ import annotations

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
    from codebot_mcp.core.tools.sources import PromptInfo, PromptMessage
    from codebot_mcp.mcpbridge.connection.manager import Manager

app = typer.Typer()
"""``mcp prompts`` and ``mcp prompt`` (merged into ``mcp``)."""


@app.command("prompts")
def prompts_command(
    ctx: typer.Context,
    server: ServerFilterArg = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
) -> int:
    """List the prompts of every server (or of SERVER) with their arguments.

    Exit 0 ok, 2 unknown server, 3 settings error, 4 a server failed (the others are listed).
    """
    return listing(
        ctx.obj,
        server,
        timeout,
        as_json,
        what="prompts",
        fetch=_fetch_prompts,
        view=_prompt_view,
        columns=["SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION"],
        row=_prompt_row,
    )


async def _fetch_prompts(manager: Manager, server: str | None) -> list[PromptInfo]:
    return await manager.prompts(server)


def _prompt_view(p: PromptInfo) -> dict[str, Any]:
    return {
        "server": p.server,
        "name": p.name,
        "title": p.title,
        "description": p.description,
        "command": f"/mcp__{p.server}__{p.name}",
        "arguments": [
            {"name": a.name, "description": a.description, "required": a.required}
            for a in p.arguments
        ],
    }


def _prompt_row(p: PromptInfo) -> list[str]:
    return [
        safe(p.server),
        safe(p.name),
        " ".join(f"{a.name}{'' if a.required else '?'}" for a in p.arguments),
        render.first_line(safe(p.description or p.title or ""), 50),
    ]


@app.command("prompt")
def prompt_command(
    ctx: typer.Context,
    server: ServerArg,
    name: Annotated[str, typer.Argument(help="The prompt's name.")],
    args: Annotated[
        list[str] | None,
        typer.Argument(help="The prompt's arguments as key=value pairs.", show_default=False),
    ] = None,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
) -> int:
    """Render one prompt of SERVER and print its messages.

    Exit 0 ok, 2 unknown server or prompt, or bad arguments, 3 settings, 4 server failed.
    """

    from codebot_mcp.core.tools.arguments import parse_prompt_args

    arguments = parse_prompt_args(args or [])
    settings, servers = servers_for(ctx.obj, server, timeout)
    messages = signals.run(
        _prompt, settings, servers, server, name, arguments, elicit, allow_sampling
    )
    if as_json:
        render.print_json({"messages": [{"role": m.role, "text": m.text} for m in messages]})
        return ExitCode.OK
    for i, message in enumerate(messages):
        print(("\n" if i else "") + render.style(f"{message.role}:", "1"))
        print(safe(message.text).replace("\\x0a", "\n"))
    return ExitCode.OK


async def _prompt(
    settings: Settings,
    servers: dict[str, ServerConfig],
    server: str,
    name: str,
    arguments: dict[str, str],
    elicit: str | None,
    allow_sampling: list[str] | None,
) -> list[PromptMessage]:
    import difflib

    async with one_server(settings, servers, server, elicit, allow_sampling) as manager:
        prompts = {p.name: p for p in await manager.prompts(server)}
        if name not in prompts:
            close = difflib.get_close_matches(name, list(prompts), n=3)
            hint = (
                f"Did you mean {', '.join(close)}?"
                if close
                else f"List them with: codebot mcp prompts {server}"
            )
            raise UsageError(
                f"server '{server}' has no prompt '{name}' ({len(prompts)} prompts)", hint=hint
            )
        from codebot_mcp.core.tools.arguments import check_prompt_args

        check_prompt_args(prompts[name], arguments)
        return await manager.get_prompt(server, name, arguments)
