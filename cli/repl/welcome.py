"""Orientation in the REPL: the first screen (model and endpoint, MCP servers, sandbox,
project trust, ``/help``) and ``/model [NAME]`` (the endpoint's models; switch the session's
model, keeping the conversation)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from codebot_mcp.cli import render
from codebot_mcp.core.errors import ModelError
from codebot_mcp.core.secrets.redact import redact_url

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime

MAX_LISTED = 50
"""Models ``/model`` lists by name; the rest are counted."""


def model_part(runtime: ChatRuntime) -> str:
    """``model gpt-4.1 at https://api.example.com/v1`` (the URL without credentials)."""
    agent = runtime.agent
    if agent is None:
        return "no model (see the error above)"
    config = agent.model.config
    return f"model {config.model} at {redact_url(config.url)}"


def trust_part(runtime: ChatRuntime) -> str:
    """Whether the project's own servers and settings are in force."""
    if runtime.untrusted:
        skipped = render.count(len(runtime.untrusted), "server")
        return f"project not trusted ({skipped} skipped; /mcp reload asks again)"
    from codebot_mcp.core.config import trust

    result = trust.check(runtime.settings)
    if result.reason is trust.TrustReason.NOTHING:
        return "project: nothing to trust"
    return "project trusted"


def servers_part(runtime: ChatRuntime) -> str:
    """``3 MCP servers connecting…`` (the ready/failed line follows once they answer)."""
    count = len(runtime.settings.servers)
    if not count:
        return "no MCP servers"
    return f"{render.count(count, 'MCP server')} connecting…"


def first_screen(runtime: ChatRuntime) -> list[str]:
    """The lines shown before the first prompt (unstyled)."""
    sandbox = runtime.sandbox.describe() if runtime.sandbox is not None else "no sandbox"
    return [
        f"codebot · {model_part(runtime)} · {servers_part(runtime)}",
        f"{sandbox} · {trust_part(runtime)} · /help for commands, /model to switch models",
    ]


def show_first_screen(runtime: ChatRuntime) -> None:
    """Print :func:`first_screen` on stderr, dimmed."""
    for line in first_screen(runtime):
        print(render.style(render.safe(line), "2", sys.stderr), file=sys.stderr)


async def switch_model(runtime: ChatRuntime, name: str) -> None:
    """``/model``: the endpoint's models, the current one marked. ``/model NAME``: use NAME
    for the rest of the session (the conversation is kept)."""
    import anyio.to_thread

    from codebot_mcp.core.model import localservers as discovery

    agent = runtime.agent
    if not name:
        if agent is None:
            assert runtime.model_error is not None
            render.error(runtime.model_error)
            return
        config = agent.model.config
        key = config.api_key if config.key_env else None
        try:
            names = await anyio.to_thread.run_sync(discovery.list_models, config.url, key)
        except ModelError as exc:
            render.error(exc)
            return
        print(f"models at {render.safe(redact_url(config.url))}:")
        for item in names[:MAX_LISTED]:
            mark = "*" if item == config.model else " "
            print(f" {mark} {render.safe(item, one_line=True)}")
        if len(names) > MAX_LISTED:
            print(f"   … and {len(names) - MAX_LISTED} more")
        if not names:
            print("   (the endpoint lists none)")
        print("(/model NAME switches this session's model)")
        return
    if agent is not None:
        config = agent.model.config
        key = config.api_key if config.key_env else None
        try:
            names = await anyio.to_thread.run_sync(discovery.list_models, config.url, key)
        except ModelError:
            names = []  # the endpoint cannot list: the name is tried as given
        if names and name not in names:
            render.error_line(
                f"/model {name}: {redact_url(config.url)} does not serve that model; "
                "/model lists the ones it does"
            )
            return
    options = runtime.options
    before = options.model
    options.model = name
    try:
        await runtime.apply(runtime.settings)
    except ModelError as exc:
        options.model = before
        render.error(exc)
        return
    print(f"(now using {render.safe(model_part(runtime))}; the conversation is kept)")
