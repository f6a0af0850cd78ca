"""One MCP server connection, stdio or Streamable HTTP, owned by one lifecycle task.

The handshake is bounded by the server's ``timeout``; the connection itself lives until
:meth:`Client.stop`. :meth:`Client.run` is the lifecycle task: it enters the SDK's context
managers, lists the tools, signals ``ready``, waits for ``stop``, and exits the context
managers in the same task (anyio requires it). It never raises: failures are recorded.

Size: one connection's lifecycle, operations and their failures, which share the lifecycle
task's state (the session, the process, the restart still due, the size cap, the auth trace);
the wording of failures is :mod:`.explain`'s, the requests a server sends :mod:`.features`'.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp_types as types
from mcp import Client as SDKClient
from mcp.client.streamable_http import streamable_http_client

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.secrets.redact import Redactor, entry_secrets
from codebot_mcp.core.telemetry.scope import MCP_SCOPE, server_scope, tool_call
from codebot_mcp.mcpbridge._sdk import Transport, TransportStreams
from codebot_mcp.mcpbridge.auth import LoginOptions, ServerAuth
from codebot_mcp.mcpbridge.connection.contract import ServerInfo
from codebot_mcp.mcpbridge.connection.explain import explain, explain_auth, explain_call
from codebot_mcp.mcpbridge.connection.failures import (
    CallFailure,
    Failure,
    Stage,
    no_answer,
    read_tail,
)
from codebot_mcp.mcpbridge.connection.features import Features
from codebot_mcp.mcpbridge.connection.serverinfo import (
    client_extensions,
    client_info,
    server_info,
)
from codebot_mcp.mcpbridge.connection.tasks import TaskHooks, TasksExtension, calling, done_calling
from codebot_mcp.mcpbridge.transport.limits import default_tool_timeout, http_timeout
from codebot_mcp.mcpbridge.transport.probe import guard_discover, replay_initialize
from codebot_mcp.mcpbridge.transport.process import (
    Initialized,
    LaunchError,
    ServerProcess,
    exited,
    launch,
)
from codebot_mcp.mcpbridge.transport.stdio import stdio_transport
from codebot_mcp.mcpbridge.transport.wire import MAX_LIST_PAGES, split_tools

if TYPE_CHECKING:
    from codebot_mcp.core.httpcap import AnswerCap
    from codebot_mcp.core.tools.useragent import Sampling, UserAgent
    from codebot_mcp.mcpbridge.tools.tool_pins import Held, Pins

logger = logging.getLogger(__name__)

MAX_RESTARTS = 1
"""How often a stdio server that crashed is restarted on the next call, per session."""
EXIT_CODE_WAIT = 0.5
"""After a server's stdout ends, how long to wait for its exit code (for the message)."""
State = Literal["pending", "connected", "failed", "stopped"]


