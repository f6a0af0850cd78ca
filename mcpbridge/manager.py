"""``Manager``: every configured server, started in parallel, as one tool source.

A server that fails is recorded in :attr:`Manager.failures` and never stops the others.
Change notifications only mark state (the dirty flag); :meth:`Manager.refresh_if_dirty`
re-lists before the next prompt. Use it as ``async with Manager(servers) as manager:``; the
context exit stops every server and waits for each child process to end.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from core.servers import ServerConfig
from mcpbridge.client import Client
from mcpbridge.failures import Failure
from mcpbridge.naming import allocate
from mcpbridge.process import Prelaunched
from mcpbridge.tool import MCPTool

Status = Literal["connected", "failed", "disabled", "pending"]


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One line of ``/mcp`` and ``mcp list``."""

    name: str
    status: Status
    config: ServerConfig
    tool_count: int = 0
    protocol_version: str | None = None
    failure: Failure | None = None


class Manager:
    """All MCP servers of one codebot run."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        prelaunched: Prelaunched | None = None,
        in_process: Mapping[str, Any] | None = None,
    ) -> None:
        self.servers: dict[str, ServerConfig] = dict(servers)
        self._prelaunched = prelaunched
        self._in_process = dict(in_process or {})
        """Server name → an SDK server object served in this process (see ``Client``)."""
        self.clients: dict[str, Client] = {}
        self._config_failures: dict[str, Failure] = {}
        self._dirty = False
        self._tools: list[MCPTool] | None = None
        self._tg: TaskGroup | None = None

    async def __aenter__(self) -> Manager:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self._stop_clients(list(self.clients.values()))
        tg, self._tg = self._tg, None
        assert tg is not None
        # Every client task has ended (they never raise), so the group exits clean and the
        # caller's own exception, if any, propagates as it is, not wrapped in a group.
        await tg.__aexit__(None, None, None)
        return None

    # -- starting and stopping -------------------------------------------------------------

    async def start_all(self, names: Iterable[str] | None = None) -> None:
        """Start the named (default: all enabled) servers in parallel; wait until each is
        connected or failed. Never raises for a server's failure.
        """
        if self._tg is None:
            raise RuntimeError("use the Manager as 'async with Manager(...) as manager'")
        wanted = list(names) if names is not None else list(self.servers)
        started: list[Client] = []
        for name in wanted:
            config = self.servers[name]
            if config.error is not None:
                self._config_failures[name] = Failure(name, "config", config.error, config.hint)
                continue
            if not config.enabled or name in self.clients:
                continue
            process = self._prelaunched.take(name) if self._prelaunched else None
            client = Client(
                config,
                on_tools_changed=self._on_tools_changed,
                on_lost=self._on_lost,
                process=process,
                spawn=self._spawn,
                in_process=self._in_process.get(name),
            )
            self.clients[name] = client
            started.append(client)
            self._tg.start_soon(client.run, name=f"mcp server {name}")
        async with anyio.create_task_group() as tg:
            for client in started:
                tg.start_soon(self._await_ready, client)

    def _spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        assert self._tg is not None
        self._tg.start_soon(task)

    async def _await_ready(self, client: Client) -> None:
        await client.ready.wait()
        self._tools = None
        self._dirty = True

    async def _stop_clients(self, clients: list[Client]) -> None:
        async with anyio.create_task_group() as tg:
            for client in clients:
                tg.start_soon(client.stop)

    async def reconfigure(self, servers: Mapping[str, ServerConfig]) -> None:
        """Apply new settings: stop removed, changed or failed servers; start new, changed or
        failed ones. Servers that are connected and unchanged keep their connection.
        """
        old = self.servers
        self.servers = dict(servers)
        # Removed, changed, and failed servers go; a failed one starts afresh below.
        gone = [
            c
            for n, c in self.clients.items()
            if n not in servers or servers[n] != old.get(n) or not c.connected
        ]
        await self._stop_clients(gone)
        for client in gone:
            del self.clients[client.name]
        self._config_failures.clear()
        self._tools = None
        self._dirty = True
        await self.start_all()

    # -- the tool source -----------------------------------------------------------------

    @property
    def failures(self) -> dict[str, Failure]:
        """Servers that could not be used, by name."""
        out = dict(self._config_failures)
        for name, client in self.clients.items():
            if client.failure is not None:
                out[name] = client.failure
        return dict(sorted(out.items()))

    def connected(self) -> list[Client]:
        """Clients whose tools are offered, sorted by name: live connections, and crashed
        stdio servers that the next call will restart.
        """
        return [
            c
            for _, c in sorted(self.clients.items())
            if c.connected or (c.crashed and c.restarts_left > 0)
        ]

    def tools(self) -> list[MCPTool]:
        """Every connected server's tools, sorted by server then tool; same tools, same list."""
        if self._tools is None:
            pairs = [
                (c, t) for c in self.connected() for t in sorted(c.tools, key=lambda t: t.name)
            ]
            names = allocate((c.name, t.name) for c, t in pairs)
            self._tools = [
                MCPTool(client, tool, n.name, name_reason=n.reason)
                for (client, tool), n in zip(pairs, names, strict=True)
            ]
        return list(self._tools)

    async def refresh_if_dirty(self) -> list[MCPTool] | None:
        """None when nothing changed (no I/O); else re-list changed servers and return all tools."""
        if not self._dirty:
            return None
        self._dirty = False  # check-and-reset with no await in between: atomic on the loop
        stale = [c for c in self.connected() if c.tools_stale]
        for client in stale:
            client.tools_stale = False
        if stale:
            async with anyio.create_task_group() as tg:
                for client in stale:
                    tg.start_soon(self._relist, client)
            self._tools = None
        return self.tools()

    async def _relist(self, client: Client) -> None:
        try:
            client.tools = await client.list_tools()
        except Exception:  # boundary: keep the old listing; status() shows the failure
            client.tools_stale = True

    def _on_tools_changed(self, _server: str) -> None:
        self._dirty = True

    def _on_lost(self, _server: str) -> None:
        # A connection that was up failed: rebuild the tool list from connected() (a crashed
        # stdio server keeps its tools while it has a restart left), and tell the session.
        self._tools = None
        self._dirty = True

    def instructions(self) -> str:
        """Each connected server's instructions as a ``## <server>`` section, in server order.

        Lines that name a tool hidden by ``include_tools``/``exclude_tools`` are left out.
        """
        from core.prompt import without_hidden_tools

        sections = [
            f"## {c.name}\n{without_hidden_tools(c.info.instructions, c.hidden_tools).strip()}"
            for c in self.connected()
            if c.info is not None and c.info.instructions and c.info.instructions.strip()
        ]
        return "\n\n".join(sections)

    def tool_by_name(self, name: str) -> MCPTool | None:
        """Route a model-visible name to its tool through the name map."""
        return next((t for t in self.tools() if t.name == name), None)

    def status(self) -> list[ServerStatus]:
        """Every configured server, sorted by name, from the last handshake and listing."""
        results: dict[str, ServerStatus] = {}
        for name, client in self.clients.items():
            if client.connected:
                protocol = client.info.protocol_version if client.info else None
                results[name] = ServerStatus(
                    name, "connected", client.config, len(client.tools), protocol
                )
            else:
                failure = client.failure
                state: Status = "failed" if failure else "pending"
                results[name] = ServerStatus(name, state, client.config, failure=failure)
        for name, config in self.servers.items():
            if name in results:
                continue
            failure = self._config_failures.get(name)
            if failure is not None:
                results[name] = ServerStatus(name, "failed", config, failure=failure)
            elif not config.enabled:
                results[name] = ServerStatus(name, "disabled", config)
        return [results[n] for n in sorted(results)]
