"""The hot path of ``mcp list`` and ``mcp call`` on stdio servers, without the MCP SDK.

Importing the SDK costs about 0.7 s of CPU (``from mcp import Client; import mcp_types``
against ``python -c pass``: 0.75 s against 0.02 s, peak 66 MB against 11 MB), and its layout
admits no partial import. So this path speaks the wire itself (:mod:`.lite_wire` over
:mod:`mcpbridge.transport.wire`, the framing, constants, era decision, tool filter and
capabilities the SDK path uses too) over the process :func:`mcpbridge.process.launch` started
(same environment, process group, log and shutdown). Tests record both paths' JSON-RPC on the
wire and compare it, with the server's log file and the number of ``tools/call`` sent.

Whether it earns its place, command by command (issue 20; whole-process figures against
server-everything, median of 10 runs after a warm-up, hot path and SDK path
(``CODEBOT_SDK_PATH=1``) in turn A B A B, on the shared 2-core machine at load 6-8):

======================  =====================  =====================  ==================
command                 hot path               SDK path               hot / SDK
======================  =====================  =====================  ==================
``mcp list --no-warm``  0.27 s CPU, 1.06 s     0.90 s CPU, 2.14 s     0.30 CPU, 0.50 wall
``mcp call --no-warm``  0.31 s CPU, 1.64 s     0.94 s CPU, 2.79 s     0.33 CPU, 0.56 wall
``--batch`` (1 / 100)   (SDK path)             0.90 / 0.97 s CPU      the import is paid once
warm ``mcp call``       (holder, no SDK here)  0.10 s CPU, 0.14 s     = ``--version`` (0.94)
======================  =====================  =====================  ==================

Decision: it stays for ``mcp list`` and ``mcp call`` (a third of the CPU, half the wall time,
40 % of the memory: 30 MB against 73 MB). ``--batch`` keeps the SDK path: a hundred calls cost
0.07 s of CPU more than one, so the import is paid once per batch, and a batch needs what the
hot path leaves to the SDK (restarts, tasks, every policy). The warm path needs neither: the
holder keeps the SDK connected and the client imports no SDK.

The transport is chosen before launch (:func:`usable`: every selected server is stdio,
enabled and valid). Failures are recorded as the SDK path records them, in the same
:class:`~mcpbridge.connection.failures.Failure` (a launch that fails, a handshake timeout, a
server that closes the connection during the handshake or the listing, a server the lock holds
back) and the same words (an unknown tool: ``failures.unknown_tool``). A server's request,
before the call or during it, is answered as the SDK path answers it (its version gate and
model, then the default policy: :meth:`.lite_wire.Connection.answer_server_request`). A
``server/discover`` answer that offers handshake-era versions only goes on with
``initialize``, as the SDK does.

What the hot path cannot read goes to the SDK path on the process it launched
(:class:`HandOverError`; ``Manager`` takes the process), so nothing is launched twice: a
2026-07-28 server's client adopts its ``server/discover`` result, a handshake-era server's
client gets the answer to the hot path's ``initialize`` replayed to its own
(``transport.probe.replay_initialize``), and a ``server/discover`` answer of another shape
(or a ``-32022``) leaves the client to make its own handshake on the process, once the
probe's own requests are answered. That covers a 2026-07-28 server that offers tasks (the SDK
path follows them), a listing of another shape, and an ``initialize`` or ``server/discover``
answer of another shape or an error. ``tests/mcpbridge/test_lite_wire.py`` counts the
launches and compares the wire with the SDK path's.

Once ``tools/call`` is sent nothing falls back: whatever the answer (input rounds, a bad
result, junk), it is this call's, or the SDK path would run the tool a second time.

It is a transport under the same API as the SDK path's (:mod:`mcpbridge.connection.contract`):
:class:`LiteClient` is a ``ToolClient`` (``mcp call``), :class:`LiteServers` a
``ServersClient`` (``mcp list``: every server launched and listed together, one
``ListedServer`` each), :class:`LiteServer` and :class:`LiteTool` are what
:mod:`mcpbridge.connection.report` reads of a server and a tool; :mod:`.route` chooses it and
hands over.

Size: one transport, the hot one: its tools, its listing, its run and its one call (the wire is in
:mod:`.lite_wire`, the results in :mod:`.results`).
"""

