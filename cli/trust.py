"""``codebot trust``: review the project's MCP servers and record trust for them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from cli import render
from cli.runtime import Globals, load_settings
from core.errors import ExitCode, UsageError
from core.redact import redact_url

if TYPE_CHECKING:
    from core.servers import ServerConfig
    from core.trust import TrustCheck


def describe(config: ServerConfig) -> str:
    """What a server runs or where it connects; env and header values are not shown."""
    if config.type == "http":
        text = f"{config.name}: {redact_url(config.url or '')}"
        if config.headers:
            text += f" (headers: {', '.join(config.headers)})"
        return text
    command = " ".join([config.command or "?", *(redact_url(a) for a in config.args)])
    text = f"{config.name}: {command}"
    if config.env:
        text += f" (env: {', '.join(config.env)})"
    if config.error:
        text += "  [invalid entry: will not start]"
    return text


def describe_all(result: TrustCheck) -> list[str]:
    """One line per thing the project would do once trusted: servers, then gated settings."""
    lines = [describe(config) for config in result.servers]
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
    from core import trust
    from core.trust import TrustReason

    globals_: Globals = ctx.obj
    settings = load_settings(globals_)
    result = trust.check(settings)
    if not result.servers and not result.gated:
        print("This project's settings need no trust (no MCP servers, no gated settings).")
        return ExitCode.OK
    print(f"{result.project_file} would start or set:")
    for line in describe_all(result):
        print(f"  {line}")
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
