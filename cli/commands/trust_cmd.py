"""``codebot trust``: review what the project would run (MCP servers, gated settings, hooks,
agents, commands, skills) and record trust for it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_unfiltered_settings
from codebot_mcp.cli.trustview import describe_all
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    pass


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
    from codebot_mcp.core.config import effective, trust
    from codebot_mcp.core.config.trust import TrustReason

    globals_: Globals = ctx.obj
    # What trust holds back, to show it: the review is the one reader that needs it.
    result = effective.apply(load_unfiltered_settings(globals_)).trust
    if not result.asks:
        print(
            "This project needs no trust (no MCP servers, no gated settings, no hooks, "
            "agents, commands or skills)."
        )
        return ExitCode.OK
    print(f"{render.safe(result.project_file or result.root)} would start or set:")
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
        from codebot_mcp.cli.repl.repl_keys import read_key

        try:
            answer = read_key(
                "Trust this project (start these servers, apply these settings)? [y/N] ",
                "yn",
                enter="n",
            )
        except EOFError:
            answer = "n"
        if answer != "y":
            render.warn("not trusted; the project's servers stay off")
            return ExitCode.DECLINED
    store = trust.record(result)
    print(f"Trusted (recorded in {store}).")
    return ExitCode.OK