from __future__ import annotations

__all__ = [
    "HandOverError",
    "LiteClient",
    "LiteServers",
    "connect",
    "connect_all",
    "usable",
]

import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.errors import ServerError, UsageError
from codebot_mcp.core.secrets.redact import Redactor, entry_secrets
from codebot_mcp.core.tools.base import Origin, ToolInfo, ToolResult, normalize_schema
from codebot_mcp.mcpbridge.calls.lite_wire import (
    ClosedError,
    Connection,
    MalformedError,
    OtherShapeError,
    RpcError,
    TooManyRoundsError,
    UnreadableError,
)
from codebot_mcp.mcpbridge.calls.results import (
    plain_result,
    read_by_sdk,
    through_sdk,
    validate_output,
)
from codebot_mcp.mcpbridge.connection.contract import ListedServer, ServerInfo
from codebot_mcp.mcpbridge.connection.failures import (
    Failure,
    Stage,
    call_failure,
    closed_early,
    no_answer,
    not_jsonrpc,
    output_schema_failure,
    read_tail,
    too_many_rounds_failure,
    undeclared_task,
    unreadable_input,
)
from codebot_mcp.mcpbridge.tools.call_arguments import (
    first_problem,
    validator_for,
)
from codebot_mcp.mcpbridge.tools.capability import classify
from codebot_mcp.mcpbridge.tools.naming import allocate
from codebot_mcp.mcpbridge.transport.limits import default_tool_timeout
from codebot_mcp.mcpbridge.transport.process import (
    Initialized,
    LaunchError,
    Prelaunched,
    ServerProcess,
    launch,
)
from codebot_mcp.mcpbridge.transport.runlog import ServerLog
from codebot_mcp.mcpbridge.transport.wire import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    TASKS,
    split_tools,
)

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.tools.tool_pins import Pins

STDERR_DRAIN_SECONDS = 2.0
"""A server that closed its stdout: how long its stderr may take to reach the log (the tail
of the record), as the SDK path's stop waits for it to exit."""

# -- the tools and the servers (the same fields as MCPTool and Client) -----------------------


@dataclass
class LiteTool:
    """A listed tool with what ``mcp list`` and ``mcp call`` need of :class:`MCPTool`."""

    server: str
    raw: dict[str, Any]
    name: str
    name_reason: str | None = None
    _validator: Any = field(default=None, repr=False)

    @property
    def original_name(self) -> str:
        return str(self.raw["name"])

    @property
    def description(self) -> str:
        return self.raw.get("description") or self.raw.get("title") or ""

    def schema(self) -> dict[str, Any]:
        return normalize_schema(self.raw.get("inputSchema"))

    @property
    def info(self) -> ToolInfo:
        hints = self.raw.get("annotations") or {}
        permission = classify(
            self.original_name,
            self.raw.get("description"),
            read_only=hints.get("readOnlyHint"),
            destructive=hints.get("destructiveHint"),
            open_world=hints.get("openWorldHint"),
        )
        return ToolInfo(
            Origin.MCP, permission, server=self.server, original_name=self.original_name
        )

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        if self._validator is None:
            self._validator = validator_for(self.schema())
        return first_problem(self._validator, arguments, self.schema())


@dataclass
class LiteServer:
    """One server reached by the hot path, as :mod:`.report` reads a reached server
    (:class:`~mcpbridge.connection.contract.Reached`, as ``Client`` is one)."""

    config: ServerConfig
    connection: Connection
    tools: list[dict[str, Any]]
    handshake_ms: float
    dpop_state: str | None = None
    """Never known here: the hot path speaks stdio only."""

    @property
    def info(self) -> ServerInfo:
        """The handshake's facts, the record the SDK path makes."""
        conn = self.connection
        return ServerInfo(
            conn.protocol_version,
            conn.server_info.get("name"),
            conn.server_info.get("version"),
            conn.capabilities,
            conn.instructions,
            self.handshake_ms,
        )


