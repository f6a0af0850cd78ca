"""The JSON-RPC conversation of the hot path (:mod:`mcpbridge.lite`), without the MCP SDK.

What the SDK sends, message for message: ``server/discover`` (``_meta`` envelope) with the
unknown-method request and the sentinel ``ping`` of :mod:`mcpbridge.transport.probe` (decided
as it decides: by the order of the answers), then ``initialize`` and
``notifications/initialized`` for handshake-era servers; the ``_meta`` envelope on every request
to a 2026-07-28 server. Lines are bounded and junk is handled as :mod:`mcpbridge.stdio` does.
Anything outside the plain case raises :class:`Fallback`.
"""

from __future__ import annotations

__all__ = ["Closed", "Connection", "Fallback", "Malformed", "RpcError"]

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core import __version__, jsonutil
from codebot_mcp.mcpbridge.calls.results import Fallback, checked_tool
from codebot_mcp.mcpbridge.tools.extensions import TASKS
from codebot_mcp.mcpbridge.transport.process import ServerProcess

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
"""What the SDK (2.3) offers in each era; a test checks them against ``mcp_types``."""
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
METHOD_NOT_FOUND = -32601
SENTINEL_ID = "codebot-discover-sentinel"
UNKNOWN_METHOD = "codebot/no-such-method"
UNKNOWN_ID = "codebot-discover-unknown"
"""As :mod:`mcpbridge.transport.probe` (a test compares)."""
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""As :data:`mcpbridge.stdio.MAX_MESSAGE_BYTES` (checked by a test)."""
INTERNAL_ERROR = -32603
_ID_PATTERN = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
MAX_LIST_PAGES = 1000
_META = "_meta"
CLIENT_CAPABILITIES: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "extensions": {"io.modelcontextprotocol/skills": {}},
}
"""What the SDK path declares (its callbacks of :mod:`mcpbridge.requests`, and the extensions
of ``connection.serverinfo.client_extensions``, not imported: it loads the SDK); a test
compares the two byte for byte."""
MODERN_CAPABILITIES: dict[str, Any] = {
    **CLIENT_CAPABILITIES,
    "extensions": {**CLIENT_CAPABILITIES["extensions"], TASKS: {}},
}
"""On 2026-07-28 requests the SDK path also declares the tasks extension (SEP-2663, a claim
the SDK activates on modern wires only). The hot path says the same, byte for byte, and never
meets a task: :mod:`mcpbridge.calls.lite` hands a server that advertises tasks to the SDK path
before calling a tool."""
USER_REJECTED = -1
INVALID_PARAMS = -32602


class Closed(Exception):
    """The server's stdout ended."""


class Malformed(Exception):
    """The answer to ``tools/call`` breaks JSON-RPC: the call's error (never a fallback, which
    would run the tool a second time)."""


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _envelope() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "codebot", "version": __version__},
        "io.modelcontextprotocol/clientCapabilities": MODERN_CAPABILITIES,
    }


