"""``codebot mcp login|logout NAME``, and the browser opener that ``--login`` injects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands import shell_completion as completion
from codebot_mcp.cli.login import login_options
from codebot_mcp.cli.runtime import (
    Globals,
    load_effective,
    require_trusted,
    select_servers,
)
from codebot_mcp.core.errors import ExitCode, ServerError, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.tools.useragent import Policy
    from codebot_mcp.mcpbridge.auth import LoginOptions

app = typer.Typer()
"""Holds ``login`` and ``logout``; :mod:`cli.commands.mcp.group` adds them to the ``mcp`` group."""

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


def _oauth_server(globals_: Globals, name: str) -> ServerConfig:
    from codebot_mcp.core.config.servers import require_usable

    loaded = load_effective(globals_, warn=False)
    settings = loaded.settings  # an untrusted project entry never hides yours
    require_trusted(name, loaded.trust, settings)
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
    too), waits for the redirect on 127.0.0.1, and stores the tokens. The grants that need
    no browser (client_credentials, jwt_bearer, identity_assertion) get a token at once, to
    show they work. Exit 0 when logged in, 4 when the login failed (with why).
    """

    globals_: Globals = ctx.obj
    config = _oauth_server(globals_, name)
    options = login_options(force=True)
    if timeout is not None:
        if timeout <= 0:
            raise UsageError(f"--timeout {timeout:g}: must be a positive number of seconds")
        options.timeout = timeout
    from codebot_mcp.core.tools.useragent import Policy

    # The capabilities every command declares; no roots: a login has nothing to show a server
    message = signals.run(_login, config, options, Policy())
    print(message)
    return ExitCode.OK


async def _login(config: ServerConfig, options: LoginOptions, agent: Policy) -> str:
    from codebot_mcp.cli.runtime import open_manager

    servers = {config.name: config}
    async with open_manager(servers, agent=agent, prelaunch=False, login=options) as manager:
        await manager.start_all()
        client = manager.clients[config.name]
        failure = manager.failures.get(config.name)
        if failure is not None:
            raise ServerError(
                f"login to server '{config.name}' failed: {failure.message}", hint=failure.hint
            )
        store = client.auth.store
        render.REDACTOR.add(store.secrets())
        oauth = config.oauth
        if oauth.browserless:
            bound = " (DPoP-bound)" if client.auth.dpop_state == "bound" else ""
            got = (
                f"got a token{bound} without a browser (stored in {store.directory})"
                if store.saved
                else "the server asked for no token"
            )
            return (
                f"server '{config.name}' uses the {oauth.grant} grant: there is nothing to do "
                f"interactively; codebot gets its tokens by itself on every run. {got[0].upper()}"
                f"{got[1:]}."
            )
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

    from codebot_mcp.mcpbridge.auth.revoke import logout

    globals_: Globals = ctx.obj
    config = _oauth_server(globals_, name)
    result = signals.run(logout, config)
    if not result.had_tokens:
        print(f"not logged in to '{name}': {result.detail}")
    else:
        print(f"logged out of '{name}': tokens deleted; {result.detail}")
    return ExitCode.OK