def name_tools(listed: list[LiteServer], *, apps: bool = False) -> list[LiteTool]:
    """Sorted by server then tool, named as ``Manager.tools()`` names them; with ``apps``
    the app-only tools instead, named as ``Manager.app_tools()`` names them."""
    pairs = [
        (item.config.name, tool)
        for item in sorted(listed, key=lambda i: i.config.name)
        for tool in _split(item, apps)
    ]
    names = allocate((server, tool["name"]) for server, tool in pairs)
    return [
        LiteTool(server, tool, n.name, n.reason)
        for (server, tool), n in zip(pairs, names, strict=True)
    ]


def _split(item: LiteServer, apps: bool) -> list[dict[str, Any]]:
    """The offered tools (or the app-only ones) by name, as ``Client.list_tools`` splits them."""
    config = item.config
    split = split_tools(
        sorted(item.tools, key=lambda t: t["name"]),
        config.include_tools,
        config.exclude_tools,
        name=lambda t: str(t["name"]),
        meta=lambda t: t.get("_meta"),
    )
    return split.apps if apps else split.offered


# -- running ----------------------------------------------------------------------------------


class HandOverError(Exception):
    """Servers go to the SDK path on the processes the hot path launched and discovered
    (nothing was called): ``Manager`` takes each process, its client adopts the server's
    ``server/discover`` result."""

    def __init__(
        self,
        processes: dict[str, ServerProcess],
        discovered: dict[str, dict[str, Any] | Initialized],
    ) -> None:
        super().__init__("handed over")
        self.processes = processes
        self.discovered = discovered

    @classmethod
    def one(cls, server: ServerProcess, connection: Connection) -> HandOverError:
        """``server`` after its handshake on ``connection``: the ``server/discover`` result
        (2026-07-28) or the answer to ``initialize`` (handshake era) goes with it; with
        neither (a ``server/discover`` answer only the SDK reads), the SDK path's client makes
        its own handshake on the process."""
        if connection.initialize_answer is not None:
            done = Initialized(connection.initialize_answer, notified=connection.initialized)
            return cls({server.name: server}, {server.name: done})
        if connection.modern:
            assert connection.discovered is not None  # modern: it discovered
            return cls({server.name: server}, {server.name: connection.discovered})
        return cls({server.name: server}, {})

    def prelaunched(self) -> Prelaunched:
        """What ``open_manager`` starts the servers' clients from."""
        return Prelaunched(dict(self.processes), discovered=dict(self.discovered))


def usable(servers: Mapping[str, ServerConfig]) -> bool:
    """True when every server is one the hot path can take (``CODEBOT_SDK_PATH=1``: none)."""
    if not servers or os.environ.get("CODEBOT_SDK_PATH") == "1":
        return False
    return all(
        c.type == "stdio"
        and c.enabled
        and c.error is None
        and c.protocol in ("auto", "legacy")
        and c.log_level is None  # the SDK path sends logging/setLevel
        for c in servers.values()
    )


class FailedError(Exception):
    """The server failed before the call (no answer within its ``timeout``, or it closed the
    connection): ``failure`` is the record the SDK path makes (``Client.run``), so nothing is
    launched a second time for it."""

    def __init__(self, config: ServerConfig, failure: Failure) -> None:
        super().__init__(failure.message)
        self.config = config
        self.failure = failure


def _failure(
    config: ServerConfig,
    stage: Stage,
    message: str,
    hint: str | None,
    log_file: Path | None = None,
    *,
    timed_out: bool = False,
) -> Failure:
    """The record ``Client._fail`` makes for the same failure (redacted, the stderr tail)."""
    redact = _redactor(config)
    return Failure(
        server=config.name,
        stage=stage,
        message=redact(message),
        hint=hint,
        stderr_tail=redact(read_tail(log_file)),
        log_file=log_file,
        timed_out=timed_out,
    )


