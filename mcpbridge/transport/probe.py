"""Bound the SDK's ``server/discover`` probe on stdio.

In ``mode="auto"`` the SDK first sends ``server/discover`` and waits up to 10 s for an answer
before falling back to ``initialize``. A server that silently ignores unknown methods makes
every start cost those 10 s. We cannot shorten the SDK's wait without touching its internals,
so this transport wrapper gives the probe positive evidence instead, decided by the order of
the server's answers and never by a clock: :class:`.wire.EraProbe`, the rule the hot path
(:mod:`mcpbridge.calls.lite_wire`) follows too. Right after the ``server/discover`` request it
sends the probe's two requests of its own; when the server turns out to drop requests it does
not know, it answers the probe itself with ``-32601 Method not found`` at once, and the SDK
falls back to ``initialize`` on the same connection.

Neither answer to our own two requests ever reaches the SDK.

:func:`replay_initialize` is the other wrapper here: a handshake-era server the hot path
(:mod:`mcpbridge.calls.lite`) initialized and handed over gets no second ``initialize``; the
SDK's is answered with the server's own answer, as it came.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from codebot_mcp.mcpbridge._sdk import Transport, TransportStreams
from codebot_mcp.mcpbridge.transport import wire
from codebot_mcp.mcpbridge.transport.process import Initialized
from codebot_mcp.mcpbridge.transport.wire import DISCOVER_METHOD, EraProbe


def _message(data: dict[str, Any]) -> SessionMessage:
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))


class _GuardedWriter:
    """Forwards messages; sends the probe's two requests right after ``server/discover``."""

    def __init__(self, inner: Any, probe: EraProbe) -> None:
        self._inner = inner
        self._probe = probe
        self._sent = False

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        message = item.message
        if (
            not self._sent
            and isinstance(message, types.JSONRPCRequest)
            and message.method == DISCOVER_METHOD
        ):
            self._sent = True
            for request in self._probe.sent(message.id):
                await self._inner.send(_message(request))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _GuardedWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _pump(
    source: Any,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    probe: EraProbe,
) -> None:
    """Copy server messages to the SDK, as the probe's verdict on each answer says."""
    async with sink:
        async for item in source:
            if isinstance(item, SessionMessage):
                message = item.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    verdict = probe.seen(message.id)
                    if verdict == "answer_probe":
                        await sink.send(_message(probe.ignored_answer()))
                    if verdict != "pass":
                        continue
            await sink.send(item)


@asynccontextmanager
async def guard_discover(transport: Transport) -> AsyncIterator[TransportStreams]:
    """Wrap a stdio transport so an ignored ``server/discover`` costs milliseconds, not 10 s."""
    probe = EraProbe()
    send: MemoryObjectSendStream[SessionMessage | Exception]
    receive: MemoryObjectReceiveStream[SessionMessage | Exception]
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    async with transport as (read, write), anyio.create_task_group() as tg:
        tg.start_soon(_pump, read, send, probe)
        try:
            async with receive:
                yield receive, _GuardedWriter(write, probe)
        finally:
            tg.cancel_scope.cancel()


class _ReplayWriter:
    """Answers the SDK's first ``initialize`` with the recorded answer instead of sending it;
    drops its ``notifications/initialized`` when the hot path sent one already."""

    def __init__(self, inner: Any, reading: MemoryObjectSendStream[Any], done: Initialized) -> None:
        self._inner = inner
        self._reading = reading
        """The read side's sender: a clone carries the one replayed answer, then closes (the
        end of the server's stdout still ends the SDK's reading)."""
        self._done = done
        self._answered = False
        self._notified = done.notified

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if (
            not self._answered
            and isinstance(message, types.JSONRPCRequest)
            and message.method == "initialize"
        ):
            self._answered = True
            kept = {k: v for k, v in self._done.answer.items() if k in ("result", "error")}
            answer = {"jsonrpc": "2.0", "id": message.id, **kept}
            try:
                replayed = _message(answer)
            except ValueError:  # as the stdio transport answers a line it cannot read
                replayed = _message(wire.error_answer(message.id, wire.UNREADABLE))
            with suppress(anyio.ClosedResourceError):  # stdout ended already: so be it
                async with self._reading.clone() as inject:
                    await inject.send(replayed)
            return
        if (
            self._notified
            and isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/initialized"
        ):
            self._notified = False
            return
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ReplayWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _forward(source: Any, sink: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
    async with sink:
        async for item in source:
            await sink.send(item)


@asynccontextmanager
async def replay_initialize(
    transport: Transport, done: Initialized
) -> AsyncIterator[TransportStreams]:
    """Wrap a stdio transport whose server was initialized already (see the module)."""
    send: MemoryObjectSendStream[SessionMessage | Exception]
    receive: MemoryObjectReceiveStream[SessionMessage | Exception]
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    async with transport as (read, write), anyio.create_task_group() as tg:
        writer = _ReplayWriter(write, send, done)
        tg.start_soon(_forward, read, send)
        try:
            async with receive:
                yield receive, writer
        finally:
            tg.cancel_scope.cancel()
