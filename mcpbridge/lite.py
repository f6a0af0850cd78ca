"""The hot path of ``mcp list`` and ``mcp call`` on stdio servers, without the MCP SDK.

Measured (``python -X importtime``, a CPU profile): of a cold ``mcp list`` against
server-everything, importing the SDK is about 0.5 s of CPU (its pydantic models for two protocol
eras, and ``mcp.server`` pulled in by ``mcp.client``); the server answers in 0.13 s and the rest
is milliseconds. The SDK's package layout admits no partial import (``mcp/__init__`` imports
the client, the server and every model), so this path speaks the same newline-delimited
JSON-RPC the SDK does, message for message (``server/discover`` with the sentinel ``ping`` of
:mod:`mcpbridge.probe`, then ``initialize`` for handshake-era servers; the ``_meta`` envelope for
2026-07-28 ones), over the process :func:`mcpbridge.process.launch` started (same environment,
process group, stderr log and shutdown). Tests check its output against the SDK path's.

Only the plain case is handled here: every selected server is stdio, enabled and valid, the
handshake succeeds and the answers have the expected shape. Anything else raises
:class:`Fallback` before a tool is called, and the command runs the ordinary SDK path instead,
so failures, hints and messages stay exactly the cold path's.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from core import __version__
from core.errors import ServerError, UsageError
from core.redact import Redactor
from core.servers import ServerConfig
from core.tools import Permission, ToolResult, normalize_schema
from mcpbridge.capability import classify
from mcpbridge.naming import allocate
from mcpbridge.process import LaunchError, ServerProcess, launch
from mcpbridge.schemas import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    call_error,
    first_problem,
    plain_result,
    validator_for,
)

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
"""What the SDK (2.3) offers in each era; a test checks them against ``mcp_types``."""
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
METHOD_NOT_FOUND = -32601
SENTINEL_ID = "codebot-discover-sentinel"
PROBE_GRACE_SECONDS = 0.5
"""As :data:`mcpbridge.probe.GRACE_SECONDS`: after the ping's answer, the probe's wait."""
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""As :data:`mcpbridge.stdio.MAX_MESSAGE_BYTES` (checked by a test)."""
INTERNAL_ERROR = -32603
_ID_PATTERN = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
MAX_LIST_PAGES = 1000
_META = "_meta"


class Fallback(Exception):
    """This case is not for the hot path: run the SDK path instead (nothing was called yet)."""


class _Closed(Exception):
    """The server's stdout ended."""


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _envelope() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "codebot", "version": __version__},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


