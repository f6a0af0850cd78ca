"""A stdio MCP server of both protocol eras without the SDK: the base of our raw test servers.

A server built on the SDK's ``MCPServer`` takes about a second of CPU to start (importing
``mcp`` alone is 1.1 s here); one on this class takes a twentieth of that, and the suite starts
test servers hundreds of times. It answers as ``MCPServer`` does (``tests/test_servers_raw.py``
holds the SDK-built ``echo_sdk`` and the raw ``echo`` to the same answers):

- **2026-07-28**: every request carries the ``_meta`` envelope (protocol version and client
  capabilities), ``server/discover`` answers the capabilities, and each result gets
  ``resultType`` (``"complete"`` unless the handler chose another, such as ``"input_required"``)
  and the server's info in ``_meta``; list results are marked uncacheable.
- **handshake era** (``initialize``, 2024-11-05 to 2025-11-25): no envelope; a request before
  ``initialize`` (or a ``server/discover`` without the envelope) is refused with -32602, as the
  SDK refuses it. Mid-call requests to the client (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list``) go through :meth:`Call.request`, numbered 1, 2,
  ... as the SDK numbers them; a call cancelled while it waits tells the client
  (``notifications/cancelled``) that its request is void, as the SDK does.

A subclass lists its tools (:attr:`EraServer.tools`, or :meth:`EraServer.list_tools` for
pagination) and answers them in :meth:`EraServer.call_tool`, which runs in a thread of its own
per call (a call may block, ask the client, or be cancelled); other methods go to
:meth:`EraServer.handle` (by default ``MCPServer``'s answers with no prompts or resources).
A tool logs and reports progress with :meth:`Call.log` and :meth:`Call.progress` (each era's
rules; :mod:`tests.servers._mcpserver` checks its arguments as pydantic does), and announces a
changed tool list with :meth:`EraServer.tools_changed` (a notification, or an event on each
``subscriptions/listen`` stream that asked for it). When stdin ends, every request still open
gets ``Connection closed``, as from the SDK. Only the standard library is used.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from tests.servers._raw import messages

MODERN = "2026-07-28"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PROTOCOL_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
ENVELOPE_ERROR = (
    "params._meta must be an object carrying the required "
    "'io.modelcontextprotocol/protocolVersion' and "
    "'io.modelcontextprotocol/clientCapabilities' envelope keys"
)
UNCACHEABLE = {"cacheScope": "private", "ttlMs": 0}
HANDSHAKE_ONLY = (
    "this connection serves the handshake protocol era; "
    "requests carrying the 2026-07-28 envelope are not accepted on it"
)
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
LIST_CHANGED = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
"""What a ``subscriptions/listen`` stream may ask for, and the notification each one brings."""


class RpcError(Exception):
    """Raised by a handler to answer the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MethodNotFound(RpcError):
    def __init__(self, method: str) -> None:
        super().__init__(-32601, "Method not found", method)


class InvalidParams(RpcError):
    """The SDK's answer to params that fail its validation (no detail given)."""

    def __init__(self) -> None:
        super().__init__(-32602, "Invalid request parameters", "")


