"""``codebot mcp login|logout NAME``, and the browser opener that ``--login`` injects."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands import completion
from codebot_mcp.cli.runtime import (
    Globals,
    apply_trust,
    load_settings,
    require_trusted,
    select_servers,
)
from codebot_mcp.core.errors import ExitCode, ServerError, UsageError

if TYPE_CHECKING:
    from codebot_mcp.cli.runtime import ChatRuntime
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.mcpbridge.auth import LoginOptions

app = typer.Typer()
"""Holds ``login`` and ``logout``; :mod:`cli.mcp` adds them to the ``mcp`` group."""

LoginOpt = Annotated[
    bool,
    typer.Option(
        "--login",
        help="Run the OAuth browser flow inline when a server needs authorization.",
    ),
]

NameArg = Annotated[
    str,
    typer.Argument(
        metavar="NAME",
        help="The server's name in settings.",
        autocompletion=completion.server_names,
    ),
]


def printable(text: str) -> str:
    """``text`` with control characters shown escaped (URLs come from servers)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def open_url(server: str, url: str) -> None:
    """Show the authorization URL on stderr and open it with ``$BROWSER`` (read now) or the
    system's browser, in a daemon thread: a ``$BROWSER`` command may wait for its window,
    while the loopback listener must be answering already. A browser started here is the
    user's window: it is spared when codebot exits.
    """
    from codebot_mcp.cli.browser import open_in_browser

    print(
        f"Authorize codebot for server '{printable(server)}' in your browser.\n"
        f"If no browser opens, visit this URL (on this machine):\n  {printable(url)}",
        file=sys.stderr,
        flush=True,
    )
    if not open_in_browser(url):
        print("(no browser found: open the URL above yourself)", file=sys.stderr, flush=True)


def login_options(*, force: bool = False) -> LoginOptions:
    """What ``--login`` and ``mcp login`` hand to the bridge."""
    from codebot_mcp.mcpbridge.auth import LoginOptions

    return LoginOptions(open_url=open_url, force=force)


def _oauth_server(globals_: Globals, name: str) -> ServerConfig:
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.servers import require_usable

    settings = load_settings(globals_)
    check = trust.check(settings, assume_trusted=globals_.trust_project)
    require_trusted(name, check, settings)
    if name in settings.shadowed and check.needs_trust:
        settings, _ = apply_trust(globals_, settings)  # the global entry stands in
    config = select_servers(settings, [name])[name]
    require_usable(config)
    if config.type != "http":
        raise UsageError(
            f"server '{name}' is a stdio server: there is nothing to log in to",
            hint="OAuth is for http servers; give a stdio server its credentials in 'env'.",
        )
    if not config.oauth.enabled:
        raise UsageError(
            f"server '{name}' has \"oauth\": false in {config.source}",
            hint='Remove "oauth": false from the entry to log in with OAuth.',
        )
    render.REDACTOR.add(config.oauth.secrets)
    return config


@app.command("login")
def login_command(
    ctx: typer.Context,
    name: NameArg,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Seconds to finish in the browser (default 300)."),
    ] = None,
) -> int:
    """Log in to an http server with OAuth and store its tokens.

    Opens the authorization page in the browser ($BROWSER picks it; the URL is printed
    too), waits for the redirect on 127.0.0.1, and stores the tokens. Exit 0 when logged in,
    4 when the login failed (with why).
    """
    import anyio

    globals_: Globals = ctx.obj
    config = _oauth_server(globals_, name)
    options = login_options(force=True)
    if timeout is not None:
        if timeout <= 0:
            raise UsageError(f"--timeout {timeout:g}: must be a positive number of seconds")
        options.timeout = timeout
    message = anyio.run(_login, config, options)
    print(message)
    return ExitCode.OK


async def _login(config: ServerConfig, options: LoginOptions) -> str:
    from codebot_mcp.cli.runtime import open_manager

    async with open_manager({config.name: config}, prelaunch=False, login=options) as manager:
        await manager.start_all()
        client = manager.clients[config.name]
        failure = manager.failures.get(config.name)
        if failure is not None:
            raise ServerError(
                f"login to server '{config.name}' failed: {failure.message}", hint=failure.hint
            )
        store = client.auth.store
        render.REDACTOR.add(store.secrets())
        if not store.saved:
            return (
                f"server '{config.name}' did not ask for authorization: it works without a "
                "login (nothing stored)"
            )
        return f"logged in to '{config.name}' (tokens stored in {store.directory})"


@app.command("logout")
def logout_command(
    ctx: typer.Context,
    name: NameArg,
) -> int:
    """Forget the OAuth tokens of a server: revoke them where it supports it (RFC 7009), and
    delete them. Exit 0.
    """
    import anyio

    from codebot_mcp.mcpbridge.auth.revoke import logout

    globals_: Globals = ctx.obj
    config = _oauth_server(globals_, name)
    result = anyio.run(logout, config)
    if not result.had_tokens:
        print(f"not logged in to '{name}': {result.detail}")
    else:
        print(f"logged out of '{name}': tokens deleted; {result.detail}")
    return ExitCode.OK


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
    print(f"(logged in to '{name}'; {len(client.tools)} tools)")
