"""The JSON-RPC conversation of the hot path (:mod:`mcpbridge.calls.lite`), without the MCP SDK.

What the SDK path sends, message for message, on the wire of :mod:`mcpbridge.transport.wire`
(its framing, its constants, its era decision, its capabilities): ``server/discover`` with the
``_meta`` envelope and the probe's two requests, then ``initialize`` and
``notifications/initialized`` for handshake-era servers; the envelope on every request to a
2026-07-28 server. The server's log messages go to its log as the SDK path writes them
(:class:`~mcpbridge.transport.runlog.ServerLog`). A call's input rounds (SEP-2322) are
answered here, by the default policy, as the SDK's driver answers them: a call is never handed
to the SDK path once ``tools/call`` is sent, or the tool would run twice. Anything outside the
plain case *before* the call raises :class:`OtherShapeError` (the caller hands the process
to the SDK path); a server that closes its stdout before the call raises
:class:`ClosedError`, which the caller records as the SDK path does. A server's request,
before the call or during it, is answered here as the SDK path answers it
(:meth:`Connection.answer_server_request`: its version gate, then the default policy), so
nothing is left for the SDK path to answer.

Size: one conversation in one place, each message the SDK path sends beside the rule that
sends it (handshake, listing, the call and its input rounds, the server's requests).
"""

from __future__ import annotations

__all__ = [
    "ClosedError",
    "Connection",
    "MalformedError",
    "OtherShapeError",
    "RpcError",
    "UnreadableError",
]

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core import jsonutil
from codebot_mcp.mcpbridge.calls.results import OtherShapeError, checked_tool
from codebot_mcp.mcpbridge.transport import wire
from codebot_mcp.mcpbridge.transport.process import ServerProcess
from codebot_mcp.mcpbridge.transport.runlog import ServerLog

STATE_ONLY_PAUSE = (0.05, 0.25)
"""Before retrying an ``InputRequiredResult`` that asks nothing (only ``requestState``): the
first pause, doubled up to the second. The SDK's driver waits the same (a test compares)."""
INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
"""What a server may ask inside an ``InputRequiredResult`` (``mcp_types.InputRequest``)."""


class ClosedError(Exception):
    """The server's stdout ended."""


