"""Bound the SDK's ``server/discover`` probe on stdio.

In ``mode="auto"`` the SDK first sends ``server/discover`` and waits up to 10 s for an answer
before falling back to ``initialize``. A server that silently ignores unknown methods makes
every start cost those 10 s. We cannot shorten the SDK's wait without touching its internals,
so this transport wrapper gives the probe positive evidence instead, decided by the order of
the server's answers and never by a clock:

right after the ``server/discover`` request it sends two requests of its own: one of a method
no server has (:data:`UNKNOWN_METHOD`), then a ``ping`` (allowed before initialization in every
protocol era). A server reads its input in order, so by the time the ping's answer arrives it
has dealt with both earlier requests:

- the unknown method was answered (an error, as JSON-RPC requires): the server answers what it
  does not know, so the probe's own answer is still coming, however slow (a 2026-07-28 server
  busy starting up): it is waited for, within the SDK's own timeout;
- the unknown method went unanswered: the server drops requests it does not know, and the
  silence on ``server/discover`` means the same. The wrapper answers the probe itself with
  ``-32601 Method not found`` at once, and the SDK falls back to ``initialize`` on the same
  connection.

Neither of our answers ever reaches the SDK.
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
"""The ``ping`` sent after the probe."""
UNKNOWN_METHOD = "codebot/no-such-method"
"""A method no server implements: whether it is answered tells how the server treats methods
it does not know (the hot path of :mod:`mcpbridge.calls.lite_wire` sends the same)."""
UNKNOWN_ID = "codebot-discover-unknown"


class _ProbeState:
    def __init__(self) -> None:
        self.discover_id: types.RequestId | None = None
        self.answered = False  # the probe got a real or synthesized answer
        self.synthesized = False
        self.sentinel_sent = False
        self.answers_unknown = False  # the unknown method was answered before the ping


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
            unknown = types.JSONRPCRequest(jsonrpc="2.0", id=UNKNOWN_ID, method=UNKNOWN_METHOD)
            await self._inner.send(SessionMessage(unknown))
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
    """Copy server messages to the SDK, swallowing the answers to our own two requests."""

    async def answer_probe() -> None:
        if state.answered or state.answers_unknown or state.discover_id is None:
            return  # answered, or its answer is still coming (the server answers everything)
        state.answered = state.synthesized = True
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=state.discover_id,
            error=types.ErrorData(
                code=types.METHOD_NOT_FOUND,
                message="the server drops requests it does not know: server/discover and "
                f"{UNKNOWN_METHOD} went unanswered, ping was answered",
            ),
        )
        await sink.send(SessionMessage(error))

    async with sink:
        async for item in source:
            if isinstance(item, SessionMessage):
                rid = _response_id(item.message)
                if rid == UNKNOWN_ID:
                    state.answers_unknown = True
                    continue
                if rid == SENTINEL_ID:
                    await answer_probe()
                    continue
                if state.discover_id is not None and rid == state.discover_id:
                    if state.synthesized:
                        continue  # a late real answer; the SDK already moved on
                    state.answered = True
            await sink.send(item)


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