class Connection:
    """One JSON-RPC conversation over a launched stdio server."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.modern = False
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._next_id = 0
        self._waiting: dict[Any, anyio.Event] = {}
        self._answers: dict[Any, dict[str, Any]] = {}
        self._closed = False

    async def pump(self) -> None:
        """Read stdout; route answers to their requests; answer the server's pings.

        Lines are bounded as :mod:`mcpbridge.stdio` bounds them, with the same error answers
        for a line that is too large or not JSON (when its request id can be read).
        """
        stdout = self.server.process.stdout
        assert stdout is not None
        buffer = bytearray()
        dropped = 0  # > 0 while skipping the rest of an oversized line
        limit = MAX_MESSAGE_BYTES // 2**20
        try:
            while True:
                chunk = await stdout.receive()
                while chunk:
                    newline = chunk.find(b"\n")
                    part, chunk = (
                        (chunk, b"") if newline < 0 else (chunk[:newline], chunk[newline + 1 :])
                    )
                    if dropped:
                        dropped += len(part)
                    else:
                        buffer += part
                        if len(buffer) > MAX_MESSAGE_BYTES:
                            size = len(buffer)
                            self._error_for(
                                bytes(buffer[:4096]),
                                f"the server's answer is larger than {limit} MB "
                                f"(at least {size // 2**20} MB) and was dropped",
                            )
                            dropped = size
                            buffer.clear()
                    if newline >= 0:
                        if not dropped and buffer.strip():
                            await self._dispatch(bytes(buffer))
                        buffer.clear()
                        dropped = 0
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            self._closed = True
            self.server.closed.set()
            for event in self._waiting.values():
                event.set()

    def _error_for(self, head: bytes, message: str) -> None:
        """Answer the awaited request whose id starts ``head`` with an internal error."""
        if b'"method"' in head[:4096]:
            return
        match = _ID_PATTERN.search(head[:4096])
        if match is None:
            return
        try:
            request_id = json.loads(match.group(1))
        except ValueError:
            return
        if request_id in self._waiting:
            self._answers[request_id] = {"error": {"code": INTERNAL_ERROR, "message": message}}
            self._waiting.pop(request_id).set()

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            # As the SDK path: an answer we cannot read fails its request; other junk is skipped.
            self._error_for(line, "the server's answer is not valid JSON-RPC (not UTF-8 or JSON)")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise Fallback
        if "method" in message:
            if "id" in message:  # a request from the server: only ping is plain
                if message["method"] != "ping":
                    raise Fallback
                await self._send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return  # notifications change nothing for a one-shot command
        request_id = message.get("id")
        if request_id in self._waiting:
            self._answers[request_id] = message
            self._waiting.pop(request_id).set()

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.server.process.stdin
        assert stdin is not None
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        try:
            await stdin.send(data + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            raise _Closed from None

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send_request(self, method: str, params: dict[str, Any] | None) -> Any:
        """Send a request; the id to :meth:`answer` with."""
        request_id = self._new_id()
        self._waiting[request_id] = anyio.Event()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)
        return request_id

    async def answer(self, request_id: Any) -> dict[str, Any]:
        """The result of a request; ``_RpcError`` for an error answer, ``_Closed`` at EOF."""
        event = self._waiting.get(request_id)
        if event is not None:
            await event.wait()
        answer = self._answers.pop(request_id, None)
        if answer is None:
            raise _Closed
        if "error" in answer:
            error = answer["error"]
            if not isinstance(error, dict):
                raise Fallback
            raise _RpcError(int(error.get("code", 0)), str(error.get("message", "")))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise Fallback
        return result

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.modern:
            params = {**(params or {}), _META: _envelope()}
        return await self.answer(await self.send_request(method, params))

    async def handshake(self, mode: str) -> None:
        """``server/discover`` (auto) with the sentinel ping, or ``initialize`` (legacy)."""
        if mode == "auto" and await self._discover():
            return
        if mode not in ("auto", "legacy"):
            raise Fallback  # a pinned modern version: the SDK adopts it without a probe
        params = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "codebot", "version": __version__},
        }
        try:
            result = await self.request("initialize", params)
        except (_RpcError, _Closed):
            raise Fallback from None
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise Fallback
        self.protocol_version = str(version)
        self._facts(result, result.get("serverInfo"))
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _discover(self) -> bool:
        """True when the server speaks 2026-07-28; False when it is a handshake-era server."""
        discover_id = await self.send_request("server/discover", {_META: _envelope()})
        self._waiting[SENTINEL_ID] = anyio.Event()
        await self._send({"jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping"})
        outcome: dict[str, Any] = {}

        async def probe() -> None:
            try:
                outcome["result"] = await self.answer(discover_id)
            except _RpcError as exc:
                outcome["error"] = exc
            except _Closed:
                outcome["closed"] = True
            tg.cancel_scope.cancel()

        async def sentinel() -> None:
            sentinel_event = self._waiting.get(SENTINEL_ID)
            if sentinel_event is not None:
                await sentinel_event.wait()
            if self._closed:
                return
            await anyio.sleep(PROBE_GRACE_SECONDS)
            outcome["ignored"] = True
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(probe)
            tg.start_soon(sentinel)
        self._waiting.pop(discover_id, None)  # a late answer is dropped, as the probe does
        if "closed" in outcome:
            raise Fallback
        result = outcome.get("result")
        if result is None:
            error = outcome.get("error")
            if error is not None and error.code != METHOD_NOT_FOUND:
                # The SDK falls back to initialize on any error answer to the probe too.
                pass
            return False
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or MODERN_VERSION not in versions:
            raise Fallback
        self.modern = True
        self.protocol_version = MODERN_VERSION
        meta = result.get(_META) if isinstance(result.get(_META), dict) else {}
        self._facts(result, meta.get("io.modelcontextprotocol/serverInfo"))
        return True

    def _facts(self, result: Mapping[str, Any], info: Any) -> None:
        caps = result.get("capabilities")
        if not isinstance(caps, dict) or not isinstance(info, dict):
            raise Fallback
        if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
            raise Fallback
        instructions = result.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise Fallback
        self.server_info = info
        self.capabilities = caps
        self.instructions = instructions

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            try:
                page = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            except (_RpcError, _Closed):
                raise Fallback from None
            batch = page.get("tools")
            if not isinstance(batch, list):
                raise Fallback
            tools.extend(_checked_tool(t) for t in batch)
            cursor = page.get("nextCursor")
            if not cursor:
                break
            if not isinstance(cursor, str):
                raise Fallback
        return tools


def _checked_tool(tool: Any) -> dict[str, Any]:
    """A tool as the SDK's model would accept it, or Fallback."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise Fallback
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        raise Fallback
    for key in ("description", "title"):
        if tool.get(key) is not None and not isinstance(tool[key], str):
            raise Fallback
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise Fallback
    for key in ("readOnlyHint", "destructiveHint", "openWorldHint"):
        if annotations and annotations.get(key) is not None:
            if not isinstance(annotations[key], bool):
                raise Fallback
    output = tool.get("outputSchema")
    if output is not None and not isinstance(output, dict):
        raise Fallback
    return tool