class MalformedError(Exception):
    """The answer to ``tools/call`` breaks JSON-RPC: the call's error (never a fallback, which
    would run the tool a second time)."""


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class UnreadableError(Exception):
    """An ``InputRequiredResult`` whose requests the hot path cannot read: the SDK's model
    words why (:func:`mcpbridge.calls.results.through_sdk`); nothing is sent again."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("unreadable input requests")
        self.result = result


class TooManyRoundsError(Exception):
    """The server still asked for input after :data:`.wire.MAX_INPUT_ROUNDS` rounds."""


class Connection:
    """One JSON-RPC conversation over a launched stdio server."""

    def __init__(
        self,
        server: ServerProcess,
        roots: Sequence[Path] = (),
        log: ServerLog | None = None,
        *,
        sampler: bool = True,
    ) -> None:
        self.server = server
        self.roots = list(roots)
        """Answers ``roots/list`` (the default policy's roots)."""
        self.log = log
        """Where the server's ``notifications/message`` go (None: nowhere)."""
        self.sampler = sampler
        """The SDK path of this command has a sampler (``mcp call``), which refuses by the
        policy; without one (``mcp list``) sampling is refused for want of a model."""
        self.calling = False
        """Set once ``tools/call`` is sent: from then on nothing may fall back."""
        self.modern = False
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.discovered: dict[str, Any] | None = None
        """The ``server/discover`` result of a 2026-07-28 server (the SDK path may adopt it)."""
        self.initialize_answer: dict[str, Any] | None = None
        """A handshake-era server's answer to ``initialize``, as it came (the SDK path may be
        handed it: :class:`~mcpbridge.transport.process.Initialized`)."""
        self.initialized = False
        """``notifications/initialized`` was sent."""
        self._probe: wire.EraProbe | None = None
        self._probe_settled = anyio.Event()
        """The probe's last request (its ``ping``) was answered: nothing of ours is pending."""
        self._next_id = 0
        self._waiting: dict[Any, anyio.Event] = {}
        self._answers: dict[Any, dict[str, Any]] = {}
        self._closed = False

    # -- reading ---------------------------------------------------------------------------

    async def pump(self) -> None:
        """Read stdout in :class:`.wire.LineFramer`'s lines; route answers to their requests,
        answer the server's requests, log its log messages."""
        stdout = self.server.process.stdout
        assert stdout is not None
        lines = wire.LineFramer()
        try:
            while True:
                for line in lines.feed(await stdout.receive()):
                    if isinstance(line, wire.Oversized):
                        self._fail(line.request_id, line.message)
                    else:
                        await self._dispatch(line)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.server.closed.set()  # stdout ended (not when the reading is handed over)
        finally:
            self._closed = True
            for event in self._waiting.values():
                event.set()

    def _fail(self, request_id: Any, message: str) -> None:
        """Answer our request ``request_id`` with the wire's error for a line we dropped."""
        if request_id is not None:
            self._resolve(request_id, wire.error_answer(request_id, message))

    def _resolve(self, request_id: Any, answer: dict[str, Any]) -> None:
        if isinstance(request_id, int | str) and request_id in self._waiting:
            self._answers[request_id] = answer
            self._waiting.pop(request_id).set()

    async def _dispatch(self, line: bytes) -> None:
        try:
            message = jsonutil.loads(line)
        except ValueError:
            # As the SDK path: an answer we cannot read fails its request; other junk is skipped.
            self._fail(wire.answer_id(line), wire.UNREADABLE)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            if not self.calling:
                # As the SDK path's transport (``transport.stdio``): JSON that is not JSON-RPC
                # fails the request whose id it names, and is skipped otherwise.
                self._fail(wire.answer_id(line), wire.UNREADABLE)
                return
            # The tool runs: never fall back (and call it twice) now. An answer to our call
            # that breaks JSON-RPC fails the call; anything else is skipped.
            request_id = message.get("id") if isinstance(message, dict) else None
            self._resolve(request_id, {"malformed": "it is not JSON-RPC 2.0"})
            return
        if "method" in message:
            await self._from_server(message)
            return
        request_id = message.get("id")
        if self._probe is not None:
            if request_id == wire.SENTINEL_ID:
                self._probe_settled.set()
            verdict = self._probe.seen(request_id)
            if verdict == "answer_probe":
                self._resolve(self._probe.discover_id, self._probe.ignored_answer())
            if verdict != "pass":
                return
        self._resolve(request_id, message)

    async def _from_server(self, message: dict[str, Any]) -> None:
        """A request or notification of the server's."""
        method = message["method"]
        if "id" not in message:
            if method == "notifications/message" and self.log is not None:
                self.log.receive(message.get("params"))
            return  # other notifications change nothing for a one-shot command
        answer = self.answer_server_request(method, message.get("params"))
        await self._send({"jsonrpc": "2.0", "id": message["id"], **answer})

    async def settle_probe(self) -> None:
        """Wait until the era probe's own requests are answered (before a hand-over: their
        answers must not reach the SDK path's reader)."""
        if self._probe is not None and self._probe.discover_id is not None:
            await self._probe_settled.wait()

    def answer_server_request(self, method: str, params: Any) -> dict[str, Any]:
        """A server's request, before ``tools/call`` or during it, answered as the SDK path's
        session answers it: the version gate and the request's model first
        (``mcp_types.methods``, imported only for such a server: a 2026-07-28 connection
        takes no plain request, ``ping`` included), then the default policy
        (:meth:`answer_request`)."""
        if method in ("ping", "roots/list") and not self.modern:  # every handshake era has them
            return self.answer_request(method, params)
        from mcp_types import methods
        from pydantic import ValidationError

        version = self.protocol_version or wire.LEGACY_VERSION  # the SDK's until negotiated
        body = params if isinstance(params, dict) else None
        try:
            methods.parse_server_request(method, version, body)
        except KeyError:
            error = {"code": wire.METHOD_NOT_FOUND, "message": "Method not found", "data": method}
            return {"error": error}
        except ValidationError:
            message = "Invalid request parameters"
            return {"error": {"code": wire.INVALID_PARAMS, "message": message, "data": ""}}
        return self.answer_request(method, params)

    def answer_request(self, method: str, params: Any) -> dict[str, Any]:
        """The answer of the SDK path's default policy (``--elicit decline``, no sampling) to a
        server's request (past :meth:`answer_server_request`'s gate) or to one inside an
        ``InputRequiredResult``: ``{"result": ...}`` or ``{"error": ...}``, word for word."""
        if method == "ping":
            return {"result": {}}
        if method == "roots/list":
            roots = [{"uri": p.as_uri(), "name": p.name or str(p)} for p in self.roots]
            return {"result": {"roots": roots}}
        params = params if isinstance(params, dict) else {}
        if method == "elicitation/create":
            if params.get("mode") != "url":
                from codebot_mcp.core.tools.forms import NOT_A_FORM, form_fields

                if form_fields(params.get("requestedSchema")) is None:
                    return {"error": {"code": wire.INVALID_PARAMS, "message": NOT_A_FORM}}
            return {"result": {"action": "decline"}}
        if method == "sampling/createMessage":
            from codebot_mcp.core.tools.useragent import NO_SAMPLER, Policy, refusal_reason

            reason = refusal_reason(Policy(), self.server.name) if self.sampler else NO_SAMPLER
            text = f"sampling refused: {reason}"
            return {"error": {"code": wire.USER_REJECTED, "message": text}}
        return {"error": {"code": wire.METHOD_NOT_FOUND, "message": "Method not found"}}

    # -- writing ---------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        stdin = self.server.process.stdin
        assert stdin is not None
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
        try:
            await stdin.send(data + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            raise ClosedError from None

    async def send_request(
        self, method: str, params: dict[str, Any] | None, *, progress: bool = False
    ) -> int:
        """Send a request; the id to :meth:`answer` with. ``progress`` asks for progress
        notifications as the SDK path asks on every call (its token is the request id; the
        hot path ignores what comes, as ``mcp call`` without a terminal does)."""
        self._next_id += 1
        request_id = self._next_id
        self._waiting[request_id] = anyio.Event()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if progress:
            meta = {**(params or {}).get(wire.META, {}), "progressToken": request_id}
            params = {**(params or {}), wire.META: meta}
        if params is not None:
            message["params"] = params
        await self._send(message)
        return request_id

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The result of a request; ``RpcError`` for an error answer, ``Closed`` at EOF."""
        event = self._waiting.get(request_id)
        if event is not None:
            await event.wait()
        answer = self._answers.pop(request_id, None)
        if answer is None:
            raise ClosedError
        # Before tools/call a strange answer falls back to the SDK path; after it, it is the
        # call's error (falling back would run the tool twice).
        broken: type[Exception] = MalformedError if self.calling else OtherShapeError
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

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, progress: bool = False
    ) -> dict[str, Any]:
        if self.modern:
            params = {**(params or {}), wire.META: wire.modern_envelope()}
        return await self.answer(await self.send_request(method, params, progress=progress))

    # -- the handshake ---------------------------------------------------------------------

    async def handshake(self, mode: str) -> None:
        """``server/discover`` (auto) with the probe's requests, or ``initialize`` (legacy)."""
        if mode == "auto" and await self._discover():
            return
        if mode not in ("auto", "legacy"):
            raise OtherShapeError  # a pinned modern version: the SDK adopts it without a probe
        params = {
            "protocolVersion": wire.LEGACY_VERSION,
            "capabilities": wire.CLIENT_CAPABILITIES,
            "clientInfo": wire.client_info(),
        }
        request_id = await self.send_request("initialize", params)
        event = self._waiting.get(request_id)
        if event is not None:
            await event.wait()
        self.initialize_answer = self._answers.get(request_id)
        try:
            result = await self.answer(request_id)
        except RpcError:
            raise OtherShapeError from None  # ClosedError: the caller records it
        version = result.get("protocolVersion")
        if version not in wire.LEGACY_VERSIONS:
            raise OtherShapeError
        self.protocol_version = str(version)
        self._facts(result, result.get("serverInfo"))
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.initialized = True

    async def _discover(self) -> bool:
        """True when the server speaks 2026-07-28; False when it is a handshake-era server
        (it refused the probe, or dropped it: :class:`.wire.EraProbe` decides)."""
        self._probe = wire.EraProbe()
        discover_id = await self.send_request(
            wire.DISCOVER_METHOD, {wire.META: wire.modern_envelope()}
        )
        for request in self._probe.sent(discover_id):
            await self._send(request)
        try:
            result = await self.answer(discover_id)
        except RpcError as exc:
            if exc.code == wire.UNSUPPORTED_VERSION:
                raise OtherShapeError from None  # the SDK may probe again: its decision
            return False  # the SDK falls back to initialize on any other error answer
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or wire.MODERN_VERSION not in versions:
            # The SDK falls back to initialize alike, whether its model reads the result
            # (no modern version offered) or not (an unreadable result is no evidence).
            return False
        meta = result.get(wire.META)
        self._facts(result, meta.get(wire.SERVER_INFO_KEY) if isinstance(meta, dict) else None)
        self.modern = True  # only now: a result of another shape is the SDK's to read again
        self.protocol_version = wire.MODERN_VERSION
        self.discovered = result
        return True

    def _facts(self, result: Mapping[str, Any], info: Any) -> None:
        caps = result.get("capabilities")
        if not isinstance(caps, dict) or not isinstance(info, dict):
            raise OtherShapeError
        if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
            raise OtherShapeError
        instructions = result.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise OtherShapeError
        self.server_info = info
        self.capabilities = caps
        self.instructions = instructions

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every page of ``tools/list``; :class:`OtherShapeError` for any other shape."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(wire.MAX_LIST_PAGES):
            try:
                page = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            except RpcError:
                raise OtherShapeError from None  # ClosedError: the caller records it
            batch = page.get("tools")
            if not isinstance(batch, list) or (self.modern and not _cacheable(page)):
                raise OtherShapeError
            tools.extend(checked_tool(t) for t in batch)
            cursor = page.get("nextCursor")
            if not cursor:
                break
            if not isinstance(cursor, str):
                raise OtherShapeError
        return tools

    # -- the call --------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any], limit: float) -> dict[str, Any]:
        """``tools/call`` to its final result, each round within ``limit`` seconds, as the SDK's
        ``Client.call_tool`` makes it: an ``InputRequiredResult`` (2026-07-28) is answered by
        the default policy and the call sent again with the answers and the echoed
        ``requestState``, at most :data:`.wire.MAX_INPUT_ROUNDS` times; a ``HEADER_MISMATCH``
        is answered by listing the tools again and resending once (the server ran nothing).

        The caller checks :attr:`abandoned` first and sets :attr:`calling`.

        Raises:
            RpcError: an error answer, or a refused input request (the SDK raises it alike).
            Closed, Malformed, TimeoutError: the server went away, broke JSON-RPC, or was
                silent for ``limit`` seconds.
            TooManyRounds, Unreadable: the server's input requests never ended, or cannot be
                read without the SDK.
        """
        assert self.calling
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        rounds = 0
        pause = STATE_ONLY_PAUSE[0]
        while True:
            result = await self._send_call(params, limit)
            if not self.modern or result.get("resultType") != "input_required":
                return result
            rounds += 1
            if rounds > wire.MAX_INPUT_ROUNDS:
                raise TooManyRoundsError
            asked, state = _input_required(result)
            responses: dict[str, Any] | None = None
            if asked:
                pause = STATE_ONLY_PAUSE[0]
                responses = {}
                for key, request in asked.items():
                    answer = self.answer_request(request["method"], request.get("params"))
                    if "error" in answer:
                        raise RpcError(answer["error"]["code"], answer["error"]["message"])
                    responses[key] = answer["result"]
            else:
                await anyio.sleep(pause)
                pause = min(pause * 2, STATE_ONLY_PAUSE[1])
            params = {
                **({"inputResponses": responses} if responses is not None else {}),
                **({"requestState": state} if state is not None else {}),
                "name": name,
                "arguments": arguments,
            }

    async def _send_call(self, params: dict[str, Any], limit: float) -> dict[str, Any]:
        """One ``tools/call`` round; once more after listing again on ``HEADER_MISMATCH``."""
        try:
            with anyio.fail_after(limit):
                return await self.request("tools/call", params, progress=True)
        except RpcError as exc:
            if exc.code != wire.HEADER_MISMATCH or not self.modern:
                raise
            mismatch = exc
        try:
            with anyio.fail_after(limit):
                await self._relist(params["name"])
        except (RpcError, ClosedError, MalformedError, TimeoutError):
            raise mismatch from None
        with anyio.fail_after(limit):
            return await self.request("tools/call", params, progress=True)

    async def _relist(self, name: str) -> None:
        """``tools/list`` page by page until a page lists ``name`` (the SDK's re-list)."""
        cursor: str | None = None
        for _ in range(wire.MAX_LIST_PAGES):
            page = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            following, tools = page.get("nextCursor"), page.get("tools")
            cursor = following if isinstance(following, str) else None
            listed = tools if isinstance(tools, list) else []
            if cursor is None or any(isinstance(t, dict) and t.get("name") == name for t in listed):
                return


def _cacheable(result: Mapping[str, Any]) -> bool:
    """A 2026-07-28 list result carries the cache hints the SDK's model requires."""
    ttl = result.get("ttlMs")
    hinted = type(ttl) is int and ttl >= 0
    return hinted and result.get("cacheScope") in ("private", "public")


def _input_required(result: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The input requests and ``requestState`` of an ``InputRequiredResult``, checked for
    what the SDK's model requires of them; :class:`Unreadable` for anything else."""
    asked = result.get("inputRequests", {})
    state = result.get("requestState")
    if not isinstance(asked, dict) or not (state is None or isinstance(state, str)):
        raise UnreadableError(result)
    if not asked and state is None:
        raise UnreadableError(result)  # the spec: at least one of the two is present
    for request in asked.values():
        if not _readable(request):
            raise UnreadableError(result)
    return asked, state


def _readable(request: Any) -> bool:
    """An input request with the fields the SDK's model requires of its method."""
    if not isinstance(request, dict) or request.get("method") not in INPUT_METHODS:
        return False
    params = request.get("params")
    if request["method"] == "roots/list":
        return params is None or isinstance(params, dict)
    if not isinstance(params, dict):
        return False
    if request["method"] == "sampling/createMessage":
        return isinstance(params.get("messages"), list) and type(params.get("maxTokens")) is int
    needed = ("message", "url", "elicitationId") if params.get("mode") == "url" else ("message",)
    if not all(isinstance(params.get(key), str) for key in needed):
        return False
    return params.get("mode") == "url" or isinstance(params.get("requestedSchema"), dict)