class Connection:
    """One JSON-RPC conversation over a launched stdio server."""

    def __init__(self, server: ServerProcess, roots: Sequence[Path] = ()) -> None:
        self.server = server
        self.roots = list(roots)
        """Answers ``roots/list`` (the default policy's roots)."""
        self.calling = False
        """Set once ``tools/call`` is sent: from then on nothing may fall back."""
        self.abandoned = False
        """Something before the call is not for the hot path (see :meth:`_abandon`)."""
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
            request_id = jsonutil.loads(match.group(1))
        except ValueError:
            return
        if request_id in self._waiting:
            self._answers[request_id] = {"error": {"code": INTERNAL_ERROR, "message": message}}
            self._waiting.pop(request_id).set()

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = jsonutil.loads(line)
        except ValueError:
            # As the SDK path: an answer we cannot read fails its request; other junk is skipped.
            self._error_for(line, "the server's answer is not valid JSON-RPC (not UTF-8 or JSON)")
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            if not self.calling:
                self._abandon()
                return
            # The tool runs: never fall back (and call it twice) now. An answer to our call
            # that breaks JSON-RPC fails the call; anything else is skipped.
            request_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(request_id, int | str) and request_id in self._waiting:
                self._answers[request_id] = {"malformed": "it is not JSON-RPC 2.0"}
                self._waiting.pop(request_id).set()
            return
        if "method" in message:
            if "id" in message:  # a request from the server
                if not self.calling and message["method"] not in ("ping", "roots/list"):
                    self._abandon()  # nothing was called yet: the SDK path answers it
                    return
                answer = self._server_request(message)
                await self._send({"jsonrpc": "2.0", "id": message["id"], **answer})
            return  # notifications change nothing for a one-shot command
        request_id = message.get("id")
        if request_id in self._waiting:
            self._answers[request_id] = message
            self._waiting.pop(request_id).set()

    def _abandon(self) -> None:
        """Give this conversation up before ``tools/call``: every wait ends in ``Fallback``.

        Never raised from the reading task itself: a ``Fallback`` there could cancel the call
        just after its request went out, and the SDK path would then run the tool again. The
        caller checks :attr:`abandoned` right before it marks the call as started.
        """
        self.abandoned = True
        for event in self._waiting.values():
            event.set()

    def _server_request(self, message: dict[str, Any]) -> dict[str, Any]:
        """The answer of the SDK path's default policy (``--elicit decline``, no sampling).

        Before ``tools/call`` anything but ``ping`` and ``roots/list`` falls back (nothing was
        called yet); once the call runs, falling back would run the tool twice, so elicitation
        and sampling get the default policy's answers, word for word."""
        method = message["method"]
        if method == "ping":
            return {"result": {}}
        if method == "roots/list":
            roots = [{"uri": p.as_uri(), "name": p.name or str(p)} for p in self.roots]
            return {"result": {"roots": roots}}
        params: dict[str, Any] = message.get("params") or {}
        if not isinstance(params, dict):
            params = {}
        if method == "elicitation/create":
            if params.get("mode") != "url":
                from codebot_mcp.mcpbridge.connection.requests import (
                    MAX_FIELDS,
                    form_fields,
                )  # rare: the SDK may load

                if form_fields(params.get("requestedSchema")) is None:
                    text = (
                        "codebot cannot ask for this form: its schema is not a flat object "
                        f"of at most {MAX_FIELDS} primitive fields"
                    )
                    return {"error": {"code": INVALID_PARAMS, "message": text}}
            return {"result": {"action": "decline"}}
        if method == "sampling/createMessage":
            from codebot_mcp.core.tools.useragent import (
                Policy,
                refusal_reason,
            )  # the default policy's words

            text = f"sampling refused: {refusal_reason(Policy(), self.server.name)}"
            return {"error": {"code": USER_REJECTED, "message": text}}
        return {"error": {"code": METHOD_NOT_FOUND, "message": "Method not found"}}

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.server.process.stdin
        assert stdin is not None
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        try:
            await stdin.send(data + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            raise Closed from None

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
        """The result of a request; ``RpcError`` for an error answer, ``Closed`` at EOF."""
        event = self._waiting.get(request_id)
        if event is not None:
            await event.wait()
        answer = self._answers.pop(request_id, None)
        if answer is None:
            if self.abandoned and not self.calling:
                raise Fallback
            raise Closed
        # Before tools/call a strange answer falls back to the SDK path; after it, it is the
        # call's error (falling back would run the tool twice).
        broken: type[Exception] = Malformed if self.calling else Fallback
        if "malformed" in answer:
            raise broken(answer["malformed"])
        if "error" in answer:
            error = answer["error"]
            code = error.get("code") if isinstance(error, dict) else None
            if not isinstance(code, int) or isinstance(code, bool):
                raise broken("its error has no integer code")
            message = error.get("message")
            raise RpcError(code, message if isinstance(message, str) else "")
        result = answer.get("result")
        if not isinstance(result, dict):
            raise broken("it has neither a result object nor an error")
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
            "capabilities": CLIENT_CAPABILITIES,
            "clientInfo": {"name": "codebot", "version": __version__},
        }
        try:
            result = await self.request("initialize", params)
        except (RpcError, Closed):
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
        self._waiting[UNKNOWN_ID] = anyio.Event()
        await self._send({"jsonrpc": "2.0", "id": UNKNOWN_ID, "method": UNKNOWN_METHOD})
        self._waiting[SENTINEL_ID] = anyio.Event()
        await self._send({"jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping"})
        outcome: dict[str, Any] = {}

        async def probe() -> None:
            try:
                outcome["result"] = await self.answer(discover_id)
            except RpcError as exc:
                outcome["error"] = exc
            except Closed:
                outcome["closed"] = True
            tg.cancel_scope.cancel()

        async def sentinel() -> None:
            sentinel_event = self._waiting.get(SENTINEL_ID)
            if sentinel_event is not None:
                await sentinel_event.wait()
            if self._closed or UNKNOWN_ID in self._answers:
                return  # it answers what it does not know: the probe's answer is coming
            outcome["ignored"] = True  # it drops what it does not know, the probe included
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(probe)
            tg.start_soon(sentinel)
        self._waiting.pop(discover_id, None)  # a late answer is dropped, as the probe does
        for own in (UNKNOWN_ID, SENTINEL_ID):
            self._waiting.pop(own, None)
            self._answers.pop(own, None)
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
            except (RpcError, Closed):
                raise Fallback from None
            batch = page.get("tools")
            if not isinstance(batch, list):
                raise Fallback
            tools.extend(checked_tool(t) for t in batch)
            cursor = page.get("nextCursor")
            if not cursor:
                break
            if not isinstance(cursor, str):
                raise Fallback
        return tools