# -- the tools and the views (the same fields as MCPTool and mcpbridge.report) ----------------


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

    def permission(self) -> Permission:
        hints = self.raw.get("annotations") or {}
        return classify(
            self.original_name,
            self.raw.get("description"),
            read_only=hints.get("readOnlyHint"),
            destructive=hints.get("destructiveHint"),
            open_world=hints.get("openWorldHint"),
        )

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None:
        if self._validator is None:
            self._validator = validator_for(self.schema())
        return first_problem(self._validator, arguments)


@dataclass
class Listed:
    """One server reached by the hot path."""

    config: ServerConfig
    connection: Connection
    tools: list[dict[str, Any]]
    handshake_ms: float


def name_tools(listed: list[Listed]) -> list[LiteTool]:
    """Sorted by server then tool, named as ``Manager.tools()`` names them."""
    pairs = [
        (item.config.name, tool)
        for item in sorted(listed, key=lambda i: i.config.name)
        for tool in sorted(item.tools, key=lambda t: t["name"])
        if _selected(item.config, tool["name"])
    ]
    names = allocate((server, tool["name"]) for server, tool in pairs)
    return [
        LiteTool(server, tool, n.name, n.reason)
        for (server, tool), n in zip(pairs, names, strict=True)
    ]


def _selected(config: ServerConfig, tool: str) -> bool:
    from fnmatch import fnmatchcase

    include = config.include_tools
    if include is not None and not any(fnmatchcase(tool, p) for p in include):
        return False
    return not any(fnmatchcase(tool, p) for p in config.exclude_tools)


@dataclass(frozen=True)
class _Info:
    """What :class:`mcpbridge.client.ServerInfo` holds, for ``report.server_view``."""

    protocol_version: str
    name: str | None
    version: str | None
    capabilities: dict[str, Any]
    instructions: str | None
    handshake_ms: float


@dataclass(frozen=True)
class _Reached:
    info: _Info


def views(listed: list[Listed], *, schemas: bool) -> list[dict[str, Any]]:
    """What ``mcp list`` shows for each server reached (``report.server_view``, same keys)."""
    from mcpbridge.report import server_view

    tools = name_tools(listed)
    out = []
    for item in sorted(listed, key=lambda i: i.config.name):
        conn = item.connection
        info = _Info(
            conn.protocol_version,
            conn.server_info.get("name"),
            conn.server_info.get("version"),
            conn.capabilities,
            conn.instructions,
            item.handshake_ms,
        )
        mine = [t for t in tools if t.server == item.config.name]
        view = server_view(
            item.config.name,
            "connected",
            item.config,
            _Reached(info),  # type: ignore[arg-type]
            mine,  # type: ignore[arg-type]
            schemas=schemas,
        )
        out.append(view)
    return out