class Client:
    """A connection to one configured MCP server."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        process: ServerProcess | LaunchError | None = None,
        adopt: dict[str, Any] | Initialized | None = None,
        spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None] | None = None,
        agent: UserAgent | None = None,
        sampler: Sampling | None = None,
        login: LoginOptions | None = None,
        in_process: Any = None,
        pins: Pins | None = None,
    ) -> None:
        self.config = config
        self.pins = pins
        """The project's lock: a server whose tools drifted from it is held back (stage
        "lock") when it connects and when it re-lists (``mcpbridge.tools.tool_pins``)."""
        self.agent = agent
        """Answers elicitation, sampling and roots requests; None declares none of them."""
        self.name = config.name
        self.state: State = "pending"
        self.failure: Failure | None = None
        self.info: ServerInfo | None = None
        self.tools: list[types.Tool] = []
        """The server's tools after include/exclude filters, app-only ones left out, in
        listing order: what the model may be offered."""
        self.hidden_tools: tuple[str, ...] = ()
        """Tools the server offers that include_tools/exclude_tools hide, and app-only tools
        (their instructions are left out of the prompt too)."""
        self.app_tools: list[types.Tool] = []
        """Selected tools whose ``_meta.ui.visibility`` leaves out "model" (MCP Apps): never
        offered to the model; ``mcp list --all`` shows them, ``mcp call`` may call them."""
        self.tools_stale = False
        """The tool list changed (or may have) since the last listing: the one flag."""
        self.relist_error: str | None = None
        """Why the last re-list after a change notification failed (None: it did not)."""
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self._stop = anyio.Event()
        self._handshake: anyio.CancelScope | None = None
        """The scope bounding connect and first listing; stop() cancels it (Ctrl-C, exit)."""
        self._stage: Stage = "launch"
        self._session: SDKClient | None = None
        self._prelaunched = process
        self._adopt = adopt
        """The ``server/discover`` result the hot path got from ``process`` (2026-07-28): the
        session adopts it (the SDK's ``prior_discover``) instead of a second handshake; or
        the answer to its ``initialize`` (handshake era), replayed to the session's own."""
        self._process: ServerProcess | None = None
        self._spawn = spawn
        self._in_process = in_process
        """An SDK ``Server``/``MCPServer`` served in this process instead of the configured
        command or URL (the SDK's in-memory transport; the tests' fast tier)."""
        self.crashed = False
        """The server exited while connected (stdio); the next call restarts it, once."""
        self._was_up = False
        """This launch got connected: only then is its end a crash (a server that failed its
        handshake or listing was not connected, and is not restarted as if it had crashed)."""
        self.restarts_left = MAX_RESTARTS
        self.redact = Redactor([*entry_secrets(config), *config.oauth.secrets])
        self.features = Features(
            config,
            self.redact,
            agent=agent,
            sampler=sampler,
            process=lambda: self._process,
            info=lambda: self.info,
        )
        """Requests, log, progress and change flags beyond tools (a helper it owns)."""
        self.tasks = TaskHooks(self.name, progress=self._task_progress, redact=self.redact)
        """How this connection's tasks (SEP-2663) report and end; the manager fills it in."""
        self._cap: AnswerCap | None = None
        self._http_session: str | None = None
        self.login = login  # this run may open the browser (--login, mcp login)
        self.auth = ServerAuth(config, login)
        self.auth.on_wait = self._waiting_on_user

    def oversized(self) -> bool:
        """True once an HTTP answer of this server went over the size cap (and was dropped)."""
        return bool(self._cap is not None and self._cap.tripped)

    # -- lifecycle -----------------------------------------------------------------------

    async def run(self) -> None:
        """The lifecycle task: connect, list, serve until stopped. Never raises."""
        started = time.perf_counter()
        MCP_SCOPE.set(server_scope(self.config))  # this task's requests (spans: core.telemetry)
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.config.timeout) as scope:
                self._handshake = scope
                if self._stop.is_set():
                    scope.cancel()
                async with AsyncExitStack() as stack:
                    session = await self._connect(stack)
                    self.auth.after_connect()
                    self.redact.add(self.auth.secrets())
                    self.info = server_info(session, started)
                    self._stage = "list"
                    self.tools = await self.list_tools(session)
                    held = self.pin_problem()
                    if held is not None:  # a rug pull: never offered, the connection closes
                        self.tools, self.app_tools = [], []
                        self._fail("lock", held.message, held.hint)
                    else:
                        self._session = session
                        self.state = "connected"
                        self._was_up = True
                        scope.deadline = math.inf  # the handshake is over; the connection lives
                        self.ready.set()
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(self._listen, session)
                            if self._process is not None:
                                tg.start_soon(self._watch_exit, self._process)
                            await self._stop.wait()
                            tg.cancel_scope.cancel()
            if scope.cancelled_caught and self.state == "pending" and self._stop.is_set():
                self._fail(self._stage, "stopped before the handshake finished")
            elif scope.cancelled_caught and self.state == "pending" and not self._auth_problem():
                message, hint = no_answer(self.config)
                stage = "handshake" if self._stage == "launch" else self._stage
                self._fail(stage, message, hint=hint, timed_out=True)
        except anyio.get_cancelled_exc_class():
            self._fail(self._stage, "cancelled")
            raise
        except Exception as exc:  # boundary: any failure of one server is recorded, not raised
            self.redact.add(self.auth.secrets())
            if not self._auth_problem(exc):
                self._fail(self._stage, *explain(exc, self.config))
        finally:
            self._session = None
            self._handshake = None
            if self.state == "connected":
                self.state = "stopped"
            self.ready.set()
            self.done.set()

    def pin_problem(self) -> Held | None:
        """Whether the listed tools hold this server back (:class:`Pins`); None: they may be
        offered (no lock, ``--allow-drift``, or as pinned)."""
        if self.pins is None:
            return None
        from codebot_mcp.mcpbridge.tools.tool_pins import sdk_definition

        version = self.info.version if self.info else None
        return self.pins.check(self.name, version, {t.name: sdk_definition(t) for t in self.tools})

    def hold(self, held: Held) -> None:
        """A re-listing drifted from the lock (a rug pull mid-session): the tools go at once
        and the connection closes; the server stays failed (stage "lock")."""
        self.tools, self.app_tools = [], []
        self._fail("lock", held.message, held.hint)
        self._session = None
        self._stop.set()

    async def stop(self) -> None:
        """Ask the lifecycle task to close the connection, and wait until it has.

        A handshake still in progress is abandoned rather than awaited (its timeout can be
        long), so Ctrl-C or an exit during startup is not held up by a slow server.
        """
        self._stop.set()
        if self._handshake is not None and self.state == "pending":
            self._handshake.cancel()
        await self.done.wait()

    async def _watch_exit(self, process: ServerProcess) -> None:
        """A stdio server that exits while connected is recorded as crashed."""
        await process.closed.wait()
        if self._stop.is_set():
            return  # our own shutdown
        await exited(process.process, EXIT_CODE_WAIT)  # stdout ends just before the exit
        self._note_crash()

    def _note_crash(self) -> bool:
        """True when the server crashed: its stdout ended while connected, and not by our
        stop. Recorded the moment it is seen (the exit code, if already known, with it), so a
        call that comes at once, before :meth:`_watch_exit` has had the exit code, restarts it
        as promised rather than failing on the dead connection."""
        if self.crashed:
            return True
        process = self._process
        if process is None or not self._was_up:
            return False
        if not process.closed.is_set() or self._stop.is_set():
            return False
        returncode = process.process.returncode
        code = f" (exit code {returncode})" if returncode is not None else ""
        self._fail(
            "call",
            f"the server exited while connected{code}",
            hint=f"The next call restarts it once. Its stderr is in {process.log_file}.",
        )
        self.crashed = True
        self._session = None  # no call may use the dead connection from here on
        self._stop.set()
        return True

    async def restart_if_crashed(self) -> bool:
        """Restart a crashed stdio server once per session; True when it is connected again."""
        if not self._note_crash() or self.restarts_left <= 0 or self._spawn is None:
            return self.connected
        self.restarts_left -= 1
        await self.done.wait()
        self.state, self.failure, self.crashed, self._was_up = "pending", None, False, False
        self.ready, self.done, self._stop = anyio.Event(), anyio.Event(), anyio.Event()
        self._stage = "launch"
        self._spawn(self.run)
        await self.ready.wait()
        if self.connected:
            self._mark_stale()  # the restarted server may list other tools
        return self.connected

    @property
    def connected(self) -> bool:
        """True while the connection is up."""
        return self.state == "connected"

    @property
    def session(self) -> SDKClient:
        """The live SDK client; raises when the server is not connected."""
        if self._session is None:
            reason = self.failure.message if self.failure else "it is not connected"
            raise ConnectionError(f"server '{self.name}' is not available: {reason}")
        return self._session

    # -- operations ----------------------------------------------------------------------

    async def list_tools(self, session: SDKClient | None = None) -> list[types.Tool]:
        """All pages of ``tools/list``, filtered by include/exclude and app-only tools left
        out (both noted: :attr:`hidden_tools`, :attr:`app_tools`)."""
        tools = await self.list_all_tools(session)
        split = split_tools(
            tools,
            self.config.include_tools,
            self.config.exclude_tools,
            name=lambda t: t.name,
            meta=lambda t: t.meta,
        )
        self.app_tools, self.hidden_tools = split.apps, split.hidden
        return split.offered

    async def list_all_tools(
        self, session: SDKClient | None = None, *, cached: bool = False
    ) -> list[types.Tool]:
        """All pages of ``tools/list`` (at most ``MAX_LIST_PAGES``), before any filter;
        ``cached``: the SDK's response cache may serve the first page (``mcp doctor``), as
        the offer's listings may not (a reopened listen stream evicts nothing)."""
        session = session or self.session
        mode: Literal["use", "refresh"] = "use" if cached else "refresh"
        tools: list[types.Tool] = []
        cursor: str | None = None
        # A server may announce list_changed and then never answer: the listing is bounded by
        # the handshake timeout, at start and on every re-list.
        with anyio.fail_after(self.config.timeout):
            for _ in range(MAX_LIST_PAGES):
                page = await session.list_tools(cursor=cursor, cache_mode=mode)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Call one tool within ``tool_timeout``; a crashed server is restarted once first.

        Protocol errors raise ``MCPError``; tool errors come back in the result.
        """
        await self.restart_if_crashed()
        token = calling(name, arguments or {})  # a task the call turns into is journaled
        version = self.info.protocol_version if self.info is not None else None
        session = self._http_session
        try:
            with tool_call(self.config, version, name, session):  # its span's attributes
                return await self.session.call_tool(
                    name,
                    arguments,
                    read_timeout_seconds=self.tool_timeout,
                    progress_callback=self.features.progress_callback(),
                )
        finally:
            done_calling(token)

    def call_failure(self, exc: Exception, tool: str, model_name: str) -> CallFailure:
        """What :meth:`call_tool` raised, as the one record of the call's failure (the
        restart still due, the size cap, the authorization trace of this connection)."""
        return explain_call(
            exc,
            self.config,
            tool,
            model_name=model_name,
            redact=self.redact,
            restarts=self.restarts_left > 0,
            oversized=self.oversized(),
            trace=self.auth.trace,
        )

    async def resume_task(self, record: dict[str, Any]) -> types.CallToolResult:
        """Follow a task a previous run started (``--continue``) to its end.

        Raises:
            MCPError: the server no longer knows the task, or it failed.
            ConnectionError: the server is not connected.
        """
        from codebot_mcp.mcpbridge.connection.tasks import resume

        return await resume(self.session.session, record, self.tasks, self.tool_timeout)

    def _task_progress(self, value: float, message: str) -> None:
        hook = self.features.on_progress
        if hook is not None:
            hook(self.name, value, None, message)

    @property
    def tool_timeout(self) -> float:
        """Seconds one call may take: ``tool_timeout`` of the entry, else the default."""
        return self.config.tool_timeout or default_tool_timeout()

    @property
    def log_file(self) -> Path | None:
        """Where this server's stderr (stdio) or messages (HTTP) are logged, once known."""
        if self._process is not None:
            return self._process.log_file
        return self.features.log_file

    @property
    def dpop_state(self) -> str | None:
        """How this server's tokens are bound (:class:`.contract.Reached`)."""
        return self.auth.dpop_state

    @property
    def session_if_connected(self) -> SDKClient | None:
        """The SDK session while connected (roots/list_changed goes through it)."""
        return self._session if self.connected else None

    @property
    def process(self) -> ServerProcess | None:
        """The stdio server's process (None for HTTP and in-process servers)."""
        return self._process

    # -- internals -----------------------------------------------------------------------

    async def _connect(self, stack: AsyncExitStack) -> SDKClient:
        config = self.config
        extra: dict[str, Any] = {}
        if self._in_process is not None:
            self._stage = "handshake"
            session = SDKClient(
                self._in_process,
                mode=config.protocol,
                client_info=client_info(),
                message_handler=self._on_message,
                extensions=[*client_extensions(), TasksExtension(self.tasks)],  # tasks: SEP-2663
            )
            return await stack.enter_async_context(session)
        if config.type == "http":
            transport = await self._http_transport(stack)
            mode = config.protocol
        else:
            transport = await self._stdio_transport()
            mode = config.protocol
            adopted, self._adopt = self._adopt, None  # once: a restart handshakes anew
            if isinstance(adopted, Initialized):  # handshake era: its answer replayed
                transport = replay_initialize(transport, adopted)
                mode = "legacy"
            elif adopted is not None:
                prior = types.DiscoverResult.model_validate(adopted, by_name=False)
                mode = "2026-07-28"  # the version the hot path spoke (wire.MODERN_VERSION)
                extra["prior_discover"] = prior
            elif mode == "auto":
                transport = guard_discover(transport)
        session = SDKClient(
            self._staged(transport),
            mode=mode,
            client_info=client_info(),
            message_handler=self._on_message,
            extensions=[*client_extensions(), TasksExtension(self.tasks)],  # tasks: SEP-2663
            **self.features.sdk_callbacks(),
            **extra,
        )
        client = await stack.enter_async_context(session)
        await self.features.set_log_level(client)
        return client

    @asynccontextmanager
    async def _staged(self, transport: Transport) -> AsyncIterator[TransportStreams]:
        """Marks "launch" -> "handshake" once open; defaults ``resultType`` (see resulttype)."""
        from codebot_mcp.mcpbridge.transport.resulttype import default_result_type

        async with transport as streams:
            self._stage = "handshake"
            yield default_result_type(streams)

    async def _stdio_transport(self) -> Transport:
        launched = self._prelaunched
        self._prelaunched = None
        if isinstance(launched, LaunchError):
            raise launched
        server = launched or await launch(self.config)
        self._process = server
        return stdio_transport(server)

    async def _http_transport(self, stack: AsyncExitStack) -> Transport:
        from codebot_mcp.mcpbridge.transport.limits import answer_cap

        self._cap = answer_cap()  # the stdio cap on one message holds over HTTP too
        headers = dict(self.config.headers)
        http = await self.auth.http_client(stack, headers, http_timeout(), self._cap)
        http.event_hooks["response"].append(self._note_session)
        assert self.config.url is not None
        return streamable_http_client(self.config.url, http_client=http)

    async def _note_session(self, response: Any) -> None:
        """Keep the server's latest ``Mcp-Session-Id`` (handshake-era HTTP), for telemetry."""
        self._http_session = response.headers.get("mcp-session-id") or self._http_session

    def _auth_problem(self, exc: BaseException | None = None) -> bool:
        """Record an authorization failure, if the trace shows one; True when it did."""
        problem = explain_auth(exc, self.config, self.auth.trace)
        if problem is None:
            return False
        self._fail("auth", problem.message, problem.hint, needs_login=problem.needs_login)
        return True

    def _waiting_on_user(self, waiting: bool) -> None:
        """No handshake deadline while the user is in the browser (the login has its own)."""
        scope = self._handshake
        if scope is None or self.state != "pending":
            return
        scope.deadline = math.inf if waiting else anyio.current_time() + self.config.timeout

    async def _listen(self, session: SDKClient) -> None:
        await self.features.listen(session, self._mark_stale)

    async def _on_message(self, message: Any) -> None:
        """Handshake-era notifications; only marks state, never does I/O."""
        if isinstance(message, types.ToolListChangedNotification):
            self._mark_stale()
        elif self.features.note(message):
            pass
        elif isinstance(message, Exception):
            logger.debug("server %s: transport error: %s", self.name, message)

    def _mark_stale(self) -> None:
        self.tools_stale = True

    def _fail(
        self,
        stage: Stage,
        message: str,
        hint: str | None = None,
        *,
        timed_out: bool = False,
        needs_login: bool = False,
    ) -> None:
        if self.state == "failed":
            return
        self.state = "failed"
        self.failure = Failure(
            server=self.name,
            stage=stage,
            message=self.redact(message),
            hint=hint,
            stderr_tail=self.redact(read_tail(self.log_file)),
            log_file=self.log_file,
            needs_login=needs_login,
            timed_out=timed_out,
        )