def _launch_failure(config: ServerConfig, exc: LaunchError) -> Failure:
    """A server that could not be started, as ``Client.run`` records it (``explain``)."""
    return _failure(config, "launch", exc.message, exc.hint)


async def _connect(
    config: ServerConfig,
    server: ServerProcess,
    tg: Any,
    roots: Sequence[Path],
    *,
    sampler: bool,
) -> LiteServer:
    started = time.perf_counter()
    log = ServerLog(server.note, _redactor(config))
    connection = Connection(server, roots, log, sampler=sampler)
    drained = anyio.Event()

    async def pump_stderr() -> None:
        try:
            await server.pump_stderr()
        finally:
            drained.set()

    tg.start_soon(connection.pump)
    tg.start_soon(pump_stderr)
    stage: Stage = "handshake"
    closed = False
    with anyio.move_on_after(config.timeout) as scope:
        try:
            await connection.handshake(config.protocol)
            stage = "list"
            tools = await connection.list_tools()
        except ClosedError:
            closed = True
        except OtherShapeError:
            # An answer of another shape: the SDK path goes on on this process, with the
            # handshake's answer when there is one (discover adopted, initialize replayed),
            # else from its own handshake once the probe's requests are answered; it reads,
            # or words, the rest with its model. No second launch.
            await connection.settle_probe()
            raise HandOverError.one(server, connection) from None
    if closed:  # as Client.run records it, its stderr tail whole: no second launch
        with anyio.move_on_after(STDERR_DRAIN_SECONDS):
            await drained.wait()
        message, hint = closed_early(config)
        raise FailedError(config, _failure(config, stage, message, hint, server.log_file))
    if scope.cancelled_caught:
        message, hint = no_answer(config)
        failure = _failure(config, stage, message, hint, server.log_file, timed_out=True)
        raise FailedError(config, failure)
    return LiteServer(config, connection, tools, (time.perf_counter() - started) * 1000)


def _redactor(config: ServerConfig) -> Redactor:
    """The server's secrets, as ``Client.redact`` holds them."""
    return Redactor([*entry_secrets(config), *config.oauth.secrets])


def _leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    """The exception that matters in a task group's group: ours first, then any other."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(reversed(exc.exceptions))
        else:
            leaves.append(exc)
    mine = (OtherShapeError, HandOverError, UsageError, ServerError, RuntimeError)
    return next((e for e in leaves if isinstance(e, mine)), leaves[0] if leaves else group)


class LiteServers:
    """The hot path's transport of :class:`~mcpbridge.connection.contract.ServersClient`:
    every stdio server of ``mcp list``, launched here and listed together (:func:`connect_all`
    makes it and stops them).

    What only the SDK path reads goes to it on the processes launched here: :attr:`handed`,
    set by :meth:`start` (an answer of another shape); :meth:`listing` then shows the others.
    A server that cannot start, times out or is held back by the pins is a failed server, as
    on the SDK path."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        roots: Sequence[Path],
        pins: Pins | None,
        tg: Any,
    ) -> None:
        self.servers = servers
        self.roots = roots
        self.pins = pins
        self._tg = tg
        self.processes: list[tuple[ServerConfig, ServerProcess]] = []
        self.reached: list[LiteServer] = []
        self.failed: list[ListedServer] = []
        self.handed: HandOverError | None = None

    async def start(self) -> None:
        for config in self.servers.values():
            try:
                self.processes.append((config, await launch(config)))
            except LaunchError as exc:  # recorded as the SDK path records it: no second launch
                self._fail(config, _launch_failure(config, exc))
        handed: list[HandOverError] = []

        async def one(config: ServerConfig, server: ServerProcess) -> None:
            try:
                reached = await _connect(config, server, self._tg, self.roots, sampler=False)
            except FailedError as exc:
                self._fail(config, exc.failure)
            except HandOverError as exc:
                handed.append(exc)
            else:
                held = _held_back(reached, self.pins)
                if held is None:
                    self.reached.append(reached)
                else:  # never offered: a failed server, as the SDK path shows it
                    self._fail(config, held, reached)

        async with anyio.create_task_group() as connecting:
            for config, server in self.processes:
                connecting.start_soon(one, config, server)
        if handed:
            processes = {n: p for exc in handed for n, p in exc.processes.items()}
            discovered = {n: d for exc in handed for n, d in exc.discovered.items()}
            self.handed = HandOverError(processes, discovered)

    def _fail(self, config: ServerConfig, failure: Failure, reached: Any = None) -> None:
        self.failed.append(ListedServer(config.name, "failed", config, reached, failure=failure))

    def listing(self) -> list[ListedServer]:
        tools = name_tools(self.reached)
        app_tools = name_tools(self.reached, apps=True)
        connected = [
            ListedServer(
                item.config.name,
                "connected",
                item.config,
                item,
                [t for t in tools if t.server == item.config.name],
                [t for t in app_tools if t.server == item.config.name],
            )
            for item in self.reached
        ]
        return sorted([*connected, *self.failed], key=lambda s: s.name)


