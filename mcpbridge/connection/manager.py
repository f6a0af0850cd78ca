"""``Manager``: every configured server, started in parallel, as one tool source.

A server that fails is recorded in :attr:`Manager.failures` and never stops the others.
The SDK loads with the first server started, so a run without servers (``chat`` alone) never
imports it. A change notification only marks its client stale (``Client.tools_stale``, the one
flag); :meth:`Manager.refresh_if_dirty` re-lists the stale ones before the next prompt, and
hands out the tool list again when it differs from the one it last handed out. Use it as
``async with Manager(servers) as manager:``; the context exit stops every server and waits for
each child process to end.

Size: one class, every server of a run as one source: starting and stopping, the re-lists
of stale servers (with the retry of a failed one, and the pin check that holds a drifted
server back), status, and the resource, prompt and skill calls that only route to a client
(a split would leave a second class holding the same map).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio
from anyio.abc import TaskGroup

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.mcpbridge.connection.failures import Failure
from codebot_mcp.mcpbridge.connection.taskpolicy import TaskPolicy
from codebot_mcp.mcpbridge.tools.naming import allocate
from codebot_mcp.mcpbridge.transport.process import Prelaunched

if TYPE_CHECKING:
    from codebot_mcp.core.tools.sources import (
        PromptInfo,
        PromptMessage,
        ResourceContent,
        ResourceInfo,
        SkillEntry,
        SkillListing,
    )
    from codebot_mcp.core.tools.useragent import Sampling, UserAgent
    from codebot_mcp.mcpbridge.auth import LoginOptions
    from codebot_mcp.mcpbridge.connection.features import ProgressHook
    from codebot_mcp.mcpbridge.connection.mcp_client import Client
    from codebot_mcp.mcpbridge.connection.tool import MCPTool
    from codebot_mcp.mcpbridge.tools.tool_pins import Pins

Status = Literal["connected", "failed", "needs login", "disabled", "pending"]


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One line of ``/mcp`` and ``mcp list``."""

    name: str
    status: Status
    config: ServerConfig
    tool_count: int = 0
    protocol_version: str | None = None
    failure: Failure | None = None
    stale: str | None = None
    """Connected, but the re-list after ``tools/list_changed`` failed: why. The tools shown
    are the last good listing; the re-list is retried before the next prompt."""