def text_block(text: str) -> dict[str, Any]:
    return {"text": text, "type": "text"}


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result with one text block, as ``MCPServer`` returns a ``str``."""
    return {"content": [text_block(text)], "isError": is_error}


def tool_error(name: str, message: str) -> dict[str, Any]:
    """The result ``MCPServer`` gives when a tool raises: ``Error executing tool ...``."""
    return text_result(f"Error executing tool {name}: {message}", is_error=True)


def schema_of(
    title: str,
    params: dict[str, str],
    *,
    required: list[str] | None = None,
    defaults: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """pydantic's JSON Schema of a tool's arguments (``{name: json type}``), as the SDK lists
    it; every parameter without a default is required unless ``required`` says otherwise."""
    defaults = defaults or {}
    properties = {
        p: {
            **({"default": defaults[p]} if p in defaults else {}),
            "title": p.replace("_", " ").title(),
            "type": t,
        }
        for p, t in params.items()
    }
    needed = [p for p in params if p not in defaults] if required is None else required
    schema: dict[str, Any] = {"properties": properties}
    if needed:
        schema["required"] = needed
    return {**schema, "title": f"{title}Arguments", "type": "object"}


def tool(
    name: str, description: str, params: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    """A tool as ``MCPServer`` lists one whose arguments are ``params``."""
    return {
        "description": description,
        "inputSchema": schema_of(name, params or {}),
        "name": name,
        **extra,
    }


class Call:
    """One request being answered: its id, era and envelope, and a way back to the client."""

    def __init__(self, server: EraServer, request_id: Any, params: dict[str, Any], modern: bool):
        self.server = server
        self.id = request_id
        self.params = params
        self.modern = modern
        self.cancelled = threading.Event()
        self.after: list[Callable[[], object]] = []
        """Run once the call's answer is sent (a change the SDK makes after it answers)."""

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared: in the envelope (2026-07-28) or at ``initialize``."""
        if self.modern:
            caps = self.meta.get(CAPABILITIES_KEY)
            return caps if isinstance(caps, dict) else {}
        return self.server.client_capabilities

    def request(
        self, method: str, params: dict[str, Any] | None, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Ask the client mid-call (handshake era) and wait for its answer; ``RpcError`` when
        it answers with an error (or the call is cancelled meanwhile). ``params=None`` sends
        none (``roots/list``)."""
        return self.server.request(method, params, timeout, related=self.id)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.server.send({"jsonrpc": "2.0", "method": method, "params": params})

    def log(self, level: str, data: Any) -> None:
        """``notifications/message`` as the SDK's ``ctx.log`` sends it: always in the handshake
        era, and on 2026-07-28 only at or above the level this request's envelope asked for."""
        if self.modern:
            wanted = self.meta.get(LOG_LEVEL_KEY)
            if wanted not in LOG_LEVELS or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
                return
        self.notify("notifications/message", {"data": data, "level": level})

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """``notifications/progress`` for this request, when it carried a ``progressToken``."""
        token = self.meta.get("progressToken")
        if token is None:
            return
        params: dict[str, Any] = {"progress": progress, "progressToken": token}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.notify("notifications/progress", params)