@asynccontextmanager
async def connect_all(
    servers: Mapping[str, ServerConfig],
    *,
    roots: Sequence[Path] = (),
    pins: Pins | None = None,
) -> AsyncIterator[LiteServers]:
    """:class:`LiteServers` for ``servers`` (not yet started); ``roots`` answer
    ``roots/list``. On exit our reading stops and the servers are stopped, except those
    handed over (:attr:`LiteServers.handed`)."""
    group: LiteServers | None = None
    try:
        async with anyio.create_task_group() as tg:
            group = LiteServers(servers, roots, pins, tg)
            try:
                yield group
            except BaseException:
                group.handed = None  # nobody takes them: every process is stopped
                raise
            finally:
                tg.cancel_scope.cancel()  # our reading stops; handed processes run on
    except BaseExceptionGroup as exc_group:
        raise _leaf(exc_group) from None
    finally:
        if group is not None:
            kept = group.handed.processes if group.handed is not None else {}
            await _stop_all([p for c, p in group.processes if c.name not in kept])


async def _stop_all(launched: list[ServerProcess]) -> None:
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for server in launched:
                tg.start_soon(server.stop)


class LiteClient:
    """The hot path's transport of :class:`~mcpbridge.connection.contract.ToolClient`: one
    stdio server, launched here, for one call (:func:`connect` makes it and stops it).

    What only the SDK path reads goes to it on this process: :attr:`handed`, set by
    :meth:`start` before anything is called (an answer of another shape; a 2026-07-28 server
    that offers tasks, which the SDK path follows)."""

    def __init__(
        self, config: ServerConfig, roots: Sequence[Path], pins: Pins | None, tg: Any
    ) -> None:
        self.config = config
        self.roots = roots
        self.pins = pins
        self._tg = tg
        self.process: ServerProcess | None = None
        self.server: LiteServer | None = None
        self.failure: Failure | None = None
        self.handed: HandOverError | None = None

    async def start(self) -> None:
        config = self.config
        try:
            self.process = await launch(config)
        except LaunchError as exc:  # recorded as the SDK path records it: no second launch
            self.failure = _launch_failure(config, exc)
            return
        try:
            server = await _connect(config, self.process, self._tg, self.roots, sampler=True)
        except FailedError as exc:
            self.failure = exc.failure
            return
        except HandOverError as exc:  # a listing the SDK path reads (its pins check too)
            self.handed = exc
            return
        self.failure = _held_back(server, self.pins)
        if self.failure is None and server.connection.modern and _offers_tasks(server.connection):
            # The server may answer with a task (SEP-2663), which the SDK path follows: hand
            # the call over now, before tools/call is sent, never after, with the running
            # process and its discover result (no second launch or handshake).
            self.handed = HandOverError.one(self.process, server.connection)
        elif self.failure is None:
            self.server = server

    def tools(self) -> list[LiteTool]:
        if self.server is None:
            return []
        return name_tools([self.server]) + name_tools([self.server], apps=True)

    async def call(self, tool: LiteTool, arguments: dict[str, Any]) -> ToolResult:
        assert self.server is not None  # started, neither failed nor handed over
        return await _call(self.server.connection, self.config, tool, arguments)


