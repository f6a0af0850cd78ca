"""Logging in to an OAuth server from any command or the REPL: the browser opener that
``--login`` injects, and ``/mcp login NAME``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from codebot_mcp.cli import render
from codebot_mcp.cli.render import safe

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.mcpbridge.auth import LoginOptions


def open_url(server: str, url: str) -> None:
    """Show the authorization URL on stderr and open it with ``$BROWSER`` (read now) or the
    system's browser, in a daemon thread: a ``$BROWSER`` command may wait for its window,
    while the loopback listener must be answering already. A browser started here is the
    user's window: it is spared when codebot exits.
    """
    from codebot_mcp.cli.browser import open_in_browser

    print(
        f"Authorize codebot for server '{safe(server, one_line=True)}' in your browser.\n"
        f"If no browser opens, visit this URL (on this machine):\n  {safe(url, one_line=True)}",
        file=sys.stderr,
        flush=True,
    )
    if not open_in_browser(url):
        print("(no browser found: open the URL above yourself)", file=sys.stderr, flush=True)


def login_options(*, force: bool = False) -> LoginOptions:
    """What ``--login`` and ``mcp login`` hand to the bridge."""
    from codebot_mcp.mcpbridge.auth import LoginOptions

    return LoginOptions(open_url=open_url, force=force)


async def repl_login(runtime: ChatRuntime, name: str) -> None:
    """``/mcp login NAME``: the browser flow for one server, then its tools are in."""
    config = runtime.manager.servers.get(name)
    if not name or config is None:
        known = ", ".join(runtime.manager.servers) or "none"
        render.error_line(f"usage: /mcp login NAME (servers: {known})")
        return
    if config.type != "http" or not config.oauth.enabled:
        render.error_line(f"server '{name}' does not use OAuth (stdio, or \"oauth\": false)")
        return
    client = await runtime.manager.restart(name, login=login_options(force=True))
    await runtime.session.before_prompt()  # the next turn sees its tools
    if client.failure is not None:
        render.error_line(f"login to '{name}' failed: {client.failure.message}")
        if client.failure.hint:
            print(f"  hint: {client.failure.hint}", file=sys.stderr)
        return
    render.REDACTOR.add(client.auth.store.secrets())
    print(f"(logged in to '{name}'; {render.count(len(client.tools), 'tool')})")