# -- running ----------------------------------------------------------------------------------


def usable(servers: Mapping[str, ServerConfig]) -> bool:
    """True when every server is one the hot path can take (``CODEBOT_SDK_PATH=1``: none)."""
    if not servers or os.environ.get("CODEBOT_SDK_PATH") == "1":
        return False
    return all(
        c.type == "stdio" and c.enabled and c.error is None and c.protocol in ("auto", "legacy")
        for c in servers.values()
    )


class TimedOut(Exception):
    """No answer within the server's ``timeout``: the failure the SDK path would record."""

    def __init__(self, config: ServerConfig, stage: str, log_file: Path) -> None:
        super().__init__(stage)
        self.config = config
        self.stage = stage
        self.log_file = log_file

    def failure(self) -> Any:
        """The :class:`~mcpbridge.failures.Failure` of ``Client.run`` for a timeout."""
        from mcpbridge.failures import Failure, read_tail  # the slow case: the SDK may load

        config = self.config
        redact = Redactor([*config.headers.values(), *config.env.values()])
        return Failure(
            server=config.name,
            stage=self.stage,  # type: ignore[arg-type]
            message=f"no answer within {config.timeout:g} s",
            hint=f"Raise 'timeout' for server '{config.name}' in {config.source}, "
            "or check that the server starts on its own.",
            stderr_tail=redact(read_tail(self.log_file)),
            log_file=self.log_file,
        )

    def view(self) -> dict[str, Any]:
        """What ``mcp list`` shows for this failed server."""
        from mcpbridge.report import server_view

        return server_view(
            self.config.name, "failed", self.config, None, [], failure=self.failure()
        )


async def _connect(config: ServerConfig, server: ServerProcess, tg: Any) -> Listed:
    started = time.perf_counter()
    connection = Connection(server)
    tg.start_soon(connection.pump)
    tg.start_soon(server.pump_stderr)
    stage = "handshake"
    with anyio.move_on_after(config.timeout) as scope:
        try:
            await connection.handshake(config.protocol)
            stage = "list"
            tools = await connection.list_tools()
        except _Closed:
            raise Fallback from None
    if scope.cancelled_caught:
        raise TimedOut(config, stage, server.log_file)
    return Listed(config, connection, tools, (time.perf_counter() - started) * 1000)


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
    mine = (Fallback, UsageError, ServerError, RuntimeError)
    return next((e for e in leaves if isinstance(e, mine)), leaves[0] if leaves else group)


async def list_servers(
    servers: Mapping[str, ServerConfig], *, schemas: bool
) -> list[dict[str, Any]]:
    """Views of every server, or ``Fallback``."""
    try:
        return await _list_servers(servers, schemas=schemas)
    except BaseExceptionGroup as group:
        raise _leaf(group) from None


async def call_tool(config: ServerConfig, tool_name: str, arguments: dict[str, Any]) -> ToolResult:
    """One call, as :func:`mcpbridge.call.call_once` makes it; ``Fallback`` before the call."""
    try:
        return await _call_tool(config, tool_name, arguments)
    except BaseExceptionGroup as group:
        raise _leaf(group) from None


async def _list_servers(
    servers: Mapping[str, ServerConfig], *, schemas: bool
) -> list[dict[str, Any]]:
    launched: list[ServerProcess] = []
    try:
        for config in servers.values():
            launched.append(await launch(config))
    except LaunchError:
        await _stop_all(launched)
        raise Fallback from None
    listed: list[Listed] = []
    timed_out: list[TimedOut] = []
    try:
        async with anyio.create_task_group() as tg:

            async def one(config: ServerConfig, server: ServerProcess) -> None:
                try:
                    listed.append(await _connect(config, server, tg))
                except TimedOut as exc:
                    timed_out.append(exc)

            async with anyio.create_task_group() as connecting:
                for config, server in zip(servers.values(), launched, strict=True):
                    connecting.start_soon(one, config, server)
            result = views(listed, schemas=schemas) + [t.view() for t in timed_out]
            result.sort(key=lambda v: str(v["name"]))
            tg.cancel_scope.cancel()
    finally:
        await _stop_all(launched)
    return result


