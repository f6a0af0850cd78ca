"""``codebot trust``: review the project's MCP servers and record trust for them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_settings
from codebot_mcp.core.errors import ExitCode, UsageError
from codebot_mcp.core.secrets.redact import redact_url

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.trust import TrustCheck


def describe(config: ServerConfig, api_key_env: str | None = None) -> list[str]:
    """What a server runs or where it connects, then one line per fact that decides what
    runs: the resolved program, its ``cwd``, a ``PATH`` override, and every variable it
    expands (credentials and the model's API key flagged). Env and header values are not
    shown, only their names.
    """
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.proc.lookup import find_command

    if config.type == "http":
        text = f"{config.name}: {redact_url(config.url or '')}"
        if config.headers:
            text += f" (headers: {', '.join(config.headers)})"
    else:
        command = " ".join([config.command or "?", *(redact_url(a) for a in config.args)])
        text = f"{config.name}: {command}"
        if config.env:
            text += f" (env: {', '.join(config.env)})"
    if config.error:
        text += "  [invalid entry: will not start]"
    lines = [text]
    if config.type == "stdio" and config.error is None and config.command:
        found = find_command(config.command, config.cwd, config.env)
        lines.append(f"    runs: {found if found else '(not found)'}")
        lines.append(f"    cwd: {config.cwd}")
        if "PATH" in config.env:
            lines.append(f"    PATH override: {config.env['PATH']}")
    for item in trust.expansions(config, api_key_env):
        line = f"    expands ${{{item.variable}}} into {item.key}"
        if item.api_key:
            line += ": WARNING: this is your model API key; the server will receive it"
        elif item.credential:
            line += ": WARNING: looks like a credential; the server will receive it"
        if not item.is_set:
            line += " (not set)"
        lines.append(line)
    return lines


def describe_all(result: TrustCheck) -> list[str]:
    """One line per thing the project would do once trusted: servers (each with its facts
    indented below), then gated settings."""
    lines = [line for config in result.servers for line in describe(config, result.api_key_env)]
    for key, value in result.gated.items():
        shown = ", ".join(value) if isinstance(value, list) else redact_url(str(value))
        lines.append(f"setting {key}: {shown}")
    return lines


app = typer.Typer()
"""Holds ``trust``; :mod:`cli.app` adds it to the root."""


@app.command("trust")
def trust_command(
    ctx: typer.Context,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Trust without asking (for scripts).")
    ] = False,
) -> int:
    """Show what the project's settings would start, and trust it.

    Trust is recorded for this project file and its current server entries; a change
    to them needs trust again.
    """
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.trust import TrustReason

    globals_: Globals = ctx.obj
    settings = load_settings(globals_)
    result = trust.check(settings)
    if not result.servers and not result.gated:
        print("This project's settings need no trust (no MCP servers, no gated settings).")
        return ExitCode.OK
    print(f"{render.safe(result.project_file)} would start or set:")
    for line in describe_all(result):
        print(f"  {render.safe(line, one_line=True)}")  # a newline in a value fakes no line
    if result.trusted and result.reason is TrustReason.RECORDED:
        print("Already trusted.")
        return ExitCode.OK
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                "not trusting without confirmation: stdin is not a terminal",
                hint="Run `codebot trust` in a terminal, or pass --yes.",
            )
        answer = input("Trust this project (start these servers, apply these settings)? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            render.warn("not trusted; the project's servers stay off")
            return ExitCode.DECLINED
    store = trust.record(result)
    print(f"Trusted (recorded in {store}).")
    return ExitCode.OK