class EraServer:
    """One stdio conversation: handshake-era once ``initialize`` came, else 2026-07-28."""

    name = "server"
    version = "0.1.0"
    instructions: str | None = None
    tools: ClassVar[list[dict[str, Any]]] = []
    capabilities: ClassVar[dict[str, Any]] = {
        "prompts": {"listChanged": False},
        "resources": {"listChanged": False, "subscribe": False},
        "tools": {"listChanged": False},
    }
    """Declared at ``initialize``; ``server/discover`` declares :attr:`modern_capabilities`."""
    modern_capabilities: ClassVar[dict[str, Any]] = {
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
    }

    def __init__(self) -> None:
        self._write = threading.Lock()
        self._calls: dict[Any, Call] = {}
        self._pending: dict[Any, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._asked_for: dict[Any, Any] = {}  # a pending request to the client -> its call's id
        self._next_id = 0
        self._streams: dict[Any, tuple[Call, dict[str, Any]]] = {}  # listen id -> call, honored
        self._open: dict[Any, None] = {}  # calls and listen streams, in the order they came
        self._closed = False
        self.initialized = False
        self.protocol_version: str | None = None
        self.client_capabilities: dict[str, Any] = {}

    @property
    def server_info(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    # -- writing -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":")) + "\n"
        with self._write:
            if self._closed:
                return
            sys.stdout.write(line)
            sys.stdout.flush()

    def answer(self, call: Call, result: dict[str, Any]) -> None:
        if call.modern:
            meta = {**(result.get("_meta") or {}), SERVER_INFO_KEY: self.server_info}
            result = {"resultType": "complete", **result, "_meta": meta}
        self.send({"jsonrpc": "2.0", "id": call.id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float = 60.0,
        related: Any = None,
    ) -> dict[str, Any]:
        """Send a request to the client and wait for its response's result."""
        with self._write:
            self._next_id += 1
            request_id = self._next_id
        done = threading.Event()
        box: list[dict[str, Any]] = []
        self._pending[request_id] = (done, box)
        if related is not None:
            self._asked_for[request_id] = related
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        self.send(message if params is None else {**message, "params": params})
        answered = done.wait(timeout)
        self._asked_for.pop(request_id, None)
        if not answered:
            self._pending.pop(request_id, None)
            raise RpcError(-32001, f"the client did not answer {method} in {timeout:g} s")
        response = box[0]
        if "error" in response:
            error = response["error"] if isinstance(response["error"], dict) else {}
            code, text = int(error.get("code", -32603)), str(error.get("message", ""))
            raise RpcError(code, text, error.get("data"))
        result = response.get("result")
        return result if isinstance(result, dict) else {}

    # -- reading -------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer stdin until it ends; then, as the SDK does, every request still open (a call
        still running, a listen stream) gets the error ``Connection closed``, in the order
        they came."""
        atexit.register(self._close_output)
        for message in messages():
            if "method" in message:
                self.dispatch(message)
            elif message.get("id") in self._pending:
                done, box = self._pending.pop(message["id"])
                box.append(message)
                done.set()
        for request_id in list(self._open):
            call = self._calls.get(request_id)
            if call is not None and not call.cancelled.is_set():
                call.cancelled.set()
            elif self._streams.pop(request_id, None) is None:
                continue
            self.error(request_id, -32000, "Connection closed")

    def _close_output(self) -> None:
        """At exit, before Python flushes stdout: no worker thread writes it any more (Python
        aborts if a daemon thread holds its lock then)."""
        with self._write:
            self._closed = True

    def dispatch(self, message: dict[str, Any]) -> None:
        method = message["method"]
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if "id" not in message:
            self.notification(method, params)
            return
        request_id = message["id"]
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and PROTOCOL_KEY in meta
        if method == "initialize":
            self.received(method, params)
            self._initialize(request_id, params)
            return
        if modern and self.initialized:  # one era per connection, as the SDK serves it
            self.error(request_id, -32600, HANDSHAKE_ONLY)
            return
        modern = modern and CAPABILITIES_KEY in meta  # type: ignore[operator]
        if not modern and (not self.initialized or method == "server/discover"):
            self.error(request_id, -32602, ENVELOPE_ERROR)
            return
        self.received(method, params)
        call = Call(self, request_id, params, modern)
        try:
            if method == "server/discover":
                result = {
                    **UNCACHEABLE,
                    "capabilities": self.modern_capabilities,
                    "supportedVersions": [MODERN],
                }
                if self.instructions:
                    result["instructions"] = self.instructions
                self.answer(call, result)
            elif method == "ping" and not modern:
                self.answer(call, {})
            elif method == "tools/list":
                self.answer(call, self._cacheable(call, self.list_tools(call)))
            elif method in ("prompts/list", "resources/list", "resources/templates/list"):
                self.answer(call, self._cacheable(call, self.handle(method, call)))
            elif method == "subscriptions/listen" and modern:
                self.listen(call)
            elif method == "tools/call":
                self._call(call)
            else:
                self.answer(call, self.handle(method, call))
        except RpcError as exc:
            self.error(request_id, exc.code, exc.message, exc.data)

    def _initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        requested = params.get("protocolVersion")
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        self.protocol_version = version
        result: dict[str, Any] = {"capabilities": self.capabilities}
        if self.instructions:
            result["instructions"] = self.instructions
        result.update(protocolVersion=version, serverInfo=self.server_info)
        self.initialized = True
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    @staticmethod
    def _cacheable(call: Call, result: dict[str, Any]) -> dict[str, Any]:
        return {**UNCACHEABLE, **result} if call.modern else result

    def notification(self, method: str, params: dict[str, Any]) -> None:
        """A notification from the client; ``notifications/cancelled`` cancels a call."""
        if method == "notifications/cancelled":
            call = self._calls.get(params.get("requestId"))
            if call is not None:
                call.cancelled.set()
                for asked, owner in list(self._asked_for.items()):
                    pending = self._pending.pop(asked, None) if owner == call.id else None
                    if pending is not None:  # the call's question to the client is void now
                        void = {"requestId": asked, "reason": "caller cancelled"}
                        call.notify("notifications/cancelled", void)
                        pending[1].append({"error": {"code": -32800, "message": "cancelled"}})
                        pending[0].set()
            self._streams.pop(params.get("requestId"), None)  # the stream ends unanswered

    def listen(self, call: Call) -> None:
        """``subscriptions/listen``: acknowledged with what it asked for that the SDK honours;
        the stream stays open until :meth:`end_listens`, a cancel or the end of stdin, and
        carries what :meth:`tools_changed` announces (a subclass may send more to
        :meth:`streams`)."""
        asked = call.params.get("notifications")
        uris = asked.get("resourceSubscriptions") if isinstance(asked, dict) else None
        if not isinstance(asked, dict) or not isinstance(uris, list | None):
            raise InvalidParams
        if not all(isinstance(uri, str) for uri in uris or ()):
            raise InvalidParams
        honored: dict[str, Any] = {key: True for key in LIST_CHANGED if asked.get(key)}
        if uris:
            honored["resourceSubscriptions"] = uris
        self._streams[call.id] = (call, honored)
        self._open[call.id] = None
        acknowledged = {"_meta": {SUBSCRIPTION_KEY: call.id}, "notifications": honored}
        call.notify("notifications/subscriptions/acknowledged", acknowledged)

    def tools_changed(self, call: Call) -> None:
        """Tell the client the tool list changed, as ``call``'s era expects: handshake era,
        ``notifications/tools/list_changed``; 2026-07-28, the same on every listen stream that
        asked for it (``toolsListChanged``), tagged with the stream's subscription id."""
        method = LIST_CHANGED["toolsListChanged"]
        if not call.modern:
            self.send({"jsonrpc": "2.0", "method": method})
            return
        for stream, honored in list(self._streams.values()):
            if honored.get("toolsListChanged"):
                stream.notify(method, {"_meta": {SUBSCRIPTION_KEY: stream.id}})

    def listening(self) -> int:
        """How many listen streams are open."""
        return len(self._streams)

    def streams(self) -> list[tuple[Call, dict[str, Any]]]:
        """The open listen streams, each with what it was acknowledged for."""
        return list(self._streams.values())

    def end_listens(self, error: RpcError | None = None) -> int:
        """End every open listen stream: with its final result (graceful), or with ``error``;
        how many there were."""
        streams = [stream for stream, _ in list(self._streams.values())]
        for stream in streams:
            self._streams.pop(stream.id, None)
            if error is None:
                self.answer(stream, {"_meta": {SUBSCRIPTION_KEY: stream.id}})
            else:
                self.error(stream.id, error.code, error.message, error.data)
        return len(streams)

    # -- what a subclass answers ---------------------------------------------------------

    def received(self, method: str, params: dict[str, Any]) -> None:
        """Each request let in (``initialize`` too; not one refused for its envelope), before
        it is answered, as the SDK's middleware sees it: nothing by default."""

    def list_tools(self, call: Call) -> dict[str, Any]:
        return {"tools": self.tools}

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        """Any other request; by default what ``MCPServer`` answers with no prompts and no
        resources: empty lists, and its errors for a prompt or resource it does not have."""
        empty = {"prompts/list": "prompts", "resources/list": "resources"}
        if method in empty or method == "resources/templates/list":
            return {empty.get(method, "resourceTemplates"): []}
        if method == "prompts/get":
            if call.modern:
                raise RpcError(-32603, "Internal server error")
            raise RpcError(0, f"Unknown prompt: {call.params.get('name')}")
        if method == "resources/read":
            uri = call.params.get("uri")
            raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
        raise MethodNotFound(method)

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        """A tool's result (in its own thread); ``RpcError`` answers with an error."""
        raise RpcError(-32602, f"Unknown tool: {name}")

    def known_tool(self, name: str) -> bool:
        return any(t.get("name") == name for t in self.tools)

    def _call(self, call: Call) -> None:
        name = call.params.get("name")
        arguments = call.params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict | None):
            raise InvalidParams  # (``"arguments": []`` too, falsy as it is)
        arguments = arguments or {}
        if not self.known_tool(name):
            self.answer(call, text_result(f"Unknown tool: {name}", is_error=True))
            return
        self._calls[call.id] = call
        self._open[call.id] = None

        def work() -> None:
            try:
                result = self.call_tool(name, arguments, call)
            except RpcError as exc:
                self._calls.pop(call.id, None)
                if not call.cancelled.is_set():
                    self.error(call.id, exc.code, exc.message, exc.data)
                return
            self._calls.pop(call.id, None)
            if not call.cancelled.is_set():
                self.answer(call, result)
            for then in call.after:
                then()

        threading.Thread(target=work, daemon=True).start()
