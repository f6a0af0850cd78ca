"""A 2026-07-28 result without ``resultType`` is a complete result (SEP-2322).

The spec says a client MUST assume ``resultType: "complete"`` when a result does not carry
one. mcp 2.3.0 validates every 2026-07-28 result against the schema, where the field is
required, and rejects such a result (a ``ValidationError`` for the call). We cannot change
the SDK's validation without touching its internals, so this transport wrapper applies the
spec's default before the SDK sees the message: it notes the ids of the requests sent at a
2026-07-28 version (their ``_meta`` names it), and a successful response to one of them that
has no ``resultType`` gets ``"complete"``. Nothing else is changed; handshake-era responses,
errors and any response with a ``resultType`` pass through as they came.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from codebot_mcp.mcpbridge._sdk import TransportStreams
from codebot_mcp.mcpbridge.transport.wire import PROTOCOL_VERSION_KEY

MAX_PENDING = 10_000
"""Request ids remembered; a request that never gets an answer must not grow memory."""


class _Pending:
    """Ids of the 2026-07-28 requests still waiting for their response (oldest first)."""

    def __init__(self) -> None:
        self.ids: OrderedDict[types.RequestId, None] = OrderedDict()

    def add(self, request_id: types.RequestId) -> None:
        self.ids[request_id] = None
        while len(self.ids) > MAX_PENDING:
            self.ids.popitem(last=False)

    def take(self, request_id: types.RequestId) -> bool:
        return self.ids.pop(request_id, False) is None


def _modern(message: types.JSONRPCRequest) -> bool:
    meta = (message.params or {}).get("_meta")
    return isinstance(meta, dict) and meta.get(PROTOCOL_VERSION_KEY) in MODERN_PROTOCOL_VERSIONS


class _Writer:
    """Forwards every message; remembers the ids of 2026-07-28 requests."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest) and _modern(message):
            self._pending.add(message.id)
        await self._inner.send(item)  # the sender's context is captured here, as before

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Writer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Reader:
    """Forwards every message; a 2026-07-28 result without ``resultType`` gets "complete"."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the SDK's context-carrying streams)."""
        return getattr(self._inner, "last_context", None)

    def _fix(self, item: Any) -> Any:
        if not isinstance(item, SessionMessage):
            return item
        message = item.message
        if isinstance(message, types.JSONRPCError):
            if message.id is not None:
                self._pending.take(message.id)
        elif isinstance(message, types.JSONRPCResponse) and self._pending.take(message.id):
            if "resultType" not in message.result:
                result = {**message.result, "resultType": "complete"}
                fixed = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
                return SessionMessage(fixed, metadata=item.metadata)
        return item

    async def receive(self) -> Any:
        return self._fix(await self._inner.receive())

    def __aiter__(self) -> _Reader:
        return self

    async def __anext__(self) -> Any:
        return self._fix(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Reader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def default_result_type(streams: TransportStreams) -> TransportStreams:
    """The transport's streams, with the spec's default ``resultType`` applied."""
    read, write = streams
    pending = _Pending()
    return _Reader(read, pending), _Writer(write, pending)  # type: ignore[return-value]
