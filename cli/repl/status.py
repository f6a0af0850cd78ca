"""The REPL's ``/mcp`` view: every server's state, with its tools, resources and prompts."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import anyio

from codebot_mcp.cli import render
from codebot_mcp.core.errors import CodebotError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.mcpbridge.connection.manager import Manager
    from codebot_mcp.mcpbridge.connection.mcp_client import Client

COUNT_SECONDS = 5.0
"""How long ``/mcp`` waits for the servers' resource and prompt listings (all in parallel);
a slow server shows ``?`` instead of holding up the view."""


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


async def _count(manager: Manager, client: Client, facts: dict[str, list[str]]) -> None:
    """Append the resource and prompt counts of ``client`` (what it offers) to ``facts``."""
    caps = client.info.capabilities if client.info else {}
    out = facts.setdefault(client.name, [])
    if "resources" in caps:
        try:
            items = await manager.resources(client.name)
        except CodebotError:
            out.append("resources: listing failed")
        else:
            templates = sum(1 for r in items if r.template)
            updated = sum(1 for r in items if r.updated)
            text = _plural(len(items) - templates, "resource")
            if templates:
                text += f" + {_plural(templates, 'template')}"
            if updated:
                text += f" ({updated} updated)"
            out.append(text)
    if "prompts" in caps:
        try:
            out.append(_plural(len(await manager.prompts(client.name)), "prompt"))
        except CodebotError:
            out.append("prompts: listing failed")


async def counts(manager: Manager) -> dict[str, list[str]]:
    """Per connected server, its resource and prompt counts (``?`` past ``COUNT_SECONDS``)."""
    facts: dict[str, list[str]] = {}
    clients = [c for c in manager.connected() if c.connected]
    with anyio.move_on_after(COUNT_SECONDS):
        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(_count, manager, client, facts)
    for client in clients:
        caps = client.info.capabilities if client.info else {}
        wanted = sum(1 for k in ("resources", "prompts") if k in caps)
        if len(facts.get(client.name, [])) < wanted:
            facts[client.name] = ["resources and prompts: ? (no answer yet)"]
    return facts


MAX_NOTICES = 5
"""Updated resources named before one prompt; more are counted."""


class UpdateNotices:
    """Before the prompt, says once which resources the servers reported as updated
    (``notifications/resources/updated``, or a 2026-07-28 listen event) since they were read."""

    def __init__(self) -> None:
        self.told: set[tuple[str, str]] = set()
        self.held: set[str] | None = None
        """Servers held back by their pinned tools, as last told (None: not looked yet; the
        start's report named those of the start)."""

    def show(self, manager: Manager) -> None:
        """Print the updates not yet told (a resource read again and updated again is new),
        and a server held back since (its tools drifted from the lock mid-session)."""
        held = {n: f for n, f in manager.failures.items() if f.stage == "lock"}
        for name in sorted(set(held) - (self.held if self.held is not None else set(held))):
            render.warn(f"server '{name}' {held[name].message}")
            if held[name].hint:
                render.hint(held[name].hint or "")
        self.held = set(held)
        current = {(c.name, uri) for c in manager.connected() for uri in c.features.updated}
        new = sorted(current - self.told)
        self.told = current
        for server, uri in new[:MAX_NOTICES]:
            mention = render.safe(f"@{server}:{uri}", one_line=True)
            line = f"(server '{render.safe(server)}' updated {render.safe(uri, one_line=True)}"
            print(f"{line}; mention {mention} again for its new contents)", file=sys.stderr)
        if len(new) > MAX_NOTICES:
            print(f"(and {len(new) - MAX_NOTICES} more updated resources)", file=sys.stderr)


async def show_mcp(runtime: ChatRuntime) -> None:
    """``/mcp``: each server's status; a connected one with its tools, resources, prompts."""
    statuses = runtime.manager.status()
    for name in runtime.untrusted:
        print(f"{render.safe(name)}: not trusted (skipped)")
    if runtime.untrusted:
        print("  hint: run `codebot trust` (or answer y after /mcp reload) to start them")
    removed = runtime.settings.policy_removed  # the managed settings' verdicts
    for name, reason in removed.items():
        print(f"{render.safe(name)}: left out by the managed settings")
        print(f"  {render.safe(reason)}")
    if not statuses and not runtime.untrusted and not removed:
        print("no MCP servers are configured (add one with `codebot mcp add NAME -- COMMAND`)")
        return
    extra = await counts(runtime.manager)
    for s in statuses:
        facts: list[str] = [s.status]
        if s.status == "connected":
            facts += [_plural(s.tool_count, "tool"), *extra.get(s.name, [])]
        if s.stale is not None:
            facts.append("stale (its tool list is out of date)")
        print(f"{render.safe(s.name)}: {', '.join(facts)}")
        if s.stale is not None:
            print(f"  {render.safe(s.stale)}")
            print("  hint: codebot retries before the next prompt; /mcp reload reconnects it")
        if s.failure is not None:
            print(f"  {render.safe(s.failure.message)}")
            if s.failure.hint:
                print(f"  hint: {render.safe(s.failure.hint)}")