@asynccontextmanager
async def connect(
    config: ServerConfig, *, roots: Sequence[Path] = (), pins: Pins | None = None
) -> AsyncIterator[LiteClient]:
    """A :class:`LiteClient` for ``config``'s server (not yet started); on exit our reading
    stops and the server is stopped, unless it was handed over (:attr:`LiteClient.handed`)."""
    client: LiteClient | None = None
    try:
        async with anyio.create_task_group() as tg:
            client = LiteClient(config, roots, pins, tg)
            try:
                yield client
            finally:
                tg.cancel_scope.cancel()  # our reading stops; a handed process runs on
    except BaseExceptionGroup as group:
        raise _leaf(group) from None
    finally:
        if client is not None and client.process is not None and client.handed is None:
            await _stop_all([client.process])


def _held_back(item: LiteServer, pins: Pins | None) -> Failure | None:
    """The failure (stage "lock") when the pins hold the server back: the one check,
    ``Pins.check``, on the offered tools as the wire has them, recorded as ``Client.run``
    records it; None when its tools may be offered."""
    if pins is None:
        return None
    from codebot_mcp.mcpbridge.tools.tool_pins import raw_definition

    offered = {str(t["name"]): raw_definition(t) for t in _split(item, apps=False)}
    version = item.connection.server_info.get("version")
    held = pins.check(item.config.name, version, offered)
    if held is None:
        return None
    return _failure(item.config, "lock", held.message, held.hint, item.connection.server.log_file)


def _offers_tasks(connection: Connection) -> bool:
    """The server's ``server/discover`` lists the tasks extension."""
    extensions = connection.capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS in extensions


async def _call(
    connection: Connection, config: ServerConfig, tool: LiteTool, arguments: dict[str, Any]
) -> ToolResult:
    redact = _redactor(config)
    name = tool.original_name
    connection.calling = True  # from here on nothing falls back: the tool may run
    limit = config.tool_timeout or default_tool_timeout()
    try:
        result = await connection.call_tool(name, arguments, limit)
    except TimeoutError:
        code, message = REQUEST_TIMEOUT, "timed out"
    except ClosedError:
        code, message = CONNECTION_CLOSED, "Connection closed"
    except RpcError as exc:
        code, message = exc.code, exc.message
    except MalformedError as exc:
        raise not_jsonrpc(config.name, name, str(exc)).error() from None
    except TooManyRoundsError:
        raise too_many_rounds_failure(config.name, name).error() from None
    except UnreadableError as exc:  # the SDK's model says what is wrong with it, as on its path
        read_by_sdk(exc.result, config, name, version=connection.protocol_version)
        raise unreadable_input(config.name, name).error() from None  # the model took it
    else:
        return _result(connection, config, tool, result, redact)
    raise call_failure(code, redact(message), config, name).error()


def _result(
    connection: Connection,
    config: ServerConfig,
    tool: LiteTool,
    result: dict[str, Any],
    redact: Redactor,
) -> ToolResult:
    """The tool's result, as ``call_once`` reads the SDK's (a task nobody declared is an
    error: the tool runs on, and calling again would start it a second time)."""
    name = tool.original_name
    if connection.modern and result.get("resultType") == "task":
        raise undeclared_task(config.name, name).error()
    # The SDK reads the result with its model first, then checks it against the output schema.
    version = connection.protocol_version
    read = plain_result(result) or through_sdk(result, config, name, version=version)
    try:
        validate_output(name, tool.raw.get("outputSchema"), result)
    except RuntimeError as exc:  # as call_once words the SDK's own check
        raise output_schema_failure(config.name, name, redact(str(exc))).error() from None
    return read
