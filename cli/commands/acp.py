"""``codebot acp``: codebot as an ACP agent over stdio, for editors (:mod:`cli.acp`)."""

from __future__ import annotations

from typing import Annotated

import typer

from codebot_mcp.cli.runtime import Globals

app = typer.Typer()
"""Holds ``acp``; :mod:`cli.app` adds it to the root."""


@app.command("acp")
def acp_command(
    ctx: typer.Context,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            metavar="MODE",
            help="Run bash confined: read-only, workspace-write or off "
            "(default: the 'sandbox' setting; workspace-write where supported).",
        ),
    ] = None,
    allow_drift: Annotated[
        bool,
        typer.Option(
            "--allow-drift",
            help="Use servers whose tools drifted from .codebot/mcp-lock.json, for this run.",
        ),
    ] = False,
) -> int:
    """Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim).

    The editor starts `codebot acp` and talks JSON-RPC to it; stdout carries only protocol
    messages, logs go to stderr. Exit 0 when the editor closes the connection, 2 usage (a bad
    --sandbox), 130 interrupted. Errors of a session (settings, model) are answered to the
    editor as JSON-RPC errors.
    """
    from codebot_mcp.cli import signals
    from codebot_mcp.cli.acp.agent import serve
    from codebot_mcp.cli.chat_parts import sandbox_mode
    from codebot_mcp.cli.chat_runtime import ChatOptions

    globals_: Globals = ctx.obj
    options = ChatOptions(model=globals_.model, base_url=globals_.base_url)
    options.sandbox = sandbox_mode(sandbox)
    options.allow_drift = allow_drift
    return signals.run(serve, globals_, options)
