"""Bound the SDK's ``server/discover`` probe on stdio.

In ``mode="auto"`` the SDK first sends ``server/discover`` and waits up to 10 s for an answer
before falling back to ``initialize``. A server that silently ignores unknown methods makes
every start cost those 10 s. We cannot shorten the SDK's wait without touching its internals,
so this transport wrapper gives the probe positive evidence instead:

right after the ``server/discover`` request it sends a ``ping`` of its own (pings are allowed
before initialization in every protocol era). When the ping's answer arrives and the probe's
has not, the server is alive and ignored the probe: after a short grace period the wrapper
answers the probe itself with ``-32601 Method not found``, and the SDK falls back to
``initialize`` on the same connection at once. The ping's answer never reaches the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from codebot_mcp.mcpbridge._sdk import Transport, TransportStreams

DISCOVER_METHOD = "server/discover"
SENTINEL_ID = "codebot-discover-sentinel"
GRACE_SECONDS = 0.5
"""After the ping is answered, how long the probe may still take before we answer it."""


class _ProbeState:
    def __init__(self) -> None:
        self.discover_id: types.RequestId | None = None
        self.answered = False  # the probe got a real or synthesized answer
        self.synthesized = False
        self.sentinel_sent = False


class _GuardedWriter:
    """Forwards messages; sends the sentinel ping right after the discover probe."""

    def __init__(self, inner: Any, state: _ProbeState) -> None:
        self._inner = inner
        self._state = state

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        message = item.message
        state = self._state
        if (
            not state.sentinel_sent
            and isinstance(message, types.JSONRPCRequest)
            and message.method == DISCOVER_METHOD
        ):
            state.discover_id = message.id
            state.sentinel_sent = True
            ping = types.JSONRPCRequest(jsonrpc="2.0", id=SENTINEL_ID, method="ping")
            await self._inner.send(SessionMessage(ping))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _GuardedWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _response_id(message: types.JSONRPCMessage) -> types.RequestId | None:
    if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        return message.id
    return None


async def _pump(
    source: Any,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    state: _ProbeState,
) -> None:
    """Copy server messages to the SDK, swallowing the sentinel's answer."""

    async def answer_probe_later() -> None:
        await anyio.sleep(GRACE_SECONDS)
        if state.answered or state.discover_id is None:
            return
        state.answered = state.synthesized = True
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=state.discover_id,
            error=types.ErrorData(
                code=types.METHOD_NOT_FOUND,
                message="server/discover went unanswered while ping was answered",
            ),
        )
        await sink.send(SessionMessage(error))

    async with sink, anyio.create_task_group() as tg:
        async for item in source:
            if isinstance(item, SessionMessage):
                rid = _response_id(item.message)
                if rid == SENTINEL_ID:
                    if not state.answered:
                        tg.start_soon(answer_probe_later)
                    continue
                if state.discover_id is not None and rid == state.discover_id:
                    if state.synthesized:
                        continue  # a late real answer; the SDK already moved on
                    state.answered = True
            await sink.send(item)
        tg.cancel_scope.cancel()


@asynccontextmanager
async def guard_discover(transport: Transport) -> AsyncIterator[TransportStreams]:
    """Wrap a stdio transport so an ignored ``server/discover`` costs milliseconds, not 10 s."""
    state = _ProbeState()
    send: MemoryObjectSendStream[SessionMessage | Exception]
    receive: MemoryObjectReceiveStream[SessionMessage | Exception]
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    async with transport as (read, write), anyio.create_task_group() as tg:
        tg.start_soon(_pump, read, send, state)
        try:
            async with receive:
                yield receive, _GuardedWriter(write, state)
        finally:
            tg.cancel_scope.cancel()
