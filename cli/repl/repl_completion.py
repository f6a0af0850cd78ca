"""Tab completion in the REPL: slash commands, ``/mcp__server__prompt`` names and argument
values (``completion/complete`` where the server offers it), ``@server`` and resource URIs."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli.render import safe
from codebot_mcp.cli.repl.mcp import PROMPT_PREFIX
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.tools.sources import PromptInfo, ResourceInfo

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completion
    from prompt_toolkit.document import Document

    from codebot_mcp.mcpbridge.connection.manager import Manager


class Catalog:
    """Prompts and resources per server, fetched when first needed and again when stale."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self._prompts: dict[str, list[PromptInfo]] = {}
        self._resources: dict[str, list[ResourceInfo]] = {}

    async def prompts(self) -> list[PromptInfo]:
        """Every connected server's prompts."""
        out: list[PromptInfo] = []
        for client in self.manager.connected():
            if client.name not in self._prompts or client.features.prompts_stale:
                try:
                    self._prompts[client.name] = await self.manager.prompts(client.name)
                except CodebotError:
                    self._prompts[client.name] = []
            out += self._prompts[client.name]
        return out

    async def resources(self, server: str) -> list[ResourceInfo]:
        """One server's resources and templates."""
        client = self.manager.clients.get(server)
        if client is None or not client.connected:
            return []
        if server not in self._resources or client.features.resources_stale:
            try:
                self._resources[server] = await self.manager.resources(server)
            except CodebotError:
                self._resources[server] = []
        return self._resources[server]


def _completer_base() -> type[Any]:
    from prompt_toolkit.completion import Completer

    return Completer


SLASH_COMMANDS = [
    *("/mcp", "/mcp reload", "/tools", "/plan", "/sandbox", "/context", "/compact", "/usage"),
    *("/hooks", "/agents", "/skills", "/memory", "/init", "/resume", "/rewind", "/clear"),
    *("/help", "/exit"),
    *("/model", "/expand"),
    *("/todos", "/export"),
    *("/jobs", "/jobs kill"),
]
"""The REPL's own commands, as completed at its prompt."""


class MCPCompleter(_completer_base()):  # type: ignore[misc]
    """Completes ``/commands``, ``/mcp__server__prompt`` names and arguments, ``@server:uri``."""

    def __init__(self, manager_of: Any, commands: Iterable[str]) -> None:
        self.manager_of = manager_of
        """Returns the manager (None before the runtime exists)."""
        self.commands = list(commands)
        self.custom_of: Callable[[], list[tuple[str, str]]] = list
        """``(/name, description)`` of the custom commands (they change on ``/mcp reload``)."""
        self._catalog: Catalog | None = None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Any]:
        """Completion is asynchronous (it may ask servers); nothing synchronously."""
        return []

    def _catalog_for(self) -> Catalog | None:
        manager = self.manager_of()
        if manager is None:
            return None
        if self._catalog is None or self._catalog.manager is not manager:
            self._catalog = Catalog(manager)
        return self._catalog

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """The completions for the text before the cursor."""
        from prompt_toolkit.completion import Completion

        text = document.text_before_cursor
        catalog = self._catalog_for()
        items: list[tuple[str, int, str]] = []
        try:
            if text.startswith("/") and " " not in text:
                items = await self._commands(text, catalog)
            elif text.startswith(PROMPT_PREFIX) and catalog is not None:
                items = await self._prompt_args(text, catalog)
            elif catalog is not None and (
                m := re.search(r"(?:^|\s)@([A-Za-z0-9_-]*)(:\S*)?$", text)
            ):
                items = await self._mention(m, catalog)
        except Exception:  # boundary: completion must never break the prompt
            items = []
        for value, start, meta in items[:200]:
            yield Completion(value, start_position=start, display_meta=safe(meta)[:60])

    async def _commands(self, text: str, catalog: Catalog | None) -> list[tuple[str, int, str]]:
        names = [(c, "") for c in self.commands] + self.custom_of()
        if catalog is not None and text.startswith("/m"):
            names += [
                (f"{PROMPT_PREFIX}{p.server}__{p.name}", p.description or p.title or "")
                for p in await catalog.prompts()
            ]
        return [(n, -len(text), meta) for n, meta in names if n.startswith(text)]

    async def _prompt_args(self, text: str, catalog: Catalog) -> list[tuple[str, int, str]]:
        head, _, rest = text.partition(" ")
        server, _, name = head[len(PROMPT_PREFIX) :].partition("__")
        prompt = next(
            (p for p in await catalog.prompts() if p.server == server and p.name == name), None
        )
        if prompt is None:
            return []
        words = rest.split(" ")
        current = words[-1]
        given = dict(w.split("=", 1) for w in words[:-1] if "=" in w)
        if "=" not in current:
            return [
                (f"{a.name}=", -len(current), a.description or ("required" if a.required else ""))
                for a in prompt.arguments
                if a.name.startswith(current) and a.name not in given
            ]
        key, _, value = current.partition("=")
        values = await catalog.manager.complete(server, name, key, value, given)
        return [(v, -len(value), "") for v in values if " " not in v]

    async def _mention(self, m: re.Match[str], catalog: Catalog) -> list[tuple[str, int, str]]:
        server, rest = m.group(1), m.group(2)
        if rest is None:
            return [
                (f"{c.name}:", -len(server), "MCP server")
                for c in catalog.manager.connected()
                if c.name.startswith(server)
            ]
        prefix = rest[1:]
        out: list[tuple[str, int, str]] = []
        for r in await catalog.resources(server):
            if r.app_page:  # an MCP App's HTML page: codebot renders no Apps (SEP-1865)
                continue
            if r.uri.startswith(prefix):
                meta = ("template: " if r.template else "") + (r.title or r.name)
                out.append((r.uri, -len(prefix), meta))
            elif r.template:
                for uri in await _fill_template(catalog, server, r.uri, prefix):
                    out.append((uri, -len(prefix), r.title or r.name))
        return out


async def _fill_template(catalog: Catalog, server: str, template: str, prefix: str) -> list[str]:
    """URIs for a template whose first ``{variable}`` is being typed: its values are asked of
    the server (``completion/complete`` on the template), the rest of the template kept."""
    head, brace, tail = template.partition("{")
    variable, closed, after = tail.partition("}")
    if not brace or not closed or not prefix.startswith(head):
        return []
    value = prefix[len(head) :]
    if "/" in value or not variable:
        return []
    values = await catalog.manager.complete(server, template, variable, value)
    suffix = after if "{" not in after else ""
    return [f"{head}{v}{suffix}" for v in values if v and "/" not in v and " " not in v]