class Manager:
    """All MCP servers of one codebot run."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        prelaunched: Prelaunched | None = None,
        agent: UserAgent | None = None,
        sampler: Sampling | None = None,
        login: LoginOptions | None = None,
        in_process: Mapping[str, Any] | None = None,
        pins: Pins | None = None,
        tasks: TaskPolicy | None = None,
        on_progress: ProgressHook | None = None,
    ) -> None:
        self.servers: dict[str, ServerConfig] = dict(servers)
        self.pins = pins
        """The project's lock every server is checked against as it connects and re-lists
        (None: no lock, or ``--allow-drift``)."""
        self.agent = agent
        """Answers the servers' elicitation, sampling and roots requests (None: declare none)."""
        self.sampler = sampler
        self.on_progress = on_progress
        """Where progress notifications of running calls go (the REPL spinner, stderr)."""
        self.tasks = tasks or TaskPolicy()
        """How every server's tasks (SEP-2663) report, are journaled, and end."""
        self._prelaunched = prelaunched
        self.login = login
        """When set, servers that need authorization run the browser flow inline."""
        self._in_process = dict(in_process or {})
        """Server name → an SDK server object served in this process (see ``Client``)."""
        self.clients: dict[str, Client] = {}
        self._config_failures: dict[str, Failure] = {}
        self._tools: list[MCPTool] = []
        self._tools_key: _Key = ()
        """What :attr:`_tools` was built from: every client's state and listing."""
        self._offered: _Key = ()
        """What the tools :meth:`refresh_if_dirty` last handed out were built from."""
        self._tg: TaskGroup | None = None
        self._skills: dict[str, tuple[Client, list[SkillEntry], list[str]]] = {}
        """Server name → (the connection it was listed on, its skill entries, their issues)."""

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
            if not config.enabled or name in self.clients:
                continue  # disabled beats invalid: a disabled entry needs none of its variables
            if config.error is not None:
                self._config_failures[name] = Failure(name, "config", config.error, config.hint)
                continue
            process = self._prelaunched.take(name) if self._prelaunched else None
            adopt = self._prelaunched.discovered.pop(name, None) if self._prelaunched else None
            from codebot_mcp.mcpbridge.connection.mcp_client import Client  # the SDK loads here

            client = Client(
                config,
                process=process,
                adopt=adopt,
                spawn=self._spawn,
                agent=self.agent,
                sampler=self.sampler,
                login=self.login,
                in_process=self._in_process.get(name),
                pins=self.pins,
            )
            client.features.on_progress = self._progress
            client.tasks.policy = self.tasks
            self.clients[name] = client
            started.append(client)
            self._tg.start_soon(client.run, name=f"mcp server {name}")
        async with anyio.create_task_group() as tg:
            for client in started:
                tg.start_soon(self._await_ready, client)

    def _progress(
        self, server: str, value: float, total: float | None, message: str | None
    ) -> None:
        if self.on_progress is not None:
            self.on_progress(server, value, total, message)

    def _spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        assert self._tg is not None
        self._tg.start_soon(task)

    @staticmethod
    async def _await_ready(client: Client) -> None:
        await client.ready.wait()

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
        await self.start_all()

    async def restart(self, name: str, *, login: LoginOptions | None = None) -> Client:
        """Stop server ``name`` and start it again, with the browser flow allowed when
        ``login`` is given (REPL ``/mcp login``). Never raises for the server's failure.
        """
        old = self.clients.pop(name, None)
        if old is not None:
            await self._stop_clients([old])
        self._config_failures.pop(name, None)
        previous, self.login = self.login, login
        try:
            await self.start_all([name])
        finally:
            self.login = previous
        return self.clients[name]

    # -- the tool source -----------------------------------------------------------------

    @property
    def failures(self) -> dict[str, Failure]:
        """Servers that could not be used, by name."""
        out = dict(self._config_failures)
        for name, client in self.clients.items():
            if client.failure is not None:
                out[name] = client.failure
        return dict(sorted(out.items()))

    async def roots_changed(self) -> None:
        """Tell the connected handshake-era servers that the roots changed (settings reload)."""
        from codebot_mcp.mcpbridge.connection.features import roots_changed

        sessions = [(c.name, c.session_if_connected) for c in self.connected()]
        await roots_changed([(n, s) for n, s in sessions if s is not None])

    def connected(self) -> list[Client]:
        """Clients whose tools are offered, sorted by name: live connections, and crashed
        stdio servers that the next call will restart.
        """
        return [c for _, c in sorted(self.clients.items()) if _offers(c)]

    def tools(self) -> list[MCPTool]:
        """Every connected server's tools, sorted by server then tool; same tools, same list.

        The list is cached, and rebuilt whenever a server's state or listing changes: a
        server that died for good takes its tools with it.
        """
        if not self._unchanged_since(self._tools_key):
            self._tools_key = self._key()
            pairs = [
                (c, t) for c in self.connected() for t in sorted(c.tools, key=lambda t: t.name)
            ]
            names = allocate((c.name, t.name) for c, t in pairs)
            from codebot_mcp.mcpbridge.connection.tool import MCPTool  # loaded with a server

            self._tools = [
                MCPTool(client, tool, n.name, name_reason=n.reason)
                for (client, tool), n in zip(pairs, names, strict=True)
            ]
        return list(self._tools)

    def app_tools(self) -> list[MCPTool]:
        """Every connected server's app-only tools (MCP Apps), sorted as :meth:`tools`: never
        offered to the model; ``mcp list --all`` shows them and ``mcp call`` may call one."""
        pairs = [
            (c, t) for c in self.connected() for t in sorted(c.app_tools, key=lambda t: t.name)
        ]
        names = allocate((c.name, t.name) for c, t in pairs)
        from codebot_mcp.mcpbridge.connection.tool import MCPTool  # loaded with a server

        return [
            MCPTool(client, tool, n.name, name_reason=n.reason)
            for (client, tool), n in zip(pairs, names, strict=True)
        ]

    async def refresh_if_dirty(self) -> list[MCPTool] | None:
        """None when nothing changed (no I/O); else re-list changed servers and return all tools.

        Dirty means a connected client is stale (a change notification, a restart), or a
        server's state or listing moved since the tools were last handed out (started,
        failed, lost, reconfigured). A re-list that fails keeps the server's last good
        listing, records why (:attr:`ServerStatus.stale`) and leaves the client stale, so the
        next call retries it (before the next prompt) until it succeeds or the server goes.
        """
        if self._unchanged_since(self._offered):  # none stale, none changed: no I/O
            return None
        stale = [c for c in self.connected() if c.tools_stale]
        for client in stale:  # reset with no await since the check: atomic on the loop
            client.tools_stale = False
        if stale:
            async with anyio.create_task_group() as tg:
                for client in stale:
                    tg.start_soon(self._relist, client)
        tools = self.tools()
        self._offered = self._tools_key
        return tools

    def _key(self) -> _Key:
        """Every client, its state and its listing, as they are now."""
        return tuple(
            (c, c.state, c.crashed, c.restarts_left, c.tools) for c in self.clients.values()
        )

    def _unchanged_since(self, key: _Key) -> bool:
        """The clients are those of ``key``, in its states, with its listings (the same list
        objects: a re-list assigns a new one), and none whose tools are offered is stale.
        Allocates nothing: it runs before every prompt."""
        clients = self.clients
        if len(clients) != len(key):
            return False
        for c, (was, state, crashed, left, tools) in zip(clients.values(), key, strict=True):
            if c is not was or c.tools is not tools or c.state != state:
                return False
            if c.crashed != crashed or c.restarts_left != left:
                return False
            if c.tools_stale and _offers(c):
                return False
        return True

    @staticmethod
    async def _relist(client: Client) -> None:
        try:
            client.tools = await client.list_tools()
        except Exception as exc:  # boundary: keep the old listing; status() shows the failure
            client.tools_stale = True  # retried at the next refresh, not only at the next change
            client.relist_error = _relist_failure(client, exc)
            return
        client.relist_error = None
        held = client.pin_problem()
        if held is not None:  # the tools changed under a pinned server: it goes
            client.hold(held)

    def instructions(self) -> str:
        """Each connected server's instructions as a ``## <server>`` section, in server order.

        Lines that name a tool hidden by ``include_tools``/``exclude_tools`` are left out.
        """
        from codebot_mcp.core.tools.sources import without_hidden_tools

        sections = [
            f"## {c.name}\n{without_hidden_tools(c.info.instructions, c.hidden_tools).strip()}"
            for c in self.connected()
            if c.info is not None and c.info.instructions and c.info.instructions.strip()
        ]
        return "\n\n".join(sections)

    def status(self) -> list[ServerStatus]:
        """Every configured server, sorted by name, from the last handshake and listing."""
        results: dict[str, ServerStatus] = {}
        for name, client in self.clients.items():
            if client.connected:
                protocol = client.info.protocol_version if client.info else None
                stale = client.relist_error if client.tools_stale else None
                results[name] = ServerStatus(
                    name, "connected", client.config, len(client.tools), protocol, stale=stale
                )
            else:
                failure = client.failure
                state: Status = "pending"
                if failure is not None:
                    state = "needs login" if failure.needs_login else "failed"
                results[name] = ServerStatus(name, state, client.config, failure=failure)
        for name, config in self.servers.items():
            if name in results:
                continue
            failure = self._config_failures.get(name)
            if not config.enabled:
                results[name] = ServerStatus(name, "disabled", config)
            elif failure is not None:
                results[name] = ServerStatus(name, "failed", config, failure=failure)
        return [results[n] for n in sorted(results)]

    # -- resources and prompts (the rest of core.tools.sources.ServerSource) ------------------

    def _selected_clients(self, server: str | None) -> list[Client]:
        from codebot_mcp.mcpbridge.connection.remote_resources import find_client

        if server is not None:
            return [find_client(self.clients, server)]
        return [c for c in self.connected() if c.connected]

    async def resources(self, server: str | None = None) -> list[ResourceInfo]:
        """Every resource and template of one or all connected servers, sorted by server then
        URI (resources before templates).

        Raises:
            UsageError: ``server`` is not configured.
            ServerError: it is not connected, or the listing failed.
        """
        from codebot_mcp.mcpbridge.connection.remote_resources import list_resources

        out: list[ResourceInfo] = []
        for client in self._selected_clients(server):
            out += await list_resources(client)
        return sorted(out, key=lambda r: (r.server, r.template, r.uri))

    async def read_resource(self, server: str, uri: str) -> list[ResourceContent]:
        """Read one resource of ``server`` (and subscribe to its updates where offered).

        Raises:
            UsageError: ``server`` is not configured.
            ServerError: it is not connected, or the read failed.
        """
        from codebot_mcp.mcpbridge.connection import remote_resources

        client = remote_resources.find_client(self.clients, server)
        parts = await remote_resources.read_resource(client, uri)
        try:
            await remote_resources.subscribe(client, uri)
        except Exception:  # boundary: updates are a convenience; the read succeeded
            pass
        return parts

    async def prompts(self, server: str | None = None) -> list[PromptInfo]:
        """Every prompt of one or all connected servers, sorted by server then name.

        Raises:
            UsageError: ``server`` is not configured.
            ServerError: it is not connected, or the listing failed.
        """
        from codebot_mcp.mcpbridge.connection.remote_resources import list_prompts

        out: list[PromptInfo] = []
        for client in self._selected_clients(server):
            out += await list_prompts(client)
        return sorted(out, key=lambda p: (p.server, p.name))

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str]
    ) -> list[PromptMessage]:
        """Render one prompt of ``server``.

        Raises:
            UsageError: ``server`` is not configured.
            ServerError: it is not connected, or the server refused.
        """
        from codebot_mcp.mcpbridge.connection.remote_resources import find_client, get_prompt

        return await get_prompt(find_client(self.clients, server), name, arguments)

    async def complete(
        self,
        server: str,
        ref: str,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Completions for a prompt's or a template's argument; [] when none or on failure."""
        from codebot_mcp.mcpbridge.connection.remote_resources import complete

        client = self.clients.get(server)
        if client is None:
            return []
        return await complete(client, ref, argument, value, context)

    # -- skills served over MCP (core.tools.sources.SkillSource) --------------------------

    async def skills(self, *, refresh: bool = False) -> SkillListing:
        """The skill entries of every connected server that declares the skills extension,
        sorted by server then URI; listed once per connection unless ``refresh``. A server
        whose listing fails is recorded in the result, never raised. No file is read.
        """
        from codebot_mcp.core.errors import CodebotError
        from codebot_mcp.core.tools.sources import SkillListing
        from codebot_mcp.mcpbridge.connection import remote_skills as served

        targets = [c for c in self.connected() if c.connected and served.declares(c)]
        failures: dict[str, str] = {}

        async def one(client: Client) -> None:
            held = self._skills.get(client.name)
            if held is not None and held[0] is client and not refresh:
                return
            try:
                found, issues = await served.list_skills(client)
            except CodebotError as exc:
                self._skills.pop(client.name, None)
                failures[client.name] = exc.message
                return
            self._skills[client.name] = (client, found, issues)

        async with anyio.create_task_group() as tg:
            for client in targets:
                tg.start_soon(one, client)
        entries: list[SkillEntry] = []
        issues: list[str] = []
        for client in targets:
            held = self._skills.get(client.name)
            if held is not None and held[0] is client:
                entries += sorted(held[1], key=lambda e: e.uri)
                issues += [f"server '{client.name}': {line}" for line in held[2]]
        return SkillListing(tuple(entries), dict(sorted(failures.items())), tuple(issues))

    async def get_skill(self, server: str, uri: str) -> SkillEntry:
        """``skills/get`` on ``server`` for the skill whose ``SKILL.md`` is at ``uri``.

        Raises:
            UsageError: ``server`` is unknown or does not serve skills.
            ServerError: it is not connected, or it failed or refused.
        """
        from codebot_mcp.mcpbridge.connection import remote_skills as served
        from codebot_mcp.mcpbridge.connection.remote_resources import find_client

        client = find_client(self.clients, server)
        served.require_skills(client)
        return await served.get_skill(client, uri)

    async def read_skill_file(self, server: str, uri: str) -> bytes:
        """One file of a skill of ``server``, as raw bytes (``resources/read``).

        Raises:
            UsageError: ``server`` is unknown or does not serve skills.
            ServerError: it is not connected, or the read failed.
        """
        from codebot_mcp.mcpbridge.connection import remote_skills as served
        from codebot_mcp.mcpbridge.connection.remote_resources import find_client

        client = find_client(self.clients, server)
        served.require_skills(client)
        return await served.read_file(client, uri)


_Key = tuple[tuple[Any, str, bool, int, list[Any]], ...]
"""Per client: itself, its state, crashed, restarts left, and its listing (the list object)."""


def _offers(client: Client) -> bool:
    """Its tools are offered: a live connection, or a crashed stdio server that the next
    call will restart."""
    return client.connected or (client.crashed and client.restarts_left > 0)


def _relist_failure(client: Client, exc: Exception) -> str:
    """Why a re-list failed, in one line, secrets masked."""
    if isinstance(exc, TimeoutError):
        why = f"no answer within {client.config.timeout:g} s"
    else:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return client.redact(f"re-listing its tools after tools/list_changed failed: {why}")