async def _stop_all(launched: list[ServerProcess]) -> None:
    with anyio.CancelScope(shield=True):
        async with anyio.create_task_group() as tg:
            for server in launched:
                tg.start_soon(server.stop)


async def _call_tool(config: ServerConfig, tool_name: str, arguments: dict[str, Any]) -> ToolResult:
    try:
        server = await launch(config)
    except LaunchError:
        raise Fallback from None
    try:
        async with anyio.create_task_group() as tg:
            try:
                listed = await _connect(config, server, tg)
            except TimedOut as exc:
                failure = exc.failure()
                raise ServerError(
                    f"server '{config.name}': {failure.describe()}", hint=failure.hint
                ) from None
            tools = name_tools([listed])
            tool = _find(tools, config.name, tool_name)
            problem = tool.check_arguments(arguments)
            if problem:
                raise UsageError(
                    f"arguments for '{tool.original_name}' do not match its schema: {problem}",
                    hint=f"See the schema with: codebot mcp list --server {config.name} --schemas",
                )
            result = await _call(listed.connection, config, tool, arguments)
            tg.cancel_scope.cancel()
    finally:
        await _stop_all([server])
    return result


def _find(tools: list[LiteTool], server: str, name: str) -> LiteTool:
    for tool in tools:
        if name in (tool.original_name, tool.name):
            return tool
    raise Fallback  # the SDK path words the usage error (close matches)


async def _call(
    connection: Connection, config: ServerConfig, tool: LiteTool, arguments: dict[str, Any]
) -> ToolResult:
    redact = Redactor([*config.headers.values(), *config.env.values()])
    name = tool.original_name
    try:
        with anyio.fail_after(config.tool_timeout) if config.tool_timeout else nullcontext():
            result = await connection.request("tools/call", {"name": name, "arguments": arguments})
    except TimeoutError:
        code, message = REQUEST_TIMEOUT, "timed out"
    except _Closed:
        code, message = CONNECTION_CLOSED, "Connection closed"
    except _RpcError as exc:
        code, message = exc.code, exc.message
    else:
        if connection.modern and result.get("resultType", "complete") != "complete":
            raise ServerError(
                f"server '{config.name}' asked for input during '{name}', which mcp call cannot "
                "give",
                hint="Use the tool from `codebot chat`.",
            )
        _validate_output(name, tool.raw.get("outputSchema"), result)
        return plain_result(result) or _through_sdk(result, config, name)
    raise call_error(code, redact(message), config, name)


def _through_sdk(result: dict[str, Any], config: ServerConfig, tool: str) -> ToolResult:
    """Anything but plain text: read by the SDK's own model, rendered by ``to_tool_result``."""
    import mcp_types as types
    from pydantic import ValidationError

    from mcpbridge.tool import to_tool_result

    try:
        model = types.CallToolResult.model_validate({**result, "resultType": "complete"})
    except ValidationError as exc:
        raise ServerError(
            f"server '{config.name}' answered '{tool}' with a result that is not valid MCP: "
            f"{exc.errors()[0].get('msg', exc)}"
        ) from None
    return to_tool_result(model)


def _validate_output(name: str, schema: Any, result: dict[str, Any]) -> None:
    """The SDK's check of structured content against the tool's output schema, same words."""
    if not isinstance(schema, dict) or result.get("isError"):
        return
    from jsonschema import exceptions as jsonschema_exceptions
    from jsonschema import validators

    if result.get("structuredContent") is None and "structuredContent" not in result:
        raise RuntimeError(
            f"Tool {name} has an output schema but did not return structured content"
        )
    validator = validators.validator_for(schema)(schema)
    error = jsonschema_exceptions.best_match(validator.iter_errors(result.get("structuredContent")))
    if error is not None:
        raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}")
